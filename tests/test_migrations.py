"""Migrations run in the order their names give, and a store of every released schema opens fully migrated."""
from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from pr_factory import make_pr
from sqlite_utils import Database

from store.db import open_db
from store.migrations import RELEASED_NAMES, migrations
from store.tables.posts import get_post
from store.tables.subscriptions import channel_subscriptions
from store.tables.teams import NO_TEAM
from store.understanding.relations import READER_VERSION, related

REPO = "vllm-project/vllm"
ORDER = [
    "m001_initial",
    "m002_slack",
    "m003_github_updated_at",
    "m004_search",
    "m005_model_summaries",
    "m006_merge_time_ids",
    "m007_post_claims",
    "m008_model_replies",
    "m009_live_alerts",
    "m010_link_previews",
    "m011_answer_feedback",
    "m012_shared_replies",
    "m013_subscription_filters",
    "m014_signed_requests",
    "m015_releases",
    "m016_release_posts",
    "m017_thread_turn_answers",
    "m018_reply_cache",
    "m019_teams",
]
# Released stores recorded the names of their day; m080 read relations again, which the reader's version now does.
RELEASED_ORDER = [
    "m001_initial", "m040_slack", "m010_github_updated_at", "m030_search", "m020_model_summaries",
    "m070_merge_time_ids", "m080_relations_read_again", "m060_post_claims", "m050_model_replies", "m090_live_alerts",
]


def names() -> list[str]:
    return [migration.name for migration in migrations.pending(Database(memory=True))]


def test_names_are_numbered_in_the_order_they_run():
    assert names() == ORDER == sorted(ORDER)


def test_every_released_name_maps_to_a_migration_of_today():
    assert set(RELEASED_NAMES.values()) <= set(ORDER)
    released = [RELEASED_NAMES.get(name, name) for name in RELEASED_ORDER if name != "m080_relations_read_again"]
    assert released == ORDER[: len(released)]  # the ones since are not released yet


def released_store(path: Path, applied: int) -> None:
    """A store as a release left it: the first `applied` migrations, recorded under their released names."""
    db = Database(path)
    released = RELEASED_ORDER[:applied]
    today = [RELEASED_NAMES.get(name, name) for name in released if name != "m080_relations_read_again"]
    if today:
        migrations.apply(db, stop_before=ORDER[len(today)] if len(today) < len(ORDER) else None)
        db.execute(f"delete from {migrations.migrations_table}")
        for name in released:
            db[migrations.migrations_table].insert({"migration_set": migrations.name, "name": name, "applied_at": "2026-01-01"})
        db["prs"].insert(
            {
                "id": 1, "repo": REPO, "number": 41, "title": "Revert #40", "url": "https://github.com/vllm-project/vllm/pull/41",
                "author": "a", "merged_at": datetime(2026, 3, 1, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "type": "substantial",
            }
        )
    db.close()


@pytest.mark.parametrize("applied", range(len(RELEASED_ORDER) + 1))
def test_a_store_of_every_released_schema_opens_fully_migrated(tmp_path, applied):
    path = tmp_path / "old.db"
    released_store(path, applied)
    db = open_db(path)
    recorded = [row["name"] for row in db[migrations.migrations_table].rows_where("migration_set = ?", [migrations.name])]
    assert [name for name in recorded if name in ORDER] == ORDER
    assert migrations.pending(db) == []
    assert db.execute("pragma user_version").fetchone()[0] == READER_VERSION
    if applied:
        assert [pr["number"] for pr in db["prs"].rows] == [41]
        assert [(link.other, link.kind) for link in related(db, REPO, 40)] == [(41, "reverts")]
    # Opening again migrates nothing and reads nothing again.
    db.close()
    again = open_db(path)
    assert again.execute("pragma user_version").fetchone()[0] == READER_VERSION
    assert migrations.pending(again) == []


def test_a_new_reader_reads_every_pr_again_once(tmp_path, monkeypatch):
    path = tmp_path / "s.db"
    released_store(path, len(RELEASED_ORDER))
    open_db(path).close()
    db = Database(path)
    db.execute("delete from pr_relations")
    db.conn.commit()
    db.close()
    monkeypatch.setattr("store.db.READER_VERSION", READER_VERSION + 1)
    upgraded = open_db(path)
    assert [(link.other, link.kind) for link in related(upgraded, REPO, 40)] == [(41, "reverts")]
    assert upgraded.execute("pragma user_version").fetchone()[0] == READER_VERSION + 1


def test_area_subscriptions_and_their_posts_become_filters_of_the_same_meaning(tmp_path):
    path = tmp_path / "areas.db"
    old = Database(path)
    migrations.apply(old, stop_before="m013_subscription_filters")
    when = "2026-03-01T17:00:00Z"
    old["subscriptions"].insert_all([
        {"channel": "C1", "repo": REPO, "mode": "daily", "areas": '["rocm", "nvidia"]', "post_at": "08:30",
         "created_by": "U1", "created_at": when},
        {"channel": "C1", "repo": REPO, "mode": "live", "areas": "[]", "post_at": "09:00", "created_by": None,
         "created_at": when},
    ])
    post = {"channel": "C1", "repo": REPO, "messages": "[]", "replies_sent": 0, "state": "done", "created_at": when,
            "updated_at": when}
    old["daily_posts"].insert_all([{**post, "date": "2026-03-04", "areas": '["rocm", "nvidia"]', "batch": 0},
                                   {**post, "date": "2026-03-04", "areas": "[]", "batch": 1}])
    old["live_alerts"].insert({"channel": "C1", "repo": REPO, "number": 7, "date": "2026-03-04", "batch": 1, "areas": "[]"})
    old.close()

    db = open_db(path)
    daily, live = channel_subscriptions(db, NO_TEAM, "C1")
    assert (daily.filter.text, daily.cadence.text, live.filter.text, live.cadence.text) == (
        "rocm nvidia", "daily at 08:30", "", "live")
    kept = [pr.number for pr in daily.filter.select([
        make_pr(1, areas=["rocm"]), make_pr(2, areas=["core"]), make_pr(3, areas=["nvidia", "core"])])]
    assert kept == [1, 3]  # a PR in one of the areas, as before
    # The posts already sent stay found, so nothing is posted again after the upgrade.
    assert get_post(db, "C1", REPO, date(2026, 3, 4), "rocm nvidia").state == "done"
    assert get_post(db, "C1", REPO, date(2026, 3, 4), "", batch=1, kind="live").state == "done"
    assert db.execute("select kind, number from live_alerts").fetchall() == [("live", 7)]
    db.close()
