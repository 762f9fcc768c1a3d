"""A repository's releases, and the PRs each one's range names.

A release is stored when it is listed and mapped later: its range (the commits
from its previous release's tag to its own) is read once, and the PR numbers it
names are written in the same transaction that marks it mapped. A PR's release
is the first, by publish time, whose range names it; when an older release is
mapped later, that answer changes with it, so it is read rather than stored.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text, now_text, to_utc_text
from store.db import write_transaction
from store.subscription.cadence import RELEASES
from store.tables.posts import DONE, EMPTY
from store.tables.teams import Team
from store.understanding.releases import version_key


@dataclass(frozen=True)
class Release:
    repo: str
    tag: str
    name: str
    url: str
    published_at: datetime
    prerelease: bool = False
    previous: str | None = None  # the tag its range starts from; None for the first release, or until mapped
    mapped: bool = False  # its range was read and its PRs recorded
    commits: int | None = None  # commits in its range, once mapped
    prs: int = 0  # PR numbers its range names, once mapped

    @property
    def title(self) -> str:
        """The tag with the release's name: "v0.11.0", "v0.11.0: faster MoE" (a name holding the tag), "v0.11.0 (Ramen)"."""
        name = self.name.strip()
        return name if self.tag in name else f"{self.tag} ({name})" if name else self.tag


def _columns(table: str = "releases") -> str:
    """The columns a Release is read from, with the count of the PR numbers its range names."""
    names = ("tag", "name", "url", "published_at", "prerelease", "previous_tag", "mapped_at", "range_commits")
    return ", ".join(f"{table}.{name}" for name in names) + (
        f", (select count(*) from release_prs as n where n.repo = {table}.repo and n.tag = {table}.tag)"
    )


def _from_row(repo: str, row: Any) -> Release:
    tag, name, url, published, prerelease, previous, mapped_at, commits, prs = row
    return Release(repo, tag, name or "", url or "", from_utc_text(published), bool(prerelease), previous,
                   mapped_at is not None, commits, prs)


def save_listed(db: Database, repo: str, releases: Iterable[Release], complete: bool) -> int:
    """Store releases as GitHub lists them (never drafts); how many are new. `complete`: the listing reached
    its end, so the oldest release stored is the repository's first."""
    now, new = now_text(), 0
    with write_transaction(db):
        for release in releases:
            values = [release.name, release.url, to_utc_text(release.published_at), int(release.prerelease)]
            # A release edited on GitHub (renamed, made a full release) is updated; its range stays as it was read.
            changed = db.execute(
                "update releases set name = ?, url = ?, published_at = ?, prerelease = ?, updated_at = ?"
                " where repo = ? and tag = ?",
                [*values, now, repo, release.tag],
            ).rowcount
            if not changed:
                db.execute(
                    "insert into releases (repo, tag, name, url, published_at, prerelease, created_at, updated_at)"
                    " values (?, ?, ?, ?, ?, ?, ?, ?)",
                    [repo, release.tag, *values, now, now],
                )
                new += 1
        if complete:
            db.execute(
                "insert into repos (name, releases_listed_at, updated_at) values (?, ?, ?)"
                " on conflict (name) do update set releases_listed_at = excluded.releases_listed_at,"
                " updated_at = excluded.updated_at",
                [repo, now, now],
            )
    return new


def listed_completely(db: Database, repo: str) -> bool:
    row = db.execute("select releases_listed_at from repos where name = ?", [repo]).fetchone()
    return bool(row and row[0])


def known_tags(db: Database, repo: str) -> set[str]:
    return {row[0] for row in db.execute("select tag from releases where repo = ?", [repo])}


def get_release(db: Database, repo: str, tag: str) -> Release | None:
    row = db.execute(f"select {_columns()} from releases where repo = ? and tag = ?", [repo, tag]).fetchone()
    return _from_row(repo, row) if row else None


def releases_of(db: Database, repo: str, limit: int | None = None) -> list[Release]:
    """The repository's releases, the last published first."""
    rows = db.execute(
        f"select {_columns()} from releases where repo = ? order by published_at desc, tag desc limit ?",
        [repo, -1 if limit is None else limit],
    )
    return [_from_row(repo, row) for row in rows]


