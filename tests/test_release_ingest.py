"""`prdigest ingest` reads releases too: each release's range mapped to exactly the PRs it names, once."""
from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
import release_repo
from conftest import LA
from freezegun import freeze_time
from release_repo import REPO, START, TOKEN
from servers.github_api import FakeGitHub, Fault

from bot.config import Settings
from bot.runtime import Runtime
from bot.slack.daily import repo_ingester
from store.tables.releases import shipped_in
from store.understanding.releases import commit_prs


@pytest.fixture
def line(monkeypatch):
    with FakeGitHub(token=TOKEN) as github:
        built = release_repo.build(github, REPO, START)
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", github.url)
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_POLL_MINUTES", "10")  # a release line is polled as serve polls
        yield github, built


def days(built: release_repo.ReleaseRepo) -> tuple[str, str]:
    merged = [pull.merged_at for pull in built.pulls]
    return min(merged).astimezone(LA).date().isoformat(), max(merged).astimezone(LA).date().isoformat()


def ingest(run_cli, built, *more: str):
    first, last = days(built)
    return run_cli("ingest", "--since", first, "--until", last, *more)


def ranges(db) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for tag, number in db.execute("select tag, number from release_prs where repo = ? order by tag, number", [REPO]):
        found.setdefault(tag, []).append(number)
    return found


def releases(db) -> dict[str, tuple[bool, str | None, bool]]:
    """tag -> (prerelease, previous tag, mapped)"""
    rows = db.execute("select tag, prerelease, previous_tag, mapped_at is not null from releases where repo = ?", [REPO])
    return {tag: (bool(pre), previous, bool(mapped)) for tag, pre, previous, mapped in rows}


def compares(github, spec: str) -> int:
    """Requests for the compare of exactly `spec`, every page."""
    return sum(1 for seen in github.seen if seen.path == f"/repos/{REPO}/compare/{spec}")


def first_releases(db, built) -> dict[int, str | None]:
    shipped = shipped_in(db, REPO, [pull.number for pull in built.pulls])
    return {pull.number: (shipped[pull.number][0].tag if pull.number in shipped else None) for pull in built.pulls}


@pytest.mark.parametrize("token", [None, TOKEN], ids=["rest", "graphql"])
def test_every_release_maps_to_exactly_the_prs_its_range_names(run_cli, db, line, token, monkeypatch):
    github, built = line
    if token:
        monkeypatch.setenv("GITHUB_TOKEN", token)
    assert len(built.pulls) >= 300
    result = ingest(run_cli, built)
    assert result.code == 0, result.err
    assert "acme/engine: 5 new releases; mapped v0.3.0 (102 PRs since v0.2.0), v0.2.0 (102 PRs since v0.1.1)," in result.out
    assert "v0.1.0 (102 PRs since the first commit)" in result.out

    assert ranges(db) == built.ranges
    assert releases(db) == {tag: (tag == "v0.2.0rc1", built.previous[tag], True) for tag in built.ranges}
    assert built.draft not in releases(db)  # a draft is never stored
    assert first_releases(db, built) == {pull.number: built.first_release(pull.number) for pull in built.pulls}
    # A fix cherry-picked onto the v0.1 branch is a commit with a new SHA; its number still names it, in the
    # patch that shipped it first and again in the next minor release's range from main.
    picked = [number for number, branch in built.cherry_picked.items() if branch == "releases/v0.1"]
    main_shas = {commit.sha for commit in built.history.main}
    for number in picked:
        merged = next(c for c in built.history.main if commit_prs(c.message) == [number])
        copies = [c for c in github.tags[REPO]["v0.1.1"] if c.message.startswith(merged.message + "\n")]
        assert len(copies) == 1 and copies[0].sha not in main_shas
        assert number in built.ranges["v0.2.0"]
    assert {first_releases(db, built)[number] for number in picked} == {"v0.1.0", "v0.1.1"}
    # v0.2.0's range (103 commits) came in two pages; the first release's whole history too.
    assert compares(github, "v0.1.1...v0.2.0") == 2
    assert github.count("/commits") == 2


