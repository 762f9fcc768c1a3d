"""Filling the store from GitHub: the PRs merged in a window, oldest merge first, one transaction each.

The repository's cursor (repos.ingest_cursor) is the merge time up to which
every PR is stored. It advances in the same transaction as the PR that moves
it, so a run killed at any moment resumes where it stopped and stores nothing twice.
A PR GitHub answers about in a shape that cannot be read is skipped, and the
cursor stays before it, so the next run lists it again.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import day_bounds, from_utc_text, local_day, now_text, to_utc_text
from store.db import write_transaction
from store.model import PullRequest
from store.sources.github import GitHubClient, GitHubError, Listing, OpenPull, PullData, UnusableAnswer
from store.tables.prs import get_pr, save_pr
from store.understanding.areas import classify
from store.understanding.summary import classify_type, extractive_summary

# GitHub's search index trails merges by seconds to minutes; continuing runs
# list this much before the cursor again so a late-indexed merge is not skipped.
# PRs already stored and unchanged cost nothing but a search hit.
OVERLAP = timedelta(hours=1)


@dataclass(frozen=True)
class Window:
    """The UTC instants [start, end) whose merges a run ingests."""

    start: datetime
    end: datetime


@dataclass
class Status:
    """Where a run is, for a progress line."""

    repo: str
    done: int
    total: int
    requests: int
    rate_limit_waits: int


Progress = Callable[[Status], None]


@dataclass
class Ingested:
    repo: str
    window: Window
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0  # PRs whose answers could not be read: the next run tries them again

    @property
    def total(self) -> int:
        return self.new + self.updated + self.unchanged


def ingest_cursor(db: Database, repo: str) -> datetime | None:
    row = db.execute("select ingest_cursor from repos where name = ?", [repo]).fetchone()
    return from_utc_text(row[0]) if row and row[0] else None


def plan_window(
    db: Database, repo: str, tz: ZoneInfo, since: date | None, until: date | None, now: datetime
) -> Window:
    """Local days since..until; without `since`, from the cursor, or on a first run from the start of yesterday."""
    today = local_day(now, tz)
    end = day_bounds(until or today, tz)[1]
    if since is not None:
        return Window(day_bounds(since, tz)[0], end)
    cursor = ingest_cursor(db, repo)
    start = cursor - OVERLAP if cursor else day_bounds(today - timedelta(days=1), tz)[0]
    return Window(start, end)


def ingest_repo(
    db: Database, client: GitHubClient, repo: str, window: Window, progress: Progress | None = None
) -> Ingested:
    """Store every PR of `repo` merged in `window`; PRs GitHub has not changed since they were stored are skipped."""
    done = Ingested(repo, window)
    if window.start >= window.end:
        return done
    listing = client.merged_pulls(repo, window.start, window.end)
    listed = listing.pulls
    cursor = ingest_cursor(db, repo)
    # The cursor promises "everything merged before it is stored"; a window
    # that starts after it leaves a gap, so only a contiguous run may move it.
    moves_cursor = cursor is None or window.start <= cursor
    # Nor may it pass a PR left for the next run: from the first one on, it stays.
    held = _unreadable_from(client, repo, listing, window)
    done.skipped = len(listing.unreadable)
    show = progress or (lambda status: None)
    show(Status(repo, 0, len(listed), client.requests, client.rate_limit_waits))
    for seen, pull in enumerate(listed, 1):
        if _stored_version(db, repo, pull.number) == pull.updated_at:
            done.unchanged += 1
        else:
            try:
                detailed = client.pull_details(repo, pull)
            except UnusableAnswer as exc:
                client.warn(f"{repo}: PR #{pull.number} skipped, a later run tries it again: {exc}")
                done.skipped += 1
                held = min(held or pull.merged_at, pull.merged_at)
            except GitHubError as exc:
                raise GitHubError(
                    f"PR #{pull.number}: {exc}; {done.total} of {len(listed)} PRs stored, run again to continue"
                ) from None
            else:
                with write_transaction(db):
                    new = store_pull(db, repo, detailed)
                    if moves_cursor and (held is None or detailed.merged_at < held):
                        _advance_cursor(db, repo, detailed.merged_at)
                if new:
                    done.new += 1
                else:
                    done.updated += 1
        show(Status(repo, seen, len(listed), client.requests, client.rate_limit_waits))
    passed = [pull.merged_at for pull in listed if held is None or pull.merged_at < held]
    if moves_cursor and passed:
        # Unchanged PRs at the end of what is stored still count as stored.
        with write_transaction(db):
            _advance_cursor(db, repo, passed[-1])
    return done


def _unreadable_from(client: GitHubClient, repo: str, listing: Listing, window: Window) -> datetime | None:
    """The earliest merge among the PRs the listing gave unreadably (the window's start when one's
    is unknown), each told in a warning; None when there are none."""
    for pr in listing.unreadable:
        which = f"PR #{pr.number}" if pr.number else "a PR"
        client.warn(f"{repo}: {which} GitHub listed could not be read ({pr.problem}); a later run tries it again")
    return min((pr.merged_at or window.start for pr in listing.unreadable), default=None)


@dataclass(frozen=True)
class Unmerged:
    """A PR GitHub has not merged, read for a preview; never stored, since the store holds merged PRs."""

    state: str  # open | closed
    pr: PullRequest  # with its areas and a summary written without a model; its merged_at is when it was opened


def fetch_pull(db: Database, client: GitHubClient, repo: str, number: int) -> PullRequest | Unmerged | None:
    """One PR asked for by number: a merged one is stored as ingest stores it (the cursor stays where it
    is) and read back; one not merged is read, not stored. None when GitHub has no such PR."""
    found = client.pull(repo, number)
    if isinstance(found, OpenPull):
        return Unmerged(found.state, _unmerged_pr(repo, found))
    if found is None:
        return None
    with write_transaction(db):
        store_pull(db, repo, found)
    return get_pr(db, repo, number)


def _unmerged_pr(repo: str, pull: OpenPull) -> PullRequest:
    pr = _as_pr(repo, pull)
    pr.type, pr.summary = classify_type(pr), extractive_summary(pr)
    return pr


def _as_pr(repo: str, pull: PullData | OpenPull) -> PullRequest:
    """GitHub's PR as the store keeps it, without type or summary yet; one not merged holds when it was opened."""
    if isinstance(pull, PullData):
        merged_by, merged_at, counts = pull.merged_by, pull.merged_at, (pull.changed_files, pull.additions, pull.deletions)
    else:
        merged_by, merged_at, counts = None, pull.opened_at, (None, None, None)
    return PullRequest(
        repo=repo,
        number=pull.number,
        title=pull.title,
        url=pull.url,
        author=pull.author,
        merged_by=merged_by,
        merged_at=merged_at,
        type="",
        files=pull.files or [],
        changed_files=counts[0],
        labels=pull.labels,
        areas=classify(pull.title, pull.files or [], pull.labels, repo),
        body=pull.body,
        additions=counts[1],
        deletions=counts[2],
    )


