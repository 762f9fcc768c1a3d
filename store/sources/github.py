"""GitHub's API as ingest needs it: merged PRs of a window, with their files, through faults and rate limits.

Without a token only the REST API is used (search, pull, files). With a token the
GraphQL API brings a whole page of PRs with their files in one request.
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

import httpx

from store.days import to_utc_text
from store.text.errors import one_line
from store.text.origins import elsewhere, origin

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
# GitHub's search returns at most this many results per query, however many match.
SEARCH_LIMIT = 1000
SEARCH_PAGE = 100
# GitHub answers the files of a PR 100 at a time and lists no more than 3000 of them.
FILES_PAGE = 100
FILES_LIMIT = 3000
# 50 PRs with up to 100 files each keeps one GraphQL page well inside GitHub's
# node limit and its 10-second query budget, and covers a busy day.
GRAPHQL_PAGE = 50

WaitHook = Callable[[float, str], None]
WarnHook = Callable[[str], None]


class GitHubError(Exception):
    """GitHub could not give what was asked; str() is one line naming what failed."""


class BadToken(GitHubError):
    """GitHub refused the token: nothing else will work until it is fixed."""


class UnusableAnswer(GitHubError):
    """What GitHub answered cannot be used: a shape it does not document, or a link or a
    redirect to another origin. About one PR, that PR waits for the next run and the others go on."""


@dataclass
class PullData:
    """A merged PR as GitHub describes it. Search hits lack the fields marked "None until detailed"."""

    number: int
    title: str
    url: str
    body: str
    author: str
    merged_at: datetime
    updated_at: str  # GitHub's text, compared as is to skip PRs that did not change
    labels: list[str]
    merged_by: str | None = None  # None until detailed
    additions: int | None = None  # None until detailed
    deletions: int | None = None  # None until detailed
    changed_files: int | None = None  # None until detailed
    files: list[str] | None = None  # None until detailed
    files_after: str | None = None  # GraphQL cursor of the files still to fetch


class GitHubClient:
    """A small GitHub API client on httpx that retries what is worth retrying and waits out rate limits.

    `sleep` and `clock` are injectable so that waiting can be observed; a wait
    longer than `max_wait` seconds is an error naming when the limit resets.
    Requests go to the origin of `base_url` only: a next-page link or a redirect
    elsewhere is refused before anything, the token least of all, is sent there.
    What GitHub gave that had to be cut or left for later goes to `on_warning`
    (by default this module's log), one line each.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        graphql: bool | None = None,
        timeout: float = 30.0,
        max_attempts: int = 5,
        max_wait: float,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        on_wait: WaitHook | None = None,
        on_warning: WarnHook | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = origin(self.base_url)
        self.graphql = bool(token) if graphql is None else graphql
        if self.graphql and not token:
            raise GitHubError("the GraphQL API needs a token: set GITHUB_TOKEN")
        self.graphql_url = graphql_endpoint(self.base_url)
        self.max_attempts = max_attempts
        self.max_wait = max_wait
        self.backoff = backoff
        self.search_limit = SEARCH_LIMIT
        self.requests = 0
        self.rate_limit_waits = 0
        self._sleep = sleep
        self._clock = clock
        self._on_wait = on_wait
        self._on_warning = on_warning
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "prdigest",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # Redirects within the origin are followed (GitHub moves renamed repositories with a 301);
        # the hook sees every request, redirected or linked, before it is sent.
        self._http = httpx.Client(
            base_url=self.base_url + "/", headers=headers, timeout=timeout, follow_redirects=True,
            event_hooks={"request": [self._only_own_origin]},
        )

    def close(self) -> None:
        self._http.close()

    def warn(self, text: str) -> None:
        """One line for whoever runs this: something GitHub gave was cut short or left for the next run."""
        (self._on_warning or log.warning)(one_line(text, limit=1000))

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what ingest asks for ------------------------------------------------------

    def merged_pulls(self, repo: str, start: datetime, end: datetime) -> list[PullData]:
        """Every PR of `repo` merged in [start, end), oldest merge first (ties by number)."""
        with _expected_shapes(repo):
            if self.graphql:
                found = self._graphql_merged(repo, start, end)
            else:
                found = self._rest_merged(self.repository(repo)["full_name"], start, end)
        inside = {pull.number: pull for pull in found if start <= pull.merged_at < end}
        return sorted(inside.values(), key=lambda pull: (pull.merged_at, pull.number))

    def pull_details(self, repo: str, pull: PullData) -> PullData:
        """`pull` with everything filled in: merged_by, line counts and its files, as many as GitHub lists."""
        after = None
        with _expected_shapes(repo):
            if self.graphql:
                files = list(pull.files or [])
                after = pull.files_after
                for _ in range(_most_pages(FILES_LIMIT, FILES_PAGE)):
                    if not after or len(files) >= FILES_LIMIT:
                        break
                    page = self._graphql(PULL_FILES, {**_owner_name(repo), "number": pull.number, "after": after})
                    connection = page["repository"]["pullRequest"]["files"]
                    files += [node["path"] for node in connection["nodes"]]
                    after = _next_cursor(connection)
                detailed = replace(pull, files=files[:FILES_LIMIT], files_after=None)
            else:
                detailed = _rest_pull(self._get_json(f"repos/{repo}/pulls/{pull.number}"))
                detailed.files = [file["filename"] for file in self.pull_files(repo, pull.number)]
        kept, changed = len(detailed.files or []), detailed.changed_files or 0
        if after or changed > kept >= FILES_LIMIT:
            self.warn(f"{repo}#{pull.number}: kept the first {kept:,} of its {changed:,} files; "
                      f"GitHub lists at most {FILES_LIMIT:,} files of a PR")
        return detailed

    def repository(self, repo: str) -> dict[str, Any]:
        response = self._request("GET", f"repos/{repo}")
        if response.status_code == 404:
            raise GitHubError(f"unknown repository {repo} at {self.base_url} (not found, or the token cannot see it)")
        return _json(response, f"GET /repos/{repo}")

    def pull_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """GitHub's file objects of a PR (filename, status, additions, deletions, patch when given), as many
        as GitHub lists (FILES_LIMIT)."""
        files: list[dict[str, Any]] = []
        path = f"repos/{repo}/pulls/{number}/files"
        most = _most_pages(FILES_LIMIT, FILES_PAGE)
        for page in self._pages(path, {"per_page": FILES_PAGE}, most, lambda problem: self.warn(
            f"{problem}, past its own limit of {FILES_LIMIT:,} files a PR; kept the first {most}"
        )):
            files += page
            if len(files) >= FILES_LIMIT:
                break
        return files[:FILES_LIMIT]

    # -- REST ----------------------------------------------------------------------

    def _rest_merged(self, repo: str, start: datetime, end: datetime) -> list[PullData]:
        params = {"q": _search_query(repo, start, end), "sort": "created", "order": "asc", "per_page": SEARCH_PAGE}
        pages = self._pages("search/issues", params, _most_pages(self.search_limit, SEARCH_PAGE), _past_search)
        first = next(pages)
        if first["total_count"] > self.search_limit:
            pages.close()
            return [pull for half in _halves(start, end) for pull in self._rest_merged(repo, *half)]
        found = [first, *pages]
        if any(page.get("incomplete_results") for page in found):
            # Search timed out on GitHub's side; storing what came would let the cursor pass the missing PRs.
            raise GitHubError(f"GitHub search returned incomplete results for {repo}; run again")
        items = [item for page in found for item in page["items"]]
        return [_rest_pull(item) for item in items if (item.get("pull_request") or {}).get("merged_at")]

    def _pages(
        self, path: str, params: dict[str, Any] | None, most: int, past: Callable[[str], None]
    ) -> Generator[Any, None, None]:
        """Each page's JSON, following the Link header (whose URL carries the query: params go with the first only),
        for at most `most` pages; a listing that offers more is told to `past` in a line."""
        url = path
        for _ in range(most):
            response = self._request("GET", url, params=params)
            yield _json(response, f"GET /{path}")
            following = response.links.get("next", {}).get("url")
            if not following:
                return
            url, params = following, None
        past(f"GET /{path}: GitHub offered more than {most} pages")

    def _get_json(self, path: str) -> Any:
        return _json(self._request("GET", path), f"GET /{path}")

    # -- GraphQL -------------------------------------------------------------------

    def _graphql_merged(self, repo: str, start: datetime, end: datetime) -> list[PullData]:
        variables = {**_owner_name(repo), "q": _search_query(repo, start, end) + " sort:created-asc",
                     "first": GRAPHQL_PAGE, "after": None}
        found: list[PullData] = []
        most = _most_pages(self.search_limit, GRAPHQL_PAGE)
        for _ in range(most):
            search = self._graphql(MERGED_PULLS, variables)["search"]
            if search["issueCount"] > self.search_limit:
                return [pull for half in _halves(start, end) for pull in self._graphql_merged(repo, *half)]
            found += [_graphql_pull(node) for node in search["nodes"] if node and node.get("mergedAt")]
            variables["after"] = _next_cursor(search)
            if not variables["after"]:
                return found
        _past_search(f"GraphQL MergedPulls: GitHub offered more than {most} pages")

    def _graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        operation = query.split("(", 1)[0].split()[-1]
        what = f"GraphQL {operation}"
        body = _json(self._request("POST", self.graphql_url, json={"query": query, "variables": variables}), what)
        errors = body.get("errors") or []
        for error in errors:
            if error.get("type") == "NOT_FOUND" and (error.get("path") or [None])[0] == "repository":
                repo = f"{variables['owner']}/{variables['name']}"
                raise GitHubError(f"unknown repository {repo} at {self.base_url} (not found, or the token cannot see it)")
        if errors or not body.get("data"):
            message = errors[0].get("message", "no data") if errors else "no data"
            raise GitHubError(f"{what}: {one_line(message)}")
        return body["data"]

    # -- sending, retrying, waiting --------------------------------------------------

    def _only_own_origin(self, request: httpx.Request) -> None:
        """Called by httpx before every request: one to another origin (a next-page link, a redirect) is refused."""
        there = elsewhere(str(request.url), self.base_url)
        if there:
            raise UnusableAnswer(
                f"GitHub pointed to {there}; only {self.origin}, the configured API origin, gets the token, "
                "so it was not followed"
            )

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send, retrying 5xx, timeouts and rate limits a bounded number of times; other answers are returned."""
        what = f"{method} {_path_of(url)}"
        for attempt in range(1, self.max_attempts + 1):
            self.requests += 1
            limited = None
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                problem, delay = f"{type(exc).__name__}: {exc}", self._backoff(attempt)
            else:
                if response.status_code == 401:
                    raise BadToken(f"GitHub rejected the token (401 {_message(response)}): check GITHUB_TOKEN")
                limited = _rate_limit_wait(response, attempt, self._clock())
                if limited is not None:
                    delay, problem = limited
                    if delay > self.max_wait:
                        raise GitHubError(f"{what}: {problem}; that is more than the {self.max_wait:.0f}s this run may wait")
                elif response.status_code >= 500:
                    problem, delay = f"{response.status_code} {response.reason_phrase}", self._backoff(attempt)
                else:
                    return response
            if attempt == self.max_attempts:
                break
            if limited is not None:
                self.rate_limit_waits += 1
            self._wait(delay, f"{what}: {problem}")
        raise GitHubError(f"{what}: gave up after {self.max_attempts} attempts, last {one_line(problem)}")

    def _backoff(self, attempt: int) -> float:
        """Exponential, capped, with jitter so that many clients do not retry in step."""
        ceiling = min(60.0, self.backoff * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _wait(self, seconds: float, why: str) -> None:
        if self._on_wait:
            self._on_wait(seconds, why)
        self._sleep(seconds)


@contextmanager
def _expected_shapes(repo: str) -> Iterator[None]:
    """An answer missing the fields GitHub documents becomes one GitHubError line, not a traceback."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GitHubError(f"unexpected answer from GitHub about {repo}: {type(exc).__name__} {exc}") from None


def _past_search(problem: str) -> NoReturn:
    """GitHub's search stops at SEARCH_LIMIT results: a listing that goes on is not GitHub's, and what it
    would have left out is unknown, so nothing of it is stored."""
    raise GitHubError(f"{problem}, past the {SEARCH_LIMIT:,} results its search ever gives; not followed further")


def _most_pages(limit: int, per_page: int) -> int:
    return -(-limit // per_page)


def graphql_endpoint(base_url: str) -> str:
    """api.github.com/graphql, or for GitHub Enterprise Server <host>/api/graphql beside <host>/api/v3."""
    if base_url.endswith("/api/v3"):
        return base_url[: -len("/v3")] + "/graphql"
    return base_url + "/graphql"


def _rate_limit_wait(response: httpx.Response, attempt: int, now: float) -> tuple[float, str] | None:
    """How long GitHub wants us to wait, and why; None when the answer is not a rate limit.

    Follows GitHub's advice: Retry-After first, then X-RateLimit-Reset when none
    remain, else at least a minute, growing while the secondary limit persists.
    """
    headers = response.headers
    exhausted = headers.get("x-ratelimit-remaining") == "0"
    if response.status_code in (403, 429):
        limited = "retry-after" in headers or exhausted or "rate limit" in _message(response).lower()
    else:
        # GraphQL reports an exhausted primary limit as a 200 with a RATE_LIMITED error.
        limited = response.status_code == 200 and exhausted and b'"RATE_LIMITED"' in response.content
    if not limited:
        return None
    retry_after = headers.get("retry-after", "")
    if retry_after.isdigit():
        return float(retry_after), f"secondary rate limit, GitHub asks to retry after {retry_after}s"
    reset = headers.get("x-ratelimit-reset", "")
    if exhausted and reset.isdigit():
        at = datetime.fromtimestamp(int(reset), UTC)
        resource = headers.get("x-ratelimit-resource", "core")
        # One second past the reset, since GitHub's clock and ours may differ a little.
        return max(1.0, int(reset) - now + 1), f"rate limit ({resource}) exhausted until {to_utc_text(at)}"
    return 60.0 * 2 ** (attempt - 1), "secondary rate limit"


def _json(response: httpx.Response, what: str) -> Any:
    if response.status_code >= 400:
        raise GitHubError(f"{what}: {response.status_code} {_message(response)}")
    try:
        return response.json()
    except ValueError:
        raise GitHubError(f"{what}: answer is not JSON") from None


def _message(response: httpx.Response) -> str:
    try:
        message = response.json().get("message")
    except (ValueError, AttributeError):
        message = None
    return one_line(message or response.reason_phrase or "no message")


def _path_of(url: str) -> str:
    """The path of a relative or absolute URL, without its query, to name a request in a message."""
    path = url.split("://", 1)[1].split("/", 1)[-1] if "://" in url else url
    return "/" + path.split("?", 1)[0]


def _search_query(repo: str, start: datetime, end: datetime) -> str:
    """The search for PRs merged in [start, end); GitHub's ranges include both ends, to the second."""
    last = end - timedelta(seconds=1)
    stamp = lambda moment: moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    return f"repo:{repo} is:pr is:merged merged:{stamp(start)}..{stamp(last)}"


def _halves(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    middle = start + timedelta(seconds=(end - start).total_seconds() // 2)
    if middle <= start:
        raise GitHubError(f"more than {SEARCH_LIMIT} PRs merged within one second at {to_utc_text(start)}")
    return [(start, middle), (middle, end)]


def _owner_name(repo: str) -> dict[str, str]:
    owner, name = repo.split("/", 1)
    return {"owner": owner, "name": name}


def _next_cursor(connection: dict[str, Any]) -> str | None:
    info = connection["pageInfo"]
    return info["endCursor"] if info["hasNextPage"] else None


def _login(user: dict[str, Any] | None) -> str:
    # A deleted account shows as null; GitHub's own pages call it "ghost".
    return (user or {}).get("login") or "ghost"


def _rest_pull(item: dict[str, Any]) -> PullData:
    """A search hit (no merged_by, counts or files) or a full pulls/N object."""
    merged_at = item.get("merged_at") or (item.get("pull_request") or {}).get("merged_at")
    if not merged_at:
        raise GitHubError(f"PR #{item['number']} is not merged")
    return PullData(
        number=item["number"],
        title=item["title"],
        url=item["html_url"],
        body=item.get("body") or "",
        author=_login(item.get("user")),
        merged_at=datetime.fromisoformat(merged_at),
        updated_at=item["updated_at"],
        labels=[label["name"] for label in item.get("labels") or []],
        merged_by=_login(item["merged_by"]) if "merged_by" in item else None,
        additions=item.get("additions"),
        deletions=item.get("deletions"),
        changed_files=item.get("changed_files"),
    )


def _graphql_pull(node: dict[str, Any]) -> PullData:
    files = node["files"] or {"nodes": [], "pageInfo": {"hasNextPage": False}}
    return PullData(
        number=node["number"],
        title=node["title"],
        url=node["url"],
        body=node.get("body") or "",
        author=_login(node.get("author")),
        merged_at=datetime.fromisoformat(node["mergedAt"]),
        updated_at=node["updatedAt"],
        labels=[label["name"] for label in node["labels"]["nodes"]],
        merged_by=_login(node.get("mergedBy")),
        additions=node["additions"],
        deletions=node["deletions"],
        changed_files=node["changedFiles"],
        files=[file["path"] for file in files["nodes"]],
        files_after=_next_cursor(files),
    )


_PULL_FIELDS = """
        number title url body updatedAt mergedAt
        author { login }
        mergedBy { login }
        additions deletions changedFiles
        labels(first: 100) { nodes { name } }
        files(first: 100) { pageInfo { hasNextPage endCursor } nodes { path } }
"""

MERGED_PULLS = """query MergedPulls($owner: String!, $name: String!, $q: String!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) { nameWithOwner }
  search(query: $q, type: ISSUE, first: $first, after: $after) {
    issueCount
    pageInfo { hasNextPage endCursor }
    nodes { ... on PullRequest {""" + _PULL_FIELDS + """      } }
  }
}"""

PULL_FILES = """query PullFiles($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      files(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { path } }
    }
  }
}"""
