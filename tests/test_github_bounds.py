"""GitHub's answers, bounded and checked: pagination stops at GitHub's own limits, and a PR whose answers cannot
be read is skipped with one warning, the rest of the run going on and a later run trying it again. Through the
real CLI and httpx against the loopback GitHub."""
from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from conftest import LA
from pr_factory import make_pr
from servers.github_api import FakeGitHub, FakePull, Fault, day_of_pulls
from servers.openai_api import FakeOpenAI

from store.days import day_bounds, to_utc_text
from store.sources.github import FILES_LIMIT, GitHubClient, GitHubError
from store.tables.prs import get_pr, save_pr
from store.understanding.summary import classify_type, extractive_summary

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


def cursor(db) -> str | None:
    row = db.execute("select ingest_cursor from repos where name = ?", [REPO]).fetchone()
    return row[0] if row else None


def merged(github, number) -> str:
    return to_utc_text(github.repos[REPO][number].merged_at)


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


# ---------------------------------------------------------------- a malformed answer skips one PR


@pytest.mark.parametrize("page", [
    {"files": [{"filename": "a.py"}]},  # not a list
    [{"status": "modified", "additions": 1}],  # no filename
    [{"filename": ["a.py"]}],  # a filename that is no text
    [{"filename": "a.py", "patch": {"hunks": []}}],  # a patch that is no text
    ["a.py"],  # items that are no objects
], ids=["object", "missing key", "wrong type", "patch", "strings"])
def test_ingest_skips_a_pr_whose_files_cannot_be_read_and_a_later_run_stores_it(run_cli, db, github, page):
    github.reshape[(1005, "files")] = lambda _: page
    result = run_cli("ingest", *SINCE)
    assert result.code == 0, result.err
    [warning] = warnings(result.err)
    assert warning.startswith(f"prdigest: warning: {REPO}: PR #1005 skipped, a later run tries it again: "
                              f"unexpected answer from GitHub about {REPO}#1005: ")
    assert "Traceback" not in result.err and len(result.err.splitlines()) == 1
    assert "11 new, 0 updated, 0 unchanged, 1 skipped until a later run" in result.out
    assert numbers(db) == [n for n in range(1000, 1012) if n != 1005]
    assert cursor(db) == merged(github, 1004)  # not past the PR left for later
    github.reshape.clear()
    again = run_cli("ingest", "--until", "2026-03-07")
    assert again.code == 0 and again.err == "" and "1 new, 0 updated" in again.out  # listed again: the cursor waited
    assert numbers(db) == list(range(1000, 1012)) and cursor(db) == merged(github, 1011)


@pytest.mark.parametrize("change", [{"merged_at": "last tuesday"}, {"additions": 10**30}], ids=["date", "number"])
def test_ingest_skips_a_pr_whose_details_cannot_be_read(run_cli, db, github, change):
    github.reshape[(1003, "pull")] = lambda pull: {**pull, **change}
    result = run_cli("ingest", *SINCE)
    assert result.code == 0 and len(warnings(result.err)) == 1 and "PR #1003 skipped" in result.err, result.err
    assert 1003 not in numbers(db) and cursor(db) == merged(github, 1002)


def test_a_graphql_node_of_the_wrong_shape_is_skipped_and_tried_again(run_cli, db, github, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    github.reshape[(1005, "node")] = lambda node: {**node, "labels": None}
    github.reshape[(1008, "node")] = lambda node: {**node, "title": {"text": "a title"}}
    result = run_cli("ingest", *SINCE)
    assert result.code == 0, result.err
    assert warnings(result.err) == [
        f"prdigest: warning: {REPO}: PR #1005 GitHub listed could not be read "
        "(TypeError 'NoneType' object is not subscriptable); a later run tries it again",
        f"prdigest: warning: {REPO}: PR #1008 GitHub listed could not be read "
        "(TypeError dict where text was expected); a later run tries it again",
    ]
    assert numbers(db) == [n for n in range(1000, 1012) if n not in (1005, 1008)]
    assert cursor(db) == merged(github, 1004)
    github.reshape.clear()
    assert run_cli("ingest", *SINCE).code == 0
    assert numbers(db) == list(range(1000, 1012)) and cursor(db) == merged(github, 1011)


def test_a_node_that_says_nothing_of_itself_keeps_the_cursor_where_it_was(run_cli, db, github, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    assert run_cli("ingest", "--since", "2026-03-06", "--until", "2026-03-06").code == 0
    before = cursor(db)
    assert before == merged(github, 902)
    github.reshape[(1009, "node")] = lambda node: ["not", "a", "node"]
    result = run_cli("ingest", *SINCE)
    assert result.code == 0 and warnings(result.err) == [
        f"prdigest: warning: {REPO}: a PR GitHub listed could not be read "
        "(TypeError list indices must be integers or slices, not str); a later run tries it again"]
    assert len(numbers(db)) == 3 + 11 and cursor(db) == before  # where the unreadable PR merged is unknown


def test_summarize_leaves_a_pr_whose_files_cannot_be_read_for_a_later_run(run_cli, db, github, monkeypatch):
    for number in range(1000, 1004):
        pr = make_pr(number, f"[Core] Change {number}", merged_at=datetime(2026, 3, 7, 18, number - 1000, tzinfo=UTC),
                     files=["vllm/model_executor/models/llama.py"])
        pr.type, pr.summary = classify_type(pr), extractive_summary(pr)
        save_pr(db, pr)
    github.reshape[(1002, "files")] = lambda page: {"files": page}
    with FakeOpenAI() as model:
        monkeypatch.setenv("PRDIGEST_MODEL", "m")
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        result = run_cli("summarize", "--date", "2026-03-07")
        assert result.err.splitlines()[0] == (
            f"#1002 failed: left for a later run: unexpected answer from GitHub about {REPO}#1002: "
            "TypeError a files page is dict, not a list")
        assert "Traceback" not in result.err and result.code == 1
        assert "summarized 3 PRs" in result.out and "-old\n+new" in model.requests[-1].user  # the others had diffs
        assert not any("Number: #1002" in request.user for request in model.requests)
        github.reshape.clear()
        again = run_cli("summarize", "--missing")
        assert again.code == 0 and "summarized 1 PR " in again.out
    assert get_pr(db, REPO, 1002).summary.source == "model:m"
