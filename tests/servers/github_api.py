"""A small GitHub API on 127.0.0.1 for tests and benches: REST and GraphQL shapes, rate limits, faults.

It holds a set of PRs per repository and answers what prdigest asks: the
repository, search/issues, pulls/N, pulls/N/files (Link pagination) and the
GraphQL search and files queries. It also holds tags (each with the history
of commits it reaches) and releases, and answers releases, commits and
compare pages as GitHub does. Every answer carries GitHub's rate-limit
headers; faults (5xx, secondary limits, slowness) are injected per path.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit
from zoneinfo import ZoneInfo

from servers.loopback import LoopbackServer

ISO = "%Y-%m-%dT%H:%M:%SZ"


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime(ISO) if moment else None


@dataclass
class FakePull:
    number: int
    title: str
    merged_at: datetime | None  # None: closed without being merged, or still open
    author: str = "ada-l"
    merged_by: str | None = "merge-bot"
    body: str = ""
    labels: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    additions: int = 12
    deletions: int = 3
    updated_at: datetime | None = None
    created_at: datetime | None = None
    closed_at: datetime | None = None
    open: bool = False  # not merged and not closed: under review

    def __post_init__(self) -> None:
        anchor = self.merged_at or self.closed_at or datetime(2026, 1, 1, tzinfo=UTC)
        self.closed_at = None if self.open else self.closed_at or anchor
        self.created_at = self.created_at or anchor - timedelta(days=2)
        self.updated_at = self.updated_at or anchor + timedelta(minutes=1)

    def touch(self, later: timedelta = timedelta(hours=1)) -> None:
        """An edit after the merge (a label, a comment): GitHub moves updated_at."""
        self.updated_at = (self.updated_at or datetime.now(UTC)) + later


@dataclass(frozen=True)
class FakeCommit:
    sha: str
    message: str


@dataclass
class FakeRelease:
    tag: str
    published_at: datetime | None  # None: a draft, which GitHub lists to tokens with push access only
    prerelease: bool = False
    name: str = ""
    created_at: datetime | None = None

    def __post_init__(self) -> None:
        self.created_at = self.created_at or self.published_at or datetime(2026, 1, 1, tzinfo=UTC)


class FakeHistory:
    """Commits on main and on release branches, as much of git as releases and compares need.

    A squash merge is one commit on main naming its PR; a cherry-pick copies a
    commit onto a branch as a new commit (a new SHA) with the same message.
    """

    def __init__(self, seed: str = "acme") -> None:
        self.seed = seed
        self.main: list[FakeCommit] = []
        self.branches: dict[str, list[FakeCommit]] = {}

    def _new(self, message: str) -> FakeCommit:
        count = len(self.main) + sum(len(commits) for commits in self.branches.values())
        return FakeCommit(hashlib.sha1(f"{self.seed}:{count}:{message}".encode()).hexdigest(), message)

    def merge(self, pull: FakePull, merge_commit: bool = False) -> FakeCommit:
        """`pull` merged into main: squashed ("Title (#N)"), or by a merge commit ("Merge pull request #N from …")."""
        if merge_commit:
            message = f"Merge pull request #{pull.number} from {pull.author}/change-{pull.number}\n\n{pull.title}"
        else:
            message = f"{pull.title} (#{pull.number})\n\n{pull.body}"
        return self.commit(message)

    def commit(self, message: str, branch: str | None = None) -> FakeCommit:
        commit = self._new(message)
        (self.branches[branch] if branch else self.main).append(commit)
        return commit

    def cut(self, branch: str) -> None:
        """A release branch from main as it is now."""
        self.branches[branch] = list(self.main)

    def cherry_pick(self, branch: str, commit: FakeCommit) -> FakeCommit:
        return self.commit(f"{commit.message}\n\n(cherry picked from commit {commit.sha})", branch)

    def head(self, branch: str | None = None) -> list[FakeCommit]:
        """The commits a tag made now on `branch` (main by default) reaches, oldest first."""
        return list(self.branches[branch] if branch else self.main)


@dataclass
class Fault:
    status: int = 502
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Bad Gateway"
    delay: float = 0.0  # seconds before answering; with status 200 and no payload the real answer follows
    payload: Any = None  # the body to answer instead of {"message": message}
    gate: threading.Event | None = None  # when given, nothing is answered while it is not set


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    operation: str | None = None  # GraphQL operation name
    authorization: str | None = None  # the Authorization header, as received


@dataclass
class _Limit:
    limit: int
    window: float
    remaining: int = -1
    reset: float = 0.0


SECONDARY_LIMIT = Fault(403, {"Retry-After": "7"}, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
TOO_MANY = Fault(429, {"Retry-After": "3"}, "Too Many Requests")


class FakeGitHub(LoopbackServer):
    """The fake service. Use as a context manager; `url` is its REST base, `url + "/graphql"` GraphQL."""

    def __init__(
        self,
        pulls: dict[str, list[FakePull]] | None = None,
        token: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repos: dict[str, dict[int, FakePull]] = {}
        self.tags: dict[str, dict[str, list[FakeCommit]]] = {}
        self.releases: dict[str, list[FakeRelease]] = {}
        for repo, items in (pulls or {}).items():
            self.add(repo, *items)
        self.token = token  # when set, any other token is refused with 401
        self.scopes: str | None = None  # a classic token's scopes, sent as X-OAuth-Scopes when a token is used
        self.clock = clock
        self.delay = 0.0  # every answer waits this long: a slow GitHub
        self.search_cap = 1000
        self.seen: list[Seen] = []
        # (PR number, "node" | "pull" | "files") -> what that answer becomes: its GraphQL search node, its
        # pulls/N object, or each of its files pages, in a shape GitHub does not document.
        self.reshape: dict[tuple[int, str], Callable[[Any], Any]] = {}
        self.limits = {"core": _Limit(5000, 3600), "search": _Limit(30, 60), "graphql": _Limit(5000, 3600)}
        self._faults: list[list[Any]] = []
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    @property
    def url(self) -> str:
        return self.origin


    def add(self, repo: str, *pulls: FakePull) -> None:
        self.repos.setdefault(repo, {}).update({pull.number: pull for pull in pulls})

    def tag(self, repo: str, name: str, history: list[FakeCommit]) -> None:
        """A tag reaching `history` (oldest first), as FakeHistory.head gives it."""
        self.repos.setdefault(repo, {})
        self.tags.setdefault(repo, {})[name] = list(history)

    def publish(self, repo: str, *releases: FakeRelease) -> None:
        """Releases (or drafts) of tags already made."""
        self.repos.setdefault(repo, {})
        self.releases.setdefault(repo, []).extend(releases)

    def fail(self, fault: Fault, match: str = "", times: int = 1) -> None:
        """The next `times` requests whose path (with its query, "?page=2") contains `match` get `fault`."""
        with self._lock:
            self._faults.append([match, fault, times])

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def exhaust(self, resource: str = "core", reset_in: float = 60.0) -> None:
        """Use up the primary rate limit of `resource` until `reset_in` seconds from now."""
        with self._lock:
            limit = self.limits[resource]
            limit.remaining, limit.reset = 0, self.clock() + reset_in

    def reshaped(self, number: int, answer: str, value: Any) -> Any:
        change = self.reshape.get((number, answer))
        return change(value) if change else value

    def count(self, path_part: str = "", operation: str | None = None) -> int:
        return sum(
            1 for seen in self.seen if path_part in seen.path and (operation is None or seen.operation == operation)
        )

    # -- the state behind the answers ------------------------------------------------

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for entry in self._faults:
                match, fault, times = entry
                if match in path and times > 0:
                    entry[2] -= 1
                    return fault
        return None

    def _spend(self, resource: str) -> dict[str, str]:
        """Count one request against `resource`; its headers (remaining "0" once used up)."""
        with self._lock:
            limit = self.limits[resource]
            now = self.clock()
            if limit.remaining < 0 or now >= limit.reset:
                limit.remaining, limit.reset = limit.limit, now + limit.window
            exhausted = limit.remaining == 0
            if not exhausted:
                limit.remaining -= 1
            headers = {
                "X-RateLimit-Limit": str(limit.limit),
                "X-RateLimit-Remaining": str(limit.remaining),
                "X-RateLimit-Reset": str(int(limit.reset)),
                "X-RateLimit-Used": str(limit.limit - limit.remaining),
                "X-RateLimit-Resource": resource,
            }
            return {**headers, "exhausted": "1"} if exhausted else headers

    def rate_limit(self) -> dict[str, Any]:
        """GET /rate_limit's answer: every resource as it stands, none spent by asking."""
        with self._lock:
            now = self.clock()
            resources = {}
            for name, limit in self.limits.items():
                fresh = limit.remaining < 0 or now >= limit.reset
                remaining, reset = (limit.limit, now + limit.window) if fresh else (limit.remaining, limit.reset)
                resources[name] = {"limit": limit.limit, "remaining": remaining, "reset": int(reset),
                                   "used": limit.limit - remaining}
        return {"resources": resources, "rate": resources["core"]}

    def merged(self, repo: str, query: str) -> list[FakePull]:
        """What GitHub's search finds for `query` (repo:, is:merged, merged:A..B), oldest created first."""
        pulls = list(self.repos.get(repo, {}).values())
        terms = query.split()
        if "is:merged" in terms:
            pulls = [pull for pull in pulls if pull.merged_at]
        for term in terms:
            if term.startswith("merged:") and ".." in term:
                low, high = (datetime.fromisoformat(part) for part in term[len("merged:"):].split(".."))
                pulls = [pull for pull in pulls if pull.merged_at and low <= pull.merged_at <= high]
        descending = "sort:created-desc" in terms
        return sorted(pulls, key=lambda pull: (pull.created_at, pull.number), reverse=descending)