def test_a_new_release_maps_only_its_own_range(run_cli, db, line):
    github, built = line
    assert ingest(run_cli, built).code == 0
    before = ranges(db)
    github.seen.clear()
    again = ingest(run_cli, built)
    assert again.code == 0 and "acme/engine: 0 new releases (1 GitHub request)" in again.out
    assert github.count("/compare/") == github.count("/commits") == 0 and github.count("/releases") == 1

    # The draft is published, as main stands now.
    published = built.publish_draft(github, max(pull.merged_at for pull in built.pulls) + timedelta(hours=1))
    github.seen.clear()
    third = ingest(run_cli, built)
    assert third.code == 0, third.err
    assert f"1 new release; mapped {built.draft} ({len(published)} PRs since v0.3.0)" in third.out
    assert [seen.path for seen in github.seen if "/compare/" in seen.path] == [
        f"/repos/{REPO}/compare/v0.3.0...{built.draft}"
    ]
    assert ranges(db) == {**before, built.draft: published}
    # The fixes cherry-picked into v0.3.0 were shipped by it first, though v0.4.0's range names them again.
    firsts = first_releases(db, built)
    assert {firsts[n] for n, branch in built.cherry_picked.items() if branch == "releases/v0.3"} == {"v0.3.0"}
    assert {firsts[n] for n in built.unreleased if n not in built.cherry_picked} == {built.draft}


def test_5xx_mid_page_and_rate_limits_are_waited_out(run_cli, db, line):
    github, built = line
    github.fail(Fault(502), match="/compare/v0.1.1...v0.2.0?per_page=100&page=2", times=2)
    github.fail(Fault(403, {"Retry-After": "1"}, "You have exceeded a secondary rate limit."), match="/releases")
    reset = str(int(time.time()) + 2)
    limited = Fault(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}, "API rate limit exceeded")
    github.fail(limited, match="/compare/v0.2.0...v0.3.0?per_page=100&page=2")
    result = ingest(run_cli, built)
    assert result.code == 0, result.err
    assert ranges(db) == built.ranges
    assert compares(github, "v0.1.1...v0.2.0") == 4  # page 2 twice more
    for tag, numbers in built.ranges.items():
        drafted = run_cli("release-notes", tag, "--format", "json")
        assert drafted.code == 0, drafted.err
        assert sorted(pr["number"] for pr in json.loads(drafted.out)["prs"]) == numbers


def test_a_failure_midway_maps_nothing_of_that_release_and_the_next_run_finishes(run_cli, db, line, monkeypatch):
    github, built = line
    monkeypatch.setenv("PRDIGEST_GITHUB_MAX_WAIT", "5")
    far = Fault(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 3600)},
                "API rate limit exceeded")
    github.fail(far, match="/compare/v0.1.1...v0.2.0?per_page=100&page=2")
    result = ingest(run_cli, built)
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1
    assert result.err.startswith("prdigest: error: acme/engine: release v0.2.0: GET /repos/acme/engine/compare/")
    assert "rate limit (core) exhausted until" in result.err
    assert result.err.rstrip().endswith("1 of 5 releases mapped, run again to continue")
    assert ranges(db) == {"v0.3.0": built.ranges["v0.3.0"]}  # nothing of v0.2.0's first page
    assert releases(db)["v0.2.0"] == (False, None, False)

    lasting = Fault(503, message="Service Unavailable")
    github.fail(lasting, match="/compare/v0.1.1...v0.2.0?per_page=100&page=2", times=5)
    monkeypatch.setenv("PRDIGEST_GITHUB_MAX_WAIT", "900")
    again = ingest(run_cli, built)
    assert again.code == 1 and "gave up after 5 attempts, last 503" in again.err
    assert set(ranges(db)) == {"v0.3.0"}

    finished = ingest(run_cli, built)
    assert finished.code == 0, finished.err
    assert ranges(db) == built.ranges


def test_an_unknown_tag_is_skipped_and_the_others_map(run_cli, db, line):
    github, built = line
    del github.tags[REPO]["v0.1.1"]  # deleted on GitHub after it was released
    result = ingest(run_cli, built)
    assert result.code == 0, result.err
    assert "; v0.1.1 not mapped (GET /repos/acme/engine/compare/v0.1.0...v0.1.1: 404 Not Found)" in result.out
    assert set(ranges(db)) == set(built.ranges) - {"v0.1.1", "v0.2.0", "v0.2.0rc1"}  # they start from it
    assert ranges(db)["v0.3.0"] == built.ranges["v0.3.0"]


