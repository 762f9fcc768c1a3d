"""GitHub's answers, bounded: pagination stops at GitHub's own limits. Through the real CLI and httpx against the
loopback GitHub."""
from __future__ import annotations

from datetime import date

import pytest
from conftest import LA
from servers.github_api import FakeGitHub, FakePull, Fault, day_of_pulls

from store.days import day_bounds
from store.sources.github import FILES_LIMIT, GitHubClient, GitHubError
from store.tables.prs import get_pr

REPO = "acme/engine"
DAY = date(2026, 3, 7)
START, END = day_bounds(DAY, LA)
SINCE = ("--since", "2026-03-07", "--until", "2026-03-07")
TOKEN = "good-token"
# A server that always offers another page answers this many times; past that, the listing ends. A client that
# follows every page makes them all, one that stops makes a handful.
ENDLESS = 2000


@pytest.fixture
def github(monkeypatch):
    pulls = day_of_pulls(DAY, 12, LA) + day_of_pulls(date(2026, 3, 6), 3, LA, first_number=900)
    with FakeGitHub({REPO: pulls}, token=TOKEN) as server:
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", server.url)
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        yield server


def numbers(db) -> list[int]:
    return [row[0] for row in db.execute("select number from prs where repo = ? order by merged_at", [REPO])]


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("prdigest: warning: ")]


# ---------------------------------------------------------------- pagination has a bound


def endless(github: FakeGitHub, path: str, payload) -> None:
    """Every answer under `path` offers one more page."""
    link = f'<{github.url}{path}?page=2>; rel="next"'
    github.fail(Fault(200, {"Link": link}, payload=payload), match=path, times=ENDLESS)


def test_a_files_listing_that_never_ends_stops_at_githubs_limit(github):
    endless(github, f"/repos/{REPO}/pulls/1000/files", [{"filename": "a.py", "status": "modified"}])
    told: list[str] = []
    with GitHubClient(github.url, None, max_wait=1, on_warning=told.append) as client:
        files = client.pull_files(REPO, 1000)
    assert len(files) == 30 and github.count("/pulls/1000/files") == 30
    assert told == [f"GET /repos/{REPO}/pulls/1000/files: GitHub offered more than 30 pages, "
                    "past its own limit of 3,000 files a PR; kept the first 30"]


def test_a_search_that_never_ends_is_an_error_after_githubs_thousand_results(github):
    endless(github, "/search/issues", {"total_count": 1, "incomplete_results": False, "items": []})
    with GitHubClient(github.url, None, max_wait=1) as client, pytest.raises(GitHubError) as stopped:
        client.merged_pulls(REPO, START, END)
    assert str(stopped.value) == ("GET /search/issues: GitHub offered more than 10 pages, "
                                  "past the 1,000 results its search ever gives; not followed further")
    assert github.count("/search/issues") == 10


def test_a_graphql_search_that_never_ends_is_an_error_after_githubs_thousand_results(github):
    page = {"issueCount": 1, "pageInfo": {"hasNextPage": True, "endCursor": "Y3Vyc29yOjA="}, "nodes": []}
    github.fail(Fault(200, payload={"data": {"repository": {"nameWithOwner": REPO}, "search": page}}),
                match="/graphql", times=ENDLESS)
    with GitHubClient(github.url, TOKEN, max_wait=1) as client, pytest.raises(GitHubError, match="more than 20 pages"):
        client.merged_pulls(REPO, START, END)
    assert github.count("/graphql") == 20


@pytest.mark.parametrize("token", [None, TOKEN], ids=["rest", "graphql"])
def test_a_pr_of_50000_files_stores_githubs_3000_at_a_bounded_cost(run_cli, db, github, monkeypatch, token):
    huge = FakePull(7, "[Misc] Vendor everything", START.replace(hour=12),
                    files=[f"third_party/lib{i // 100}/f{i}.c" for i in range(50_000)])
    github.add(REPO, huge)
    if token:
        monkeypatch.setenv("GITHUB_TOKEN", token)
    result = run_cli("ingest", *SINCE)
    assert result.code == 0, result.err
    stored = get_pr(db, REPO, 7)
    assert stored.files == huge.files[:FILES_LIMIT] and stored.changed_files == 50_000
    assert warnings(result.err) == [f"prdigest: warning: {REPO}#7: kept the first 3,000 of its 50,000 files; "
                                    "GitHub lists at most 3,000 files of a PR"]
    if token:  # the day in one request, then 100 files a request up to 3,000
        assert github.count("/graphql", "MergedPulls") == 1 and github.count("/graphql", "PullFiles") == 29
    else:
        assert github.count("/pulls/7/files") == 30 and github.count("/pulls/7") == 31
    assert len(numbers(db)) == 12 + 1
