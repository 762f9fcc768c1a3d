"""The GitHub client over real HTTP against the fake GitHub: shapes, pagination, retries and rate limits."""
from datetime import UTC, date, datetime, timedelta

import pytest
from conftest import LA
from servers.github_api import SECONDARY_LIMIT, TOO_MANY, FakeGitHub, FakePull, Fault, day_of_pulls, rest_pull

from store.days import day_bounds
from store.sources.github import BadToken, GitHubClient, GitHubError, Unreadable, UnusableAnswer, graphql_endpoint

REPO = "acme/engine"
DAY = date(2026, 3, 7)
START, END = day_bounds(DAY, LA)


class FakeClock:
    """Time that passes only when the client sleeps, shared with the fake's rate-limit windows."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def github(clock):
    pulls = day_of_pulls(DAY, 12, LA, big={2: 250}, unmerged_every=4)
    edges = [
        FakePull(1, "merged at the first second of the day", START),
        FakePull(2, "merged at the first second of the next day", END),
        FakePull(3, "merged the day before", START - timedelta(hours=3)),
        FakePull(4, "opened first, merged last", END - timedelta(seconds=1), created_at=START - timedelta(days=40)),
    ]
    with FakeGitHub({REPO: pulls + edges}, token="good-token", clock=clock) as server:
        yield server


def client_for(server, clock, token=None, **options) -> GitHubClient:
    options.setdefault("max_wait", 120)
    return GitHubClient(server.url, token, sleep=clock.sleep, clock=clock, timeout=2, **{"max_wait": 900, **options})


@pytest.mark.parametrize("token", [None, "good-token"], ids=["rest", "graphql"])
def test_merged_pulls_of_a_window_oldest_first(github, clock, token):
    with client_for(github, clock, token) as client:
        pulls = client.merged_pulls(REPO, START, END).pulls
    numbers = [pull.number for pull in pulls]
    assert numbers[0] == 1 and 2 not in numbers and 3 not in numbers
    # Search pages come in creation order; merge order is ours. Closed-unmerged PRs (11000+) never appear.
    assert numbers[1:] == [*range(1000, 1012), 4]
    assert [pull.merged_at for pull in pulls] == sorted(pull.merged_at for pull in pulls)
    first = next(pull for pull in pulls if pull.number == 1000)
    assert first.url == f"https://github.example/{REPO}/pull/1000" and first.author == "dev-0"
    assert first.labels == ["ready"] and "Fixes #500" in first.body
    assert first.merged_at.tzinfo is not None


@pytest.mark.parametrize("token", [None, "good-token"], ids=["rest", "graphql"])
def test_details_bring_every_file_past_100(github, clock, token):
    with client_for(github, clock, token) as client:
        listed = {pull.number: pull for pull in client.merged_pulls(REPO, START, END).pulls}
        big = client.pull_details(REPO, listed[1002])
    assert len(big.files) == 250 and len(set(big.files)) == 250
    assert big.changed_files == 250 and big.merged_by == "merge-bot"
    assert (big.additions, big.deletions) == (30, 2)


def test_rest_costs_and_file_objects(github, clock):
    with client_for(github, clock) as client:
        listed = client.merged_pulls(REPO, START, END).pulls
        assert client.requests == 2  # the repository, then one page of search
        files = client.pull_files(REPO, 1002)
    assert github.count("/pulls/1002/files") == 3  # 100 + 100 + 50, by Link headers
    assert set(files[0]) >= {"filename", "status", "additions", "deletions", "patch"}
    assert len(listed) == 14


def test_graphql_brings_a_day_in_one_request(github, clock):
    with client_for(github, clock, "good-token") as client:
        listed = client.merged_pulls(REPO, START, END).pulls
        details = [client.pull_details(REPO, pull) for pull in listed]
    assert github.count("/graphql", "MergedPulls") == 1
    assert github.count("/graphql", "PullFiles") == 2  # only the 250-file PR needs more pages
    assert github.count("/repos/") == 0
    assert sum(len(pull.files) for pull in details) == 250 + sum(1 + i % 4 for i in range(12) if i != 2)


@pytest.mark.parametrize("token", [None, "good-token"], ids=["rest", "graphql"])
def test_windows_past_the_search_limit_are_split(clock, token):
    pulls = day_of_pulls(DAY, 25, LA)
    with FakeGitHub({REPO: pulls}, clock=clock) as server, client_for(server, clock, token) as client:
        server.search_cap = client.search_limit = 10
        found = client.merged_pulls(REPO, START, END).pulls
    assert [pull.number for pull in found] == [pull.number for pull in pulls]


def test_5xx_and_timeouts_are_retried_with_growing_jittered_backoff(github, clock):
    github.fail(Fault(502), match="/search/issues", times=2)
    github.fail(Fault(200, delay=30), match="/pulls/1000")  # far longer than the client's 2s timeout, however busy the machine
    with client_for(github, clock) as client:
        listed = client.merged_pulls(REPO, START, END).pulls
        client.pull_details(REPO, next(pull for pull in listed if pull.number == 1000))
    first, second, third = clock.slept
    assert 0.5 <= first <= 1 and 1 <= second <= 2 and 0.5 <= third <= 1
    assert client.rate_limit_waits == 0
    assert github.count("/search/issues") == 3


def test_a_lasting_outage_is_one_error_naming_the_request(github, clock):
    github.fail(Fault(503, message="Service Unavailable"), match="/search/issues", times=100)
    with client_for(github, clock, max_attempts=4) as client, pytest.raises(GitHubError) as caught:
        client.merged_pulls(REPO, START, END)
    message = str(caught.value)
    assert "GET /search/issues" in message and "503" in message and "4 attempts" in message
    assert "\n" not in message and len(clock.slept) == 3
    assert github.count("/search/issues") == 4


def test_secondary_limits_wait_as_github_asks(github, clock):
    github.fail(SECONDARY_LIMIT, match="/search/issues")
    github.fail(TOO_MANY, match="/pulls/1000")
    github.fail(Fault(403, message="You have exceeded a secondary rate limit"), match="/pulls/1001")
    with client_for(github, clock) as client:
        listed = {pull.number: pull for pull in client.merged_pulls(REPO, START, END).pulls}
        client.pull_details(REPO, listed[1000])
        client.pull_details(REPO, listed[1001])
    assert clock.slept == [7, 3, 60]  # Retry-After, Retry-After, else at least a minute
    assert client.rate_limit_waits == 3


def test_primary_limit_waits_until_the_reset(github, clock):
    github.exhaust("core", reset_in=30)
    with client_for(github, clock) as client:
        assert len(client.merged_pulls(REPO, START, END).pulls) == 14
    assert clock.slept == [31]  # to the reset, plus a second for clock skew
    assert client.rate_limit_waits == 1


def test_a_wait_longer_than_allowed_names_the_reset(github, clock):
    github.exhaust("core", reset_in=3600)
    reset = datetime.fromtimestamp(int(clock.now + 3600), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with client_for(github, clock, max_wait=600) as client, pytest.raises(GitHubError) as caught:
        client.merged_pulls(REPO, START, END)
    assert f"rate limit (core) exhausted until {reset}" in str(caught.value)
    assert "600s" in str(caught.value) and clock.slept == []


def test_graphql_primary_limit_comes_as_a_200(github, clock):
    github.exhaust("graphql", reset_in=10)
    with client_for(github, clock, "good-token") as client:
        assert len(client.merged_pulls(REPO, START, END).pulls) == 14
    assert clock.slept == [11]


@pytest.mark.parametrize("token", [None, "good-token"], ids=["rest", "graphql"])
def test_unknown_repository(github, clock, token):
    with client_for(github, clock, token) as client, pytest.raises(GitHubError) as caught:
        client.merged_pulls("acme/nope", START, END)
    assert str(caught.value).startswith("unknown repository acme/nope at http://127.0.0.1:")
    assert clock.slept == []


@pytest.mark.parametrize("graphql", [False, True], ids=["rest", "graphql"])
def test_bad_token(github, clock, graphql):
    with client_for(github, clock, "stolen", graphql=graphql) as client, pytest.raises(BadToken) as caught:
        client.merged_pulls(REPO, START, END)
    assert "401" in str(caught.value) and "GITHUB_TOKEN" in str(caught.value)
    assert len(github.seen) == 1


def test_forbidden_is_not_mistaken_for_a_rate_limit(github, clock):
    github.fail(Fault(403, message="Resource not accessible by integration"), match="/search/issues")
    with client_for(github, clock) as client, pytest.raises(GitHubError, match="403 Resource not accessible"):
        client.merged_pulls(REPO, START, END)
    assert clock.slept == []


def test_a_listing_that_cannot_be_read_is_one_line_error(github, clock):
    github.fail(Fault(200, payload=["not", "a", "search", "page"]), match="/search/issues")
    with client_for(github, clock) as client, pytest.raises(UnusableAnswer) as caught:
        client.merged_pulls(REPO, START, END)
    assert str(caught.value) == (
        "unexpected answer from GitHub about acme/engine: TypeError list indices must be integers or slices, not str"
    )


def test_listed_prs_that_cannot_be_read_are_set_aside_where_they_merged(github, clock):
    untitled = {"number": 5, "pull_request": {"merged_at": "2026-03-07T18:00:00Z"}}  # no title, no URL
    stamped = {**rest_pull(REPO, github.repos[REPO][1003], full=False), "updated_at": 7}
    items = [untitled, "junk", stamped, rest_pull(REPO, github.repos[REPO][1004], full=False)]
    github.fail(Fault(200, payload={"total_count": 4, "items": items}), match="/search/issues")
    with client_for(github, clock) as client:
        listing = client.merged_pulls(REPO, START, END)
    assert [pull.number for pull in listing.pulls] == [1004]
    assert listing.unreadable == [
        Unreadable(5, datetime(2026, 3, 7, 18, tzinfo=UTC), "KeyError 'title'"),
        Unreadable(None, None, "AttributeError 'str' object has no attribute 'get'"),
        Unreadable(1003, github.repos[REPO][1003].merged_at, "TypeError int where text was expected"),
    ]


def test_a_pr_github_no_longer_calls_merged_is_an_error(clock):
    with FakeGitHub({REPO: [FakePull(9, "merged, then not", START)]}, clock=clock) as server, client_for(server, clock) as client:
        listed = client.merged_pulls(REPO, START, END).pulls
        server.repos[REPO][9].merged_at = None
        with pytest.raises(GitHubError, match="PR #9 is not merged"):
            client.pull_details(REPO, listed[0])


def test_enterprise_server_paths(github, clock):
    assert graphql_endpoint("https://ghe.example.com/api/v3") == "https://ghe.example.com/api/graphql"
    assert graphql_endpoint("https://api.github.com") == "https://api.github.com/graphql"
    for token in (None, "good-token"):
        with GitHubClient(github.url + "/api/v3", token, sleep=clock.sleep, clock=clock, max_wait=900) as client:
            assert len(client.merged_pulls(REPO, START, END).pulls) == 14
    assert github.count("/graphql") == 1 and github.count("/search/issues") == 1


def test_graphql_needs_a_token():
    with pytest.raises(GitHubError, match="GITHUB_TOKEN"):
        GitHubClient("http://127.0.0.1:9", None, graphql=True, max_wait=900)


def test_incomplete_search_results_are_not_trusted(github, clock):
    github.fail(Fault(200, payload={"total_count": 13, "incomplete_results": True, "items": []}), match="/search/")
    with client_for(github, clock) as client, pytest.raises(GitHubError, match="incomplete results for acme/engine"):
        client.merged_pulls(REPO, START, END)