def test_only_releases_that_can_hold_a_stored_pr_are_mapped(run_cli, db, line):
    github, built = line
    last = max(pull.merged_at for pull in built.pulls).astimezone(LA).date().isoformat()
    since = (built.published["v0.3.0"] - timedelta(days=1)).astimezone(LA).date().isoformat()
    result = run_cli("ingest", "--since", since, "--until", last)
    assert result.code == 0, result.err
    assert set(ranges(db)) == {"v0.3.0"} and len(releases(db)) == 5
    assert github.count("/compare/") == 2 and github.count("/commits") == 0


def test_serves_polling_reads_releases_too(db, line):
    _, built = line
    polled = max(pull.merged_at for pull in built.pulls) + timedelta(hours=3)
    runtime = Runtime(Settings.from_env())
    ingest_now = repo_ingester(runtime)
    assert ingest_now is not None
    with freeze_time(polled):  # a first poll covers yesterday and today: the last release of the line
        ingest_now(REPO)
    runtime.close()
    assert ranges(db) == {"v0.3.0": built.ranges["v0.3.0"]}


def test_a_listing_cut_short_maps_nothing_it_cannot_place_and_the_next_run_finishes(run_cli, db, line, monkeypatch):
    _, built = line
    monkeypatch.setattr("store.sources.github.LIST_PAGE", 2)  # two releases a page (the draft's page holds one)
    monkeypatch.setattr("store.sources.github.RELEASE_PAGES", 1)
    cut = ingest(run_cli, built)
    assert cut.code == 0, cut.err
    assert "GitHub offered more than 1 pages; the oldest releases are left unlisted" in cut.err
    assert set(releases(db)) == {"v0.3.0"} and ranges(db) == {}  # its previous release is not known yet
    monkeypatch.setattr("store.sources.github.RELEASE_PAGES", 20)
    assert ingest(run_cli, built).code == 0
    assert ranges(db) == built.ranges


def test_a_range_past_the_pages_read_or_of_no_known_shape_is_left_for_the_next_run(run_cli, db, line, monkeypatch):
    github, built = line
    monkeypatch.setattr("store.sources.github.RANGE_PAGES", 1)  # a range of 100 commits at most
    malformed = Fault(200, payload={"total_commits": 1, "commits": {"sha": "not a list"}})
    github.fail(malformed, match="/compare/v0.1.0...v0.1.1")
    result = ingest(run_cli, built)
    assert result.code == 0, result.err
    assert "v0.3.0 not mapped (GET /repos/acme/engine/compare/v0.2.0...v0.3.0: GitHub offered more than 1 pages:" in result.out
    assert "v0.2.0...v0.3.0 is longer than 100 commits and is not mapped)" in result.out
    assert "v0.1.1 not mapped (unexpected answer from GitHub about acme/engine v0.1.0...v0.1.1: TypeError" in result.out
    assert ranges(db) == {"v0.2.0rc1": built.ranges["v0.2.0rc1"]}  # exactly 100 commits: one page
    monkeypatch.setattr("store.sources.github.RANGE_PAGES", 100)
    assert ingest(run_cli, built).code == 0
    assert ranges(db) == built.ranges


def test_a_next_page_on_another_origin_is_not_followed(run_cli, db, line):
    github, built = line
    page = {"total_commits": 103, "commits": [], "status": "ahead"}
    elsewhere = Fault(200, {"Link": '<https://elsewhere.example/repos/acme/engine/compare?page=2>; rel="next"'},
                      payload=page)
    github.fail(elsewhere, match="/compare/v0.1.1...v0.2.0?")
    result = ingest(run_cli, built)
    assert result.code == 0, result.err
    assert "v0.2.0 not mapped (" in result.out and "elsewhere.example" in result.out
    assert "v0.2.0" not in ranges(db) and ranges(db)["v0.3.0"] == built.ranges["v0.3.0"]
