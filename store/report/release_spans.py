"""Releases as people name them, and the PRs of a span of releases, or of none yet, for answers about releases.

A tag named loosely is the release a person means: its own tag in any case, else the release of that version
however written ("v0.11", "0.11" and "0.11.0" are v0.11.0, the line's first full release: not a patch, nor a
candidate). A line ("0.11.x", "the 0.11 line") is every release of it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlite_utils import Database

from store.days import to_utc_text
from store.report.release import find_release
from store.tables.releases import Release, get_release, range_numbers, releases_of, shipped_in
from store.understanding.releases import version_key

_NUMBERS = re.compile(r"\d+(?:\.\d+)*")


def named_releases(db: Database, repo: str, tag: str, line: bool = False) -> list[Release]:
    """The releases `tag` names, the last published first: one, or every release of a line; none when the store
    knows no such release."""
    if not line:
        found = find_release(db, repo, tag)
        return [found] if found else []
    prefix = _numbers(tag)
    return [release for release in releases_of(db, repo)
            if prefix and _numbers(release.tag, len(prefix))[: len(prefix)] == prefix]


def _numbers(tag: str, width: int = 0) -> tuple[int, ...]:
    """A tag's version numbers as written, padded with zeros to `width`: of 1.0.x, "v1" is (1, 0)."""
    found = _NUMBERS.search(tag)
    numbers = tuple(int(part) for part in found.group(0).split(".")) if found else ()
    return numbers + (0,) * (width - len(numbers)) if numbers else ()


@dataclass(frozen=True)
class Span:
    """The PRs a release ships since the one before it, or a span of releases ships since an earlier one."""

    until: Release  # the last release of the span
    since: Release | None  # where it starts: the earlier release asked, else the one `until`'s range starts from
    releases: tuple[Release, ...]  # the releases in it, the first published first
    numbers: tuple[int, ...]  # every PR number their ranges name, stored or not, besides what shipped by `since`
    unmapped: tuple[Release, ...] = ()  # releases in it whose ranges are not read: their PRs are not counted


def release_span(db: Database, until: Release, since: Release | None = None) -> Span:
    """The PRs of `until`'s range, or with `since`, of every release after it up to `until` on the same line of
    versions (a full release counts full releases only), less those a release up to `since` shipped first: a fix
    cherry-picked into v0.10.1 is in v0.11.0's range again, and is not new in v0.11.0 since v0.10.1."""
    if since is None:
        previous = get_release(db, until.repo, until.previous) if until.previous else None
        return Span(until, previous, (until,), tuple(range_numbers(db, until.repo, until.tag)), () if until.mapped else (until,))
    releases = tuple(release for release in reversed(releases_of(db, until.repo)) if _between(release, since, until))
    numbers = sorted({number for release in releases for number in range_numbers(db, until.repo, release.tag)})
    shipped = shipped_in(db, until.repo, numbers)
    new = tuple(number for number in numbers
                if not any(release.published_at <= since.published_at for release in shipped.get(number, [])))
    return Span(until, since, releases, new, tuple(release for release in releases if not release.mapped))


def _between(release: Release, since: Release, until: Release) -> bool:
    if not since.published_at < release.published_at <= until.published_at:
        return False
    if release.prerelease and not until.prerelease:
        return False
    key, low, high = version_key(release.tag), version_key(since.tag), version_key(until.tag)
    return key is None or low is None or high is None or low < key <= high


@dataclass(frozen=True)
class Unreleased:
    """The stored PRs that merged since the last release's range began and that no mapped release names."""

    latest: Release  # the last release published
    numbers: tuple[int, ...]  # oldest merge first
    # Releases published since those PRs could merge whose ranges are not read: some of them may be in one.
    unmapped: tuple[Release, ...] = field(default_factory=tuple)


def unreleased(db: Database, repo: str) -> Unreleased | None:
    """What merged that no release has yet; None when the store knows no release of the repository.

    The last release's range begins where the release before it was published: a PR merged since then that no
    range names missed the last release's cut, and will be in the next one."""
    releases = releases_of(db, repo)
    if not releases:
        return None
    latest = releases[0]
    # The range of the last mapped release tells where it began; an unmapped one has no range yet.
    mapped = next((release for release in releases if release.mapped), None)
    previous = get_release(db, repo, mapped.previous) if mapped and mapped.previous else None
    start = previous.published_at if previous else None
    rows = db.execute(
        "select number from prs where repo = ? and (? is null or merged_at > ?)"
        " and not exists (select 1 from release_prs as r where r.repo = prs.repo and r.number = prs.number)"
        " order by merged_at, number",
        [repo, *[to_utc_text(start) if start else None] * 2],
    )
    unmapped = tuple(release for release in releases if not release.mapped and (start is None or release.published_at > start))
    return Unreleased(latest, tuple(row[0] for row in rows), unmapped)