def _repo_of(query: str) -> str | None:
    found = re.search(r"(?:^|\s)repo:(\S+)", query)
    return found.group(1) if found else None


def _user(login: str | None) -> dict[str, Any] | None:
    return {"login": login, "type": "User"} if login else None


def rest_pull(repo: str, pull: FakePull, full: bool) -> dict[str, Any]:
    html = f"https://github.example/{repo}/pull/{pull.number}"
    item: dict[str, Any] = {
        "number": pull.number,
        "title": pull.title,
        "html_url": html,
        "state": "open" if pull.open else "closed",
        "user": _user(pull.author),
        "body": pull.body or None,
        "labels": [{"name": name} for name in pull.labels],
        "created_at": _iso(pull.created_at),
        "updated_at": _iso(pull.updated_at),
        "closed_at": _iso(pull.closed_at),
    }
    if not full:
        item["pull_request"] = {"html_url": html, "merged_at": _iso(pull.merged_at)}
        return item
    return {
        **item,
        "merged": pull.merged_at is not None,
        "merged_at": _iso(pull.merged_at),
        "merged_by": _user(pull.merged_by) if pull.merged_at else None,
        "additions": pull.additions,
        "deletions": pull.deletions,
        "changed_files": len(pull.files),
    }


def _newest_created(releases: list[FakeRelease]) -> list[FakeRelease]:
    return sorted(releases, key=lambda release: (release.created_at, release.tag), reverse=True)


