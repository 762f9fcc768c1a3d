"""Filling the store with releases from GitHub: list the new ones, then map each one's range to PR numbers.

Listing reads pages, the last created release first, until a page holds a release
already stored. Mapping reads a release's range (the compare of its previous
release's tag with its own) whole, then writes its PR numbers in the transaction
that marks it mapped: a new release maps only its own range, and a run killed at
any moment maps that release again from the start, never twice and never in part.

Only releases published since the store's oldest PR (or the run's window) are
mapped: an older one cannot hold a PR the store has, and mapping all of a busy
repository's history would cost hundreds of requests.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlite_utils import Database

from store.db import write_transaction
from store.sources.github import GitHubClient, GitHubError, NotFound, TooLong, UnusableAnswer
from store.sources.ingest import store_pull
from store.tables.prs import earliest_merge
from store.tables.releases import (
    Release,
    get_release,
    known_tags,
    listed_completely,
    previous_release,
    record_range,
    save_listed,
    unmapped,
)
from store.understanding.releases import commit_prs


@dataclass
class ReleasesIngested:
    repo: str
    new: int = 0  # releases listed for the first time
    mapped: list[Release] = field(default_factory=list)  # releases whose range this run read, as stored
    missing: list[tuple[str, str]] = field(default_factory=list)  # (tag, why) of each release whose range was not read


def ingest_releases(db: Database, client: GitHubClient, repo: str, since: datetime) -> ReleasesIngested:
    """List `repo`'s new releases and map every release published since `since` (or the oldest stored PR)."""
    done = ReleasesIngested(repo)
    done.new = list_new(db, client, repo)
    todo = unmapped(db, repo, min(since, earliest_merge(db, repo) or since))
    for release in todo:
        try:
            mapped = map_release(db, client, release)
        except (NotFound, UnusableAnswer, TooLong) as exc:
            # A tag deleted on GitHub, an answer of no known shape, a range too long to read: the others
            # still map, and the next run tries this one again.
            done.missing.append((release.tag, str(exc)))
            continue
        except GitHubError as exc:
            raise GitHubError(
                f"release {release.tag}: {exc}; {len(done.mapped)} of {len(todo)} releases mapped, run again to continue"
            ) from None
        if mapped is not None:
            done.mapped.append(mapped)
    return done


def map_release(db: Database, client: GitHubClient, release: Release) -> Release | None:
    """Read `release`'s range and record its PR numbers; the release as stored then. None when its previous
    release may not be listed yet (no listing reached the end), or another process mapped it meanwhile."""
    previous = previous_release(db, release.repo, release)
    if previous is None and not listed_completely(db, release.repo):
        return None
    base = previous.tag if previous else None
    messages = client.range_messages(release.repo, base, release.tag)
    numbers = (number for message in messages for number in commit_prs(message))
    if not record_range(db, release, base, numbers, len(messages)):
        return None
    return get_release(db, release.repo, release.tag)


def fetch_missing(db: Database, client: GitHubClient, repo: str, numbers: Sequence[int]) -> list[int]:
    """Fetch and store the merged PRs among `numbers` (those a range names and the store lacks), each in its
    own transaction as it comes, so a failure keeps those stored; the numbers stored. The others are no merged PR."""
    stored = []
    for pull in client.pulls(repo, numbers):
        with write_transaction(db):
            store_pull(db, repo, pull)
        stored.append(pull.number)
    return stored


def list_new(db: Database, client: GitHubClient, repo: str) -> int:
    """Store the releases GitHub lists that the store lacks; how many. A listing stops at the first page
    holding a stored release once a listing has reached the end: everything after it is stored already."""
    known, complete = known_tags(db, repo), listed_completely(db, repo)
    listed, ended = client.releases(repo, lambda page: complete and any(item.tag in known for item in page))
    releases = [
        Release(repo, item.tag, item.name, item.url, item.published_at, item.prerelease) for item in reversed(listed)
    ]
    return save_listed(db, repo, releases, complete=ended)