def latest_release(db: Database, repo: str, final: bool = True) -> Release | None:
    """The last release published (a full release only, as GitHub's "latest", unless not `final`)."""
    return next((release for release in releases_of(db, repo) if not (final and release.prerelease)), None)


def previous_release(db: Database, repo: str, release: Release) -> Release | None:
    """The release whose tag starts `release`'s range: among those published before it (full releases only,
    for a full release: v0.11.0 follows v0.10.2, not v0.11.0rc2), the highest lower version, so a patch of
    an older line published late follows its own line; the last published when the tags are no versions."""
    earlier = [
        other for other in releases_of(db, repo)
        if other.published_at < release.published_at and not (other.prerelease and not release.prerelease)
    ]
    key = version_key(release.tag)
    lower = [(other_key, other) for other in earlier if key and (other_key := version_key(other.tag)) and other_key < key]
    if lower:
        return max(lower, key=lambda pair: pair[0])[1]
    return earlier[0] if earlier else None  # releases_of gives the last published first


def unmapped(db: Database, repo: str, since: datetime) -> list[Release]:
    """Releases published at or after `since` whose range is not read yet, the last published first."""
    rows = db.execute(
        f"select {_columns()} from releases where repo = ? and mapped_at is null and published_at >= ?"
        " order by published_at desc, tag desc",
        [repo, to_utc_text(since)],
    )
    return [_from_row(repo, row) for row in rows]


def record_range(db: Database, release: Release, previous: str | None, numbers: Iterable[int], commits: int) -> bool:
    """Record the PR numbers `release`'s range names and mark it mapped, in one transaction; False (nothing
    written) when another process mapped it first."""
    with write_transaction(db):
        row = db.execute(
            "select mapped_at from releases where repo = ? and tag = ?", [release.repo, release.tag]
        ).fetchone()
        if row is None or row[0] is not None:
            return False
        db.execute(
            "insert or ignore into release_prs (repo, tag, number) select ?, ?, value from json_each(?)",
            [release.repo, release.tag, json.dumps(sorted(set(numbers)))],
        )
        db.execute(
            "update releases set previous_tag = ?, range_commits = ?, mapped_at = ?, updated_at = ?"
            " where repo = ? and tag = ?",
            [previous, commits, now_text(), now_text(), release.repo, release.tag],
        )
    return True


def range_numbers(db: Database, repo: str, tag: str) -> list[int]:
    """Every PR number the release's range names, stored or not, in order."""
    rows = db.execute("select number from release_prs where repo = ? and tag = ? order by number", [repo, tag])
    return [row[0] for row in rows]


def shipped_in(db: Database, repo: str, numbers: Iterable[int]) -> dict[int, list[Release]]:
    """For each of `numbers` whose PR a mapped release names, those releases in the order they were published."""
    rows = db.execute(
        f"select p.number, {_columns('r')} from release_prs as p"
        " join releases as r on r.repo = p.repo and r.tag = p.tag"
        " where p.repo = ? and p.number in (select value from json_each(?))"
        " order by p.number, r.published_at, r.tag",
        [repo, json.dumps(sorted(set(numbers)))],
    )
    found: dict[int, list[Release]] = {}
    for number, *rest in rows:
        found.setdefault(number, []).append(_from_row(repo, rest))
    return found


def due_releases(
    db: Database, team: Team, channel: str, repo: str, filter: str, since: datetime, kind: str = RELEASES
) -> list[Release]:
    """The mapped releases published since `since` whose post to the team's `channel` (through the
    subscription's `filter`, as its canonical text, and of its `kind`: a release thread, or a person's PRs in
    it) is not finished, the first published first."""
    rows = db.execute(
        f"select {_columns()} from releases where repo = ? and mapped_at is not null and published_at >= ?"
        " and not exists (select 1 from daily_posts as p where p.enterprise_id = ? and p.team_id = ?"
        " and p.channel = ? and p.repo = releases.repo"
        " and p.kind = ? and p.release = releases.tag and p.filter = ? and p.state in (?, ?))"
        " order by published_at, tag",
        [repo, to_utc_text(since), *team.key, channel, kind, filter, DONE, EMPTY],
    )
    return [_from_row(repo, row) for row in rows]