def _rest_release(repo: str, release: FakeRelease) -> dict[str, Any]:
    return {
        "id": int(hashlib.sha1(release.tag.encode()).hexdigest()[:8], 16),
        "tag_name": release.tag,
        "target_commitish": "main",
        "name": release.name or release.tag,
        "draft": release.published_at is None,
        "prerelease": release.prerelease,
        "created_at": _iso(release.created_at),
        "published_at": _iso(release.published_at),
        "body": f"Release {release.tag}",
        "html_url": f"https://github.example/{repo}/releases/tag/{release.tag}",
    }


def _rest_commit(commit: FakeCommit) -> dict[str, Any]:
    return {"sha": commit.sha, "commit": {"message": commit.message, "author": {"name": "Ada L", "date": "2026-01-01T00:00:00Z"}},
            "parents": []}


def _file(path: str) -> dict[str, Any]:
    return {"filename": path, "status": "modified", "additions": 1, "deletions": 1, "changes": 2,
            "patch": "@@ -1 +1 @@\n-old\n+new"}


def _cursor(offset: int) -> str:
    return base64.b64encode(f"cursor:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    return int(base64.b64decode(cursor).decode().split(":")[1]) if cursor else 0


def _selected(query: str, node: dict[str, Any]) -> dict[str, Any]:
    """Only the fields the query names, as GraphQL would answer."""
    return {key: value for key, value in node.items() if re.search(rf"\b{key}\b", query)}


def _graphql_node(repo: str, pull: FakePull, query: str) -> dict[str, Any]:
    files = pull.files[:100]
    node = {
        "number": pull.number,
        "title": pull.title,
        "url": f"https://github.example/{repo}/pull/{pull.number}",
        "body": pull.body,
        "updatedAt": _iso(pull.updated_at),
        "mergedAt": _iso(pull.merged_at),
        "author": {"login": pull.author} if pull.author else None,
        "mergedBy": {"login": pull.merged_by} if pull.merged_by and pull.merged_at else None,
        "additions": pull.additions,
        "deletions": pull.deletions,
        "changedFiles": len(pull.files),
        "labels": {"nodes": [{"name": name} for name in pull.labels]},
        "files": {
            "pageInfo": {"hasNextPage": len(pull.files) > 100, "endCursor": _cursor(len(files))},
            "nodes": [{"path": path} for path in files],
        },
    }
    return _selected(query, node)


def _handler(github: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"github": github})