def _stored_version(db: Database, repo: str, number: int) -> str | None:
    row = db.execute(
        "select github_updated_at from prs where repo = ? and number = ?", [repo, number]
    ).fetchone()
    return row[0] if row else None


def store_pull(db: Database, repo: str, pull: PullData) -> bool:
    """Write one detailed PR (inside the caller's transaction, if one is open); True when it is new to the store."""
    existing = get_pr(db, repo, pull.number)
    pr = _as_pr(repo, pull)
    if existing and existing.summary and existing.summary.source != "extractive":
        # An imported report's or a model's summary, and the type judged with
        # it, are better than what can be extracted here: refresh the rest only.
        pr.type, pr.summary = existing.type, existing.summary
    else:
        pr.type = classify_type(pr)
        pr.summary = extractive_summary(pr)
    row_id = save_pr(db, pr)
    db.table("prs").update(row_id, {"github_updated_at": pull.updated_at})
    return existing is None


def _advance_cursor(db: Database, repo: str, merged_at: datetime) -> None:
    """Move the cursor forward to `merged_at`, never back (another run may already be further)."""
    db.execute(
        "insert into repos (name, ingest_cursor, updated_at) values (?, ?, ?) "
        "on conflict (name) do update set ingest_cursor = max(coalesce(ingest_cursor, ''), excluded.ingest_cursor), "
        "updated_at = excluded.updated_at",
        [repo, to_utc_text(merged_at), now_text()],
    )
