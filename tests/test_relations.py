from datetime import UTC, datetime

from conftest import seed_reports
from pr_factory import REPO, make_pr

from store.db import open_db
from store.migrations import migrations
from store.model import Summary
from store.tables.prs import save_pr
from store.understanding.relations import Relation, extract_relations, related, revert_title


def _summary(what: str, impact: str = "", risks: str = "", insights: str = "") -> Summary:
    return Summary(what, impact, risks, insights, "imported")


def _kinds(pr) -> dict[int, str]:
    return {rel.target: rel.kind for rel in extract_relations(pr)}


def test_revert_titles():
    assert revert_title('Revert "[Core] Faster batching (#101)"') == ("[Core] Faster batching", 101)
    assert revert_title('Revert "[Core] Faster batching"') == ("[Core] Faster batching", None)
    # Written by hand, the number may follow the quotes; a body may say it "backs out" the PR.
    assert revert_title('Revert "[Core] Faster batching" (#101)') == ("[Core] Faster batching", 101)
    assert _kinds(make_pr(201, "[Core] Undo the batching change", body="This backs out #101.")) == {101: "reverts"}
    assert revert_title("[Core] Revert to the old allocator") is None
    assert _kinds(make_pr(200, 'Revert "[Core] Faster batching (#101)"')) == {101: "reverts"}
    assert _kinds(make_pr(201, "Revert #150")) == {150: "reverts"}
    assert _kinds(make_pr(202, "Reverts PR 151 because it broke nightly")) == {151: "reverts"}


def test_cues_in_bodies_and_summaries():
    pr = make_pr(
        300,
        "[Bugfix] Restore the warmup step",
        body="Fixes a regression from #120. Follow-up to #121; see also #122.\n"
        "Reverts acme/engine#123 partially. Tracked in other-org/tool#124.",
        summary=_summary(
            "The warmup step broken by #125 runs again.",
            impact="Builds on https://github.com/acme/engine/pull/126 and https://github.com/else/where/pull/127.",
        ),
    )
    assert _kinds(pr) == {120: "fixes", 121: "follows", 122: "mentions", 123: "reverts", 125: "fixes", 126: "follows"}


def test_a_fix_names_what_broke_and_a_reland_the_revert_it_undoes():
    # A fix that tells when the bug came in names the PR that brought it; another PR saying so only mentions it.
    fix = make_pr(301, "[Bugfix] Keep single-frame clips", summary=_summary("Since #130 added timestamps, one frame failed."))
    assert _kinds(fix) == {130: "fixes"}
    told = make_pr(302, "[Core] Add a cache", summary=_summary("Since #130 added timestamps, caching them is cheap."))
    assert _kinds(told) == {130: "mentions"}
    # One that names its regression outright only mentions the PR whose code it tells of.
    named = make_pr(304, "[Bugfix] Fix a hang", summary=_summary("Fixes a regression from #140. The check added in #130 "
                                                                "ran only on the synchronous path."))
    assert _kinds(named) == {140: "fixes", 130: "mentions"}
    # A reland that names the revert of what it brings back follows up on that revert, its title a reland or not.
    reland = make_pr(303, "[Kernel] Fused MoE strides, take two",
                     summary=_summary("This relands the stride fix that was reverted in #131, where it was slow."))
    assert _kinds(reland) == {131: "follows"}


def test_strongest_kind_wins_and_noise_is_ignored():
    pr = make_pr(
        400,
        "Revert #130",
        body="<!-- Link the PR this reverts, e.g. #999 -->\nMentioned #130 before.\n```\ngit revert #998\n```\nFollow up on #400 itself.",
    )
    assert extract_relations(pr) == [Relation(400, 130, "reverts")]


def test_save_pr_records_and_replaces_relations(db):
    save_pr(db, make_pr(10, "[Core] Faster batching"))
    save_pr(db, make_pr(11, "[Core] Tune batching", body="Follow-up to #10."))
    assert [(link.other, link.kind, link.outgoing) for link in related(db, REPO, 10)] == [(11, "follows", False)]
    save_pr(db, make_pr(11, "[Core] Tune batching", body="Unrelated now."))
    assert related(db, REPO, 10) == []
    assert related(db, REPO, 11) == []


def test_revert_by_title_in_either_order(db):
    # The revert first (reports imported out of order), then the PR it reverts.
    save_pr(db, make_pr(21, 'Revert "[Core] Faster batching"'))
    save_pr(db, make_pr(20, "[Core] Faster batching"))
    assert [(link.other, link.kind) for link in related(db, REPO, 20)] == [(21, "reverts")]
    # Saving the revert again finds the original by title.
    save_pr(db, make_pr(21, 'Revert "[Core] Faster batching"'))
    link = related(db, REPO, 21)[0]
    assert (link.other, link.kind, link.outgoing) == (20, "reverts", True)
    assert link.sentence() == "[#21] reverts [#20]"


def test_related_orders_strongest_first(db):
    save_pr(db, make_pr(30, "[Core] Base change"))
    save_pr(db, make_pr(31, "[Doc] Explain the base change", body="Mentions #30."))
    save_pr(db, make_pr(32, "Revert #30"))
    save_pr(db, make_pr(33, "[Bugfix] Fix crash introduced by #30"))
    assert [(link.other, link.kind) for link in related(db, REPO, 30)] == [(32, "reverts"), (33, "fixes"), (31, "mentions")]


def test_migration_backfills_relations(isolated_env):
    db = open_db(isolated_env)
    db.close()
    # Rebuild a store as it was before the relations table existed, with PRs in it.
    path = isolated_env.parent / "old.db"
    from sqlite_utils import Database

    old = Database(path)
    migrations.apply(old, stop_before="m004_search")
    assert "pr_relations" not in old.table_names()
    old["prs"].insert(
        {
            "repo": REPO, "number": 41, "title": "Revert #40", "url": "u", "author": "a",
            "merged_at": datetime(2026, 3, 1, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "type": "substantial",
        }
    )
    old.close()
    upgraded = open_db(path)
    assert [(link.other, link.kind) for link in related(upgraded, REPO, 40)] == [(41, "reverts")]


def test_seed_reports_relate_reverts_and_regressions(run_cli, db):
    assert run_cli("import", *map(str, seed_reports())).code == 0
    repo = "vllm-project/vllm"
    reverted = [(link.other, link.kind) for link in related(db, repo, 34208)]
    assert reverted[0] == (34216, "reverts")
    fixed = [(link.other, link.kind) for link in related(db, repo, 32993)]
    assert (34543, "fixes") in fixed
    # Both directions: the fix names the PR it repairs.
    assert (32993, "fixes") in [(link.other, link.kind) for link in related(db, repo, 34543)]


def test_crafted_text_cannot_stall_extraction(hang_guard):
    for body in ("a" * 200_000 + " #", "PR" + " " * 200_000 + "x", "revert " + "the " * 50_000 + "#x",
                 "x/" * 100_000, "```" * 30_000 + "#5", "<!--" * 40_000, "#" * 200_000):
        extract_relations(make_pr(1, 'Revert "' + '"' * 10_000, body=body, summary=_summary(body)))
