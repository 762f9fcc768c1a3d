"""GitHub's API as ingest needs it: merged PRs of a window with their files, and releases with the commits
of their ranges, through faults and rate limits.

Without a token only the REST API is used (search, pull, files). With a token the
GraphQL API brings a whole page of PRs with their files in one request. Releases
and the commits between two tags come from REST either way: GraphQL has no compare.
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn
from urllib.parse import quote

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
# Releases and the commits of a compare come at most 100 a page. A release's listing reads at most
# RELEASE_PAGES pages (vLLM has some 150 releases), a compare at most RANGE_PAGES (vLLM's largest minor
# release is about a thousand commits): past those a listing is cut with a line, and a range not mapped.
LIST_PAGE = 100
RELEASE_PAGES = 20
RANGE_PAGES = 100
# 50 PRs with up to 100 files each keeps one GraphQL page well inside GitHub's
# node limit and its 10-second query budget, and covers a busy day.
GRAPHQL_PAGE = 50

WaitHook = Callable[[float, str], None]
WarnHook = Callable[[str], None]
# What reading a JSON answer of a shape GitHub does not document raises.
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


class GitHubError(Exception):
    """GitHub could not give what was asked; str() is one line naming what failed."""


class BadToken(GitHubError):
    """GitHub refused the token: nothing else will work until it is fixed."""


class NotFound(GitHubError):
    """GitHub answered 404: the repository, tag or PR asked for is not there (or the token cannot see it)."""


class TooLong(GitHubError):
    """A listing runs past the pages this client reads of it, and it is of no use in part (a release's range)."""


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


@dataclass
class Unreadable:
    """A PR a listing gave in a shape that could not be read; its number and merge time when those could be."""

    number: int | None
    merged_at: datetime | None
    problem: str


@dataclass
class Listing:
    """The merged PRs of a window: those read, oldest merge first, and those that could not be."""

    pulls: list[PullData]
    unreadable: list[Unreadable] = field(default_factory=list)

    def __add__(self, other: Listing) -> Listing:
        return Listing(self.pulls + other.pulls, self.unreadable + other.unreadable)


@dataclass
class OpenPull:
    """A PR GitHub has not merged: open, or closed without being merged."""

    number: int
    title: str
    url: str
    body: str
    author: str
    state: str  # open | closed
    opened_at: datetime
    labels: list[str]
    files: list[str]


@dataclass(frozen=True)
class RateLimit:
    """GitHub's core REST limit, and the scopes of a classic token (None: GitHub listed none, as for a
    fine-grained token or no token)."""

    limit: int
    remaining: int
    reset: datetime
    scopes: tuple[str, ...] | None


@dataclass(frozen=True)
class ReleaseData:
    """A published release as GitHub lists it."""

    tag: str
    name: str
    url: str
    published_at: datetime
    prerelease: bool


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

    def merged_pulls(self, repo: str, start: datetime, end: datetime) -> Listing:
        """Every PR of `repo` merged in [start, end), oldest merge first (ties by number), and those
        listed in a shape that could not be read (a listing that cannot be read at all is an error)."""
        with _expected_shapes(repo):
            if self.graphql:
                found = self._graphql_merged(repo, start, end)
            else:
                found = self._rest_merged(_text(self.repository(repo)["full_name"]), start, end)
        inside = {pull.number: pull for pull in found.pulls if start <= pull.merged_at < end}
        unreadable = [pr for pr in found.unreadable if pr.merged_at is None or start <= pr.merged_at < end]
        return Listing(sorted(inside.values(), key=lambda pull: (pull.merged_at, pull.number)), unreadable)

    def pull_details(self, repo: str, pull: PullData) -> PullData:
        """`pull` with everything filled in: merged_by, line counts and its files, as many as GitHub lists."""
        after = None
        with _expected_shapes(f"{repo}#{pull.number}"):
            if self.graphql:
                files = list(pull.files or [])
                after = pull.files_after
                for _ in range(_most_pages(FILES_LIMIT, FILES_PAGE)):
                    if not after or len(files) >= FILES_LIMIT:
                        break
                    page = self._graphql(PULL_FILES, {**_owner_name(repo), "number": pull.number, "after": after})
                    connection = page["repository"]["pullRequest"]["files"]
                    files += _paths(connection)
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

    def pull(self, repo: str, number: int) -> PullData | OpenPull | None:
        """One PR by number, with its files, merged or not (REST: a token is not needed); None when there is none."""
        with _expected_shapes(repo):
            response = self._request("GET", f"repos/{repo}/pulls/{number}")
            if response.status_code == 404:
                return None
            item = _json(response, f"GET /repos/{repo}/pulls/{number}")
            files = [file["filename"] for file in self.pull_files(repo, number)]
            if item.get("merged_at"):
                return replace(_rest_pull(item), files=files)
            return OpenPull(
                **_rest_common(item),
                state="open" if item["state"] == "open" else "closed",
                opened_at=_moment(item["created_at"]),
                files=files,
            )

    def rate_limit(self) -> RateLimit:
        """The core REST limit as it stands, and the token's scopes; GitHub does not count this request."""
        response = self._request("GET", "rate_limit")
        with _expected_shapes("GET /rate_limit"):
            core = _json(response, "GET /rate_limit")["resources"]["core"]
            scopes = response.headers.get("x-oauth-scopes")
            return RateLimit(
                int(core["limit"]), int(core["remaining"]), datetime.fromtimestamp(int(core["reset"]), UTC),
                None if scopes is None else tuple(scope.strip() for scope in scopes.split(",") if scope.strip()),
            )

    def repository(self, repo: str) -> dict[str, Any]:
        response = self._request("GET", f"repos/{repo}")
        if response.status_code == 404:
            raise GitHubError(f"unknown repository {repo} at {self.base_url} (not found, or the token cannot see it)")
        return _json(response, f"GET /repos/{repo}")

    def pull_files(self, repo: str, number: int) -> list[dict[str, Any]]:
        """GitHub's file objects of a PR (filename, status, additions, deletions, patch when given), as many
        as GitHub lists (FILES_LIMIT); UnusableAnswer when one is not of that shape."""
        files: list[dict[str, Any]] = []
        path = f"repos/{repo}/pulls/{number}/files"
        with _expected_shapes(f"{repo}#{number}"):
            most = _most_pages(FILES_LIMIT, FILES_PAGE)
            for page in self._pages(path, {"per_page": FILES_PAGE}, most, lambda problem: self.warn(
                f"{problem}, past its own limit of {FILES_LIMIT:,} files a PR; kept the first {most}"
            )):
                files += [_file_object(item) for item in _items(page, "a files page")]
                if len(files) >= FILES_LIMIT:
                    break
        return files[:FILES_LIMIT]

    def releases(self, repo: str, stop: Callable[[list[ReleaseData]], bool]) -> tuple[list[ReleaseData], bool]:
        """The repository's published releases, the last created first, drafts left out, a page at a time until
        `stop(page)` holds or the listing ends; and whether it ended, rather than stopped or was cut short."""
        listed: list[ReleaseData] = []
        ended = True

        def cut(problem: str) -> None:
            nonlocal ended
            ended = False
            self.warn(f"{problem}; the oldest releases are left unlisted")

        with _expected_shapes(f"{repo}'s releases"):
            pages = self._pages(f"repos/{repo}/releases", {"per_page": LIST_PAGE}, RELEASE_PAGES, cut)
            for page in pages:
                items = [item for item in _items(page, "a releases page") if not item.get("draft") and item.get("published_at")]
                found = [_release(item) for item in items]
                listed += found
                if stop(found):
                    pages.close()
                    return listed, False
        return listed, ended

    def range_messages(self, repo: str, base: str | None, head: str) -> list[str]:
        """The messages of the commits reachable from tag `head` and not from tag `base` (every page of the
        compare, oldest first); without `base`, of head's whole history. A range is never read in part: one
        past RANGE_PAGES pages, or a compare that comes back short of its total_commits, is an error."""
        what = f"{base}...{head}" if base else f"the history of {head}"

        def cut(problem: str) -> NoReturn:
            raise TooLong(f"{problem}: {what} is longer than {RANGE_PAGES * LIST_PAGE:,} commits and is not mapped")

        total = None
        commits: dict[str, str] = {}
        with _expected_shapes(f"{repo} {what}"):
            if base is None:
                pages = self._pages(f"repos/{repo}/commits", {"sha": head, "per_page": LIST_PAGE}, RANGE_PAGES, cut)
            else:
                path = f"repos/{repo}/compare/{_ref(base)}...{_ref(head)}"
                pages = self._pages(path, {"per_page": LIST_PAGE}, RANGE_PAGES, cut)
            for page in pages:
                if base is not None:
                    total, page = page["total_commits"], page["commits"]
                commits.update((_text(commit["sha"]), _text(commit["commit"]["message"])) for commit in _items(page, "commits"))
        if total is not None and len(commits) != total:
            raise GitHubError(f"the compare of {what} gave {len(commits)} of its {total} commits")
        return list(commits.values())

    def pulls(self, repo: str, numbers: Sequence[int]) -> Iterator[PullData]:
        """The merged PRs among `numbers`, each with every file, as they come; a number that is no merged PR of
        `repo` (an issue, a PR closed unmerged, nothing) is left out. With GraphQL, 50 PRs a request."""
        with _expected_shapes(repo):
            if self.graphql:
                for start in range(0, len(numbers), GRAPHQL_PAGE):
                    batch = list(numbers[start : start + GRAPHQL_PAGE])
                    found = self._graphql(_pulls_by_number(batch), _owner_name(repo), missing=True)["repository"]
                    for index in range(len(batch)):
                        node = found.get(f"p{index}")
                        if node and node.get("mergedAt"):
                            yield self.pull_details(repo, _graphql_pull(node))
                return
            for number in numbers:
                found = self.pull(repo, number)
                if isinstance(found, PullData):
                    yield found

    # -- REST ----------------------------------------------------------------------

    def _rest_merged(self, repo: str, start: datetime, end: datetime) -> Listing:
        params = {"q": _search_query(repo, start, end), "sort": "created", "order": "asc", "per_page": SEARCH_PAGE}
        pages = self._pages("search/issues", params, _most_pages(self.search_limit, SEARCH_PAGE), _past_search)
        first = next(pages)
        if first["total_count"] > self.search_limit:
            pages.close()
            halves = [self._rest_merged(repo, *half) for half in _halves(start, end)]
            return halves[0] + halves[1]
        found = [first, *pages]
        if any(page.get("incomplete_results") for page in found):
            # Search timed out on GitHub's side; storing what came would let the cursor pass the missing PRs.
            raise GitHubError(f"GitHub search returned incomplete results for {repo}; run again")
        items = [item for page in found for item in _items(page["items"], "search items")]
        return _read_each(items, lambda item: None if _unmerged(item, "pull_request") else _rest_pull(item))

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

    def _graphql_merged(self, repo: str, start: datetime, end: datetime) -> Listing:
        variables = {**_owner_name(repo), "q": _search_query(repo, start, end) + " sort:created-asc",
                     "first": GRAPHQL_PAGE, "after": None}
        found = Listing([])
        most = _most_pages(self.search_limit, GRAPHQL_PAGE)
        for _ in range(most):
            search = self._graphql(MERGED_PULLS, variables)["search"]
            if search["issueCount"] > self.search_limit:
                halves = [self._graphql_merged(repo, *half) for half in _halves(start, end)]
                return halves[0] + halves[1]
            found += _read_each(
                _items(search["nodes"], "search nodes"),
                lambda node: None if _unmerged(node) else _graphql_pull(node),
            )
            variables["after"] = _next_cursor(search)
            if not variables["after"]:
                return found
        _past_search(f"GraphQL MergedPulls: GitHub offered more than {most} pages")

    def _graphql(self, query: str, variables: dict[str, Any], missing: bool = False) -> dict[str, Any]:
        """The query's data. With `missing`, an object the query names inside the repository that is not
        there (a PR number that is an issue) is no error: the data holds null for it."""
        operation = query.split("(", 1)[0].split()[-1]
        what = f"GraphQL {operation}"
        body = _json(self._request("POST", self.graphql_url, json={"query": query, "variables": variables}), what)
        errors = body.get("errors") or []
        for error in errors:
            path = error.get("path") or [None]
            if error.get("type") == "NOT_FOUND" and path == ["repository"]:
                repo = f"{variables['owner']}/{variables['name']}"
                raise GitHubError(f"unknown repository {repo} at {self.base_url} (not found, or the token cannot see it)")
        if missing:
            errors = [e for e in errors if not (e.get("type") == "NOT_FOUND" and (e.get("path") or [None])[0] == "repository")]
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
        failure: httpx.TransportError | None = None  # the last one, kept as the cause: it tells DNS from a refusal
        for attempt in range(1, self.max_attempts + 1):
            self.requests += 1
            limited = None
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                failure = exc
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
        raise GitHubError(f"{what}: gave up after {self.max_attempts} attempts, last {one_line(problem)}") from failure

    def _backoff(self, attempt: int) -> float:
        """Exponential, capped, with jitter so that many clients do not retry in step."""
        ceiling = min(60.0, self.backoff * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _wait(self, seconds: float, why: str) -> None:
        if self._on_wait:
            self._on_wait(seconds, why)
        self._sleep(seconds)


@contextmanager
def _expected_shapes(about: str) -> Iterator[None]:
    """An answer missing the fields GitHub documents, or with fields of other types, becomes
    one UnusableAnswer line, not a traceback."""
    try:
        yield
    except _SHAPE_ERRORS as exc:
        raise UnusableAnswer(f"unexpected answer from GitHub about {about}: {_shape_problem(exc)}") from None


def _shape_problem(exc: Exception) -> str:
    return f"{type(exc).__name__} {exc}"


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
        error = NotFound if response.status_code == 404 else GitHubError
        raise error(f"{what}: {response.status_code} {_message(response)}")
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


def _ref(name: str) -> str:
    """A tag as it goes in a URL's path: slashes kept (releases/v1.2), everything else that could end it escaped."""
    return quote(name, safe="/")


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
    return _text(info["endCursor"]) if info["hasNextPage"] else None


# ---------------------------------------------------------------- reading GitHub's objects, checking each type


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{type(value).__name__} where text was expected")
    return value


def _count(value: Any) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise TypeError(f"{type(value).__name__} where a number was expected")
    if value is not None and not -(2**63) <= value < 2**63:
        raise ValueError(f"{value:.3g} is past what the store holds")
    return value


def _number(value: Any) -> int:
    number = _count(value)
    if number is None or number < 1:
        raise ValueError(f"{number} is no PR number")
    return number


def _moment(value: Any) -> datetime:
    moment = datetime.fromisoformat(_text(value))
    if moment.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone")
    return moment


def _items(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{what} is {type(value).__name__}, not a list")
    return value


def _file_object(item: Any) -> dict[str, Any]:
    """One of GitHub's file objects, checked: the prompt reads its filename, status, counts and patch."""
    if not isinstance(item, dict):
        raise TypeError(f"a file is {type(item).__name__}, not an object")
    _text(item["filename"])
    for key, kind in (("status", str), ("patch", str), ("additions", int), ("deletions", int)):
        if item.get(key) is not None and not isinstance(item[key], kind):
            raise TypeError(f"a file's {key} is {type(item[key]).__name__}")
    return item


def _paths(connection: dict[str, Any]) -> list[str]:
    return [_text(node["path"]) for node in _items(connection["nodes"], "file nodes")]


def _login(user: dict[str, Any] | None) -> str:
    # A deleted account shows as null; GitHub's own pages call it "ghost".
    return _text((user or {}).get("login") or "ghost")


def _merge_field(item: Any, under: str | None) -> Any:
    """The merge time a GraphQL node, or a search hit's `under` object, gives, as it gives it."""
    where = (item.get(under) or {}) if under else item
    return where.get("merged_at" if under else "mergedAt")


def _unmerged(item: Any, under: str | None = None) -> bool:
    """Whether a listed item is no merged PR: null, or one whose merge time is empty. One that cannot
    be told is read, so that reading says what is wrong with it."""
    try:
        return item is None or not _merge_field(item, under)
    except _SHAPE_ERRORS:
        return False


def _merge_time(item: Any) -> datetime | None:
    """When a listed item that could not be read merged, if that much can be read."""
    for under in (None, "pull_request"):
        try:
            return _moment(_merge_field(item, under))
        except _SHAPE_ERRORS:
            pass
    return None


def _read_each(items: list[Any], read: Callable[[Any], PullData | None]) -> Listing:
    """Each item read on its own: one of a shape that cannot be read is set aside, placed by what can be."""
    found = Listing([])
    for item in items:
        try:
            pull = read(item)
        except _SHAPE_ERRORS as exc:
            number = item.get("number") if isinstance(item, dict) else None
            placed = _merge_time(item)
            found.unreadable.append(Unreadable(
                number if isinstance(number, int) and not isinstance(number, bool) else None, placed, _shape_problem(exc)
            ))
        else:
            if pull:
                found.pulls.append(pull)
    return found


def _rest_pull(item: dict[str, Any]) -> PullData:
    """A search hit (no merged_by, counts or files) or a full pulls/N object."""
    merged_at = item.get("merged_at") or (item.get("pull_request") or {}).get("merged_at")
    if not merged_at:
        raise GitHubError(f"PR #{item['number']} is not merged")
    return PullData(
        **_rest_common(item),
        merged_at=_moment(merged_at),
        updated_at=_text(item["updated_at"]),
        merged_by=_login(item["merged_by"]) if "merged_by" in item else None,
        additions=_count(item.get("additions")),
        deletions=_count(item.get("deletions")),
        changed_files=_count(item.get("changed_files")),
    )


def _rest_common(item: dict[str, Any]) -> dict[str, Any]:
    """The fields every REST PR object has, merged or not."""
    return {
        "number": _number(item["number"]),
        "title": _text(item["title"]),
        "url": _text(item["html_url"]),
        "body": _text(item.get("body") or ""),
        "author": _login(item.get("user")),
        "labels": [_text(label["name"]) for label in _items(item.get("labels") or [], "labels")],
    }


def _release(item: dict[str, Any]) -> ReleaseData:
    return ReleaseData(
        tag=_text(item["tag_name"]),
        name=_text(item.get("name") or ""),
        url=_text(item.get("html_url") or ""),
        published_at=_moment(item["published_at"]),
        prerelease=bool(item.get("prerelease")),
    )


def _graphql_pull(node: dict[str, Any]) -> PullData:
    files = node["files"] or {"nodes": [], "pageInfo": {"hasNextPage": False}}
    return PullData(
        number=_number(node["number"]),
        title=_text(node["title"]),
        url=_text(node["url"]),
        body=_text(node.get("body") or ""),
        author=_login(node.get("author")),
        merged_at=_moment(node["mergedAt"]),
        updated_at=_text(node["updatedAt"]),
        labels=[_text(label["name"]) for label in _items(node["labels"]["nodes"], "labels")],
        merged_by=_login(node.get("mergedBy")),
        additions=_count(node["additions"]),
        deletions=_count(node["deletions"]),
        changed_files=_count(node["changedFiles"]),
        files=_paths(files),
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


def _pulls_by_number(numbers: list[int]) -> str:
    """One query for many PRs by number, each under an alias (p0, p1, ...): GraphQL takes no list of numbers."""
    fields = "".join(f"\n    p{index}: pullRequest(number: {number:d}) {{ ...Pull }}" for index, number in enumerate(numbers))
    return (
        "query PullsByNumber($owner: String!, $name: String!) {\n"
        f"  repository(owner: $owner, name: $name) {{{fields}\n  }}\n}}\n"
        "fragment Pull on PullRequest {" + _PULL_FIELDS + "}"
    )


PULL_FILES = """query PullFiles($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      files(first: 100, after: $after) { pageInfo { hasNextPage endCursor } nodes { path } }
    }
  }
}"""