class _Handler(BaseHTTPRequestHandler):
    github: FakeGitHub
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the client's
    # delayed ACK would add 40 ms to every answer.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    # -- plumbing ------------------------------------------------------------

    def _serve(self, method: str) -> None:
        split = urlsplit(self.path)
        # GitHub Enterprise Server serves REST under /api/v3 and GraphQL at /api/graphql.
        path = split.path.removeprefix("/api/v3").replace("/api/graphql", "/graphql")
        query = {key: values[-1] for key, values in parse_qs(split.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        seen = Seen(method, path, query, _operation(body.get("query", "")) if path == "/graphql" else None,
                    self.headers.get("Authorization"))
        self.github.seen.append(seen)
        if self.github.delay:
            time.sleep(self.github.delay)
        if self._faulted(f"{path}?{split.query}" if split.query else path) or self._refused(path):
            return
        auth = self.headers.get("Authorization")
        scopes = {"X-OAuth-Scopes": self.github.scopes} if auth and self.github.scopes is not None else {}
        if path == "/rate_limit":  # GitHub does not count it against any limit
            self._send(200, self.github.rate_limit(), scopes)
            return
        resource = "graphql" if path == "/graphql" else "search" if path.startswith("/search/") else "core"
        limits = self.github._spend(resource)
        if limits.pop("exhausted", None):
            self._limited(resource, limits)
            return
        try:
            status, payload, headers = self._route(method, path, query, body)
        except _Answer as answer:
            status, payload, headers = answer.status, {"message": answer.message}, {}
        self._send(status, payload, {**limits, **scopes, **headers})

    def _faulted(self, path: str) -> bool:
        """Whether a fault injected for `path` answered (after its gate and delay)."""
        fault = self.github._take_fault(path)
        if fault is None:
            return False
        if fault.gate is not None:
            fault.gate.wait(120)  # a test that forgot to open it still ends
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status == 200 and fault.payload is None:
            return False
        self._send(fault.status, {"message": fault.message} if fault.payload is None else fault.payload, fault.headers)
        return True

    def _refused(self, path: str) -> bool:
        """Whether the request's token was refused: a wrong one, or none for GraphQL."""
        auth = self.headers.get("Authorization")
        token = auth.split(" ", 1)[-1] if auth else None
        if (token and self.github.token and token != self.github.token) or (path == "/graphql" and not token):
            self._send(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
            return True
        return False

    def _limited(self, resource: str, limits: dict[str, str]) -> None:
        message = f"API rate limit exceeded for {resource}."
        if resource == "graphql":
            self._send(200, {"errors": [{"type": "RATE_LIMITED", "message": message}]}, limits)
        else:
            self._send(403, {"message": message}, limits)

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (a timeout test)

    def _links(self, path: str, query: dict[str, str], page: int, last: int) -> dict[str, str]:
        if page >= last:
            return {}
        link = lambda n, rel: f'<http://{self.headers["Host"]}{path}?{urlencode({**query, "page": n})}>; rel="{rel}"'
        return {"Link": f"{link(page + 1, 'next')}, {link(last, 'last')}"}

    # -- REST and GraphQL ------------------------------------------------------

    def _route(self, method: str, path: str, query: dict[str, str], body: dict) -> tuple[int, Any, dict]:
        if method == "POST" and path == "/graphql":
            return 200, self._graphql(body), {}
        if path == "/search/issues":
            return self._search(query)
        parts = path.strip("/").split("/")
        if parts[0] != "repos" or len(parts) < 3:
            raise _Answer(404, "Not Found")
        repo = f"{parts[1]}/{parts[2]}"
        if repo not in self.github.repos:
            raise _Answer(404, "Not Found")
        if len(parts) == 3:
            return 200, {"full_name": repo, "name": parts[2], "owner": {"login": parts[1]}, "private": False}, {}
        return self._repo_route(repo, parts[3:], path, query)

    def _repo_route(self, repo: str, parts: list[str], path: str, query: dict[str, str]) -> tuple[int, Any, dict]:
        """What is under /repos/OWNER/NAME/: releases, commits, a comparison, a pull and its files."""
        if parts == ["releases"]:
            return self._page([_rest_release(repo, release) for release in _newest_created(self.github.releases.get(repo, []))],
                              path, query)
        if parts == ["commits"]:
            history = self.github.tags.get(repo, {}).get(query.get("sha", ""))
            if history is None:
                raise _Answer(404, "Not Found")
            return self._page([_rest_commit(commit) for commit in reversed(history)], path, query)
        if parts[0] == "compare" and len(parts) > 1:
            return self._compare(repo, unquote("/".join(parts[1:])), path, query)
        pulls = self.github.repos[repo]
        if len(parts) in (2, 3) and parts[0] == "pulls" and parts[1].isdigit() and int(parts[1]) in pulls:
            return self._pull(repo, pulls[int(parts[1])], parts[2:], path, query)
        raise _Answer(404, "Not Found")

    def _pull(self, repo: str, pull: FakePull, rest: list[str], path: str, query: dict[str, str]) -> tuple[int, Any, dict]:
        if not rest:
            return 200, self.github.reshaped(pull.number, "pull", rest_pull(repo, pull, full=True)), {}
        if rest[0] == "files":
            status, page, links = self._page([_file(p) for p in pull.files[:3000]], path, query)
            return status, self.github.reshaped(pull.number, "files", page), links
        raise _Answer(404, "Not Found")

    def _page(self, items: list, path: str, query: dict[str, str]) -> tuple[int, Any, dict]:
        per_page = min(int(query.get("per_page", 30)), 100)
        page = int(query.get("page", 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]
        return 200, chunk, self._links(path, query, page, last)

    def _compare(self, repo: str, spec: str, path: str, query: dict[str, str]) -> tuple[int, Any, dict]:
        """base...head: the commits head reaches and base does not, oldest first; 250 at most unless paged."""
        tags = self.github.tags.get(repo, {})
        base, dots, head = spec.partition("...")
        if not dots or base not in tags or head not in tags:
            raise _Answer(404, "Not Found")
        in_base, in_head = {c.sha for c in tags[base]}, {c.sha for c in tags[head]}
        ahead = [_rest_commit(commit) for commit in tags[head] if commit.sha not in in_base]
        behind = len(in_base - in_head)
        if "per_page" in query or "page" in query:
            status, commits, links = self._page(ahead, path, query)
        else:
            status, commits, links = 200, ahead[:250], {}
        state = ("diverged" if behind else "ahead") if ahead else ("behind" if behind else "identical")
        body = {"url": f"https://api.github.example/repos/{repo}/compare/{spec}", "status": state,
                "ahead_by": len(ahead), "behind_by": behind, "total_commits": len(ahead),
                "commits": commits, "files": []}
        return status, body, links

    def _search(self, query: dict[str, str]) -> tuple[int, Any, dict]:
        q = query.get("q", "")
        repo = _repo_of(q)
        if repo not in self.github.repos:
            raise _Answer(422, "Validation Failed: The listed users and repositories cannot be searched "
                               "either because the resources do not exist or you do not have permission to view them.")
        found = self.github.merged(repo, q + (" sort:created-desc" if query.get("order") == "desc" else ""))
        visible = found[: self.github.search_cap]
        status, page, links = self._page([rest_pull(repo, pull, full=False) for pull in visible], "/search/issues", query)
        return status, {"total_count": len(found), "incomplete_results": False, "items": page}, links

    def _graphql(self, body: dict) -> dict[str, Any]:
        text, variables = body.get("query", ""), body.get("variables") or {}
        repo = f"{variables.get('owner')}/{variables.get('name')}"
        pulls = self.github.repos.get(repo)
        if pulls is None:
            return {"data": {"repository": None, "search": None}, "errors": [{
                "type": "NOT_FOUND", "path": ["repository"],
                "message": f"Could not resolve to a Repository with the name '{repo}'."}]}
        operation = _operation(text)
        if operation == "PullFiles":
            pull = pulls[variables["number"]]
            start = _offset(variables.get("after"))
            files = pull.files[start : start + 100]
            end = start + len(files)
            connection = {"pageInfo": {"hasNextPage": end < len(pull.files), "endCursor": _cursor(end)},
                          "nodes": [{"path": path} for path in files]}
            return {"data": {"repository": {"pullRequest": {"files": connection}}}}
        if operation == "PullsByNumber":
            found: dict[str, Any] = {}
            errors = []
            for alias, number in re.findall(r"(\w+): pullRequest\(number: (\d+)\)", text):
                pull = pulls.get(int(number))
                found[alias] = _graphql_node(repo, pull, text) if pull else None
                if pull is None:
                    errors.append({"type": "NOT_FOUND", "path": ["repository", alias], "locations": [],
                                   "message": f"Could not resolve to a PullRequest with the number of {number}."})
            return {"data": {"repository": found}, **({"errors": errors} if errors else {})}
        if operation != "MergedPulls":
            return {"errors": [{"message": f"unknown operation {operation}"}]}
        first = variables["first"]
        if not 1 <= first <= 100:
            return {"errors": [{"message": "Requesting more than 100 records on the connection is not allowed."}]}
        found = self.github.merged(_repo_of(variables["q"]) or "", variables["q"])
        visible = found[: self.github.search_cap]
        start = _offset(variables.get("after"))
        page = visible[start : start + first]
        end = start + len(page)
        search = {
            "issueCount": len(found),
            "pageInfo": {"hasNextPage": end < len(visible), "endCursor": _cursor(end)},
            "nodes": [self.github.reshaped(pull.number, "node", _graphql_node(repo, pull, text)) for pull in page],
        }
        return {"data": {"repository": {"nameWithOwner": repo}, "search": search}}



class _Answer(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _operation(query: str) -> str | None:
    found = re.match(r"\s*query\s+(\w+)", query)
    return found.group(1) if found else None


def day_of_pulls(
    day: date,
    count: int,
    tz: ZoneInfo,
    first_number: int = 1000,
    big: dict[int, int] | None = None,
    unmerged_every: int = 0,
) -> list[FakePull]:
    """`count` merged PRs spread over a local day (plus closed-unmerged ones every `unmerged_every`).

    `big` maps an index to a file count, for PRs whose files take several pages.
    """
    start = datetime.combine(day, datetime.min.time(), tzinfo=tz)
    step = timedelta(days=1) / (count + 1)
    pulls = []
    paths = ["vllm/model_executor/models/llama.py", "vllm/v1/core/sched/scheduler.py", "docs/usage/faq.md",
             "csrc/attention/paged_attention_v1.cu", "tests/kernels/test_moe.py"]
    for index in range(count):
        number = first_number + index
        files_count = (big or {}).get(index, 1 + index % 4)
        files = [paths[(index + k) % len(paths)] if k < len(paths) else f"src/module_{k}.py" for k in range(files_count)]
        pulls.append(FakePull(
            number=number,
            title=f"[Core] Change {number}: tighten the scheduler budget",
            merged_at=(start + step * (index + 1)).astimezone(UTC).replace(microsecond=0),
            author=f"dev-{index % 7}",
            body=f"Makes change {number} so that the scheduler keeps its token budget.\n\nFixes #{number - 500}.",
            labels=["ready"] if index % 3 == 0 else [],
            files=files,
            additions=10 * (index + 1),
            deletions=index,
        ))
        if unmerged_every and index % unmerged_every == 0:
            pulls.append(FakePull(
                number=number + 10000,
                title=f"Abandoned attempt {number}",
                merged_at=None,
                closed_at=(start + step * (index + 1)).astimezone(UTC).replace(microsecond=0),
                files=["README.md"],
            ))
    return pulls
