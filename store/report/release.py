"""A release as stored: the PRs its range names, and where a PR shipped, for commands, notes and answers alike."""
from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import local_day, zone_label
from store.model import PullRequest
from store.report.day import DailyReport, report_title
from store.tables.prs import get_prs
from store.tables.releases import Release, get_release, latest_release, range_numbers, releases_of, shipped_in
from store.understanding.releases import version_key

LATEST = "latest"


@dataclass
class ReleaseReport:
    """A mapped release: its stored PRs as a report of the days they merged, and the numbers the store lacks."""

    release: Release
    report: DailyReport  # the stored PRs its range names, the last merged first
    unknown: list[int]  # numbers its range names that the store holds no PR for
    # PRs an earlier release shipped first (an earlier full release, for a full release), with that release
    shipped_before: dict[int, Release] = field(default_factory=dict)

    def keeping(self, keeps: Callable[[PullRequest], bool]) -> ReleaseReport:
        """Only its PRs `keeps` takes (a subscription's filter); numbers the store lacks cannot pass a filter."""
        prs = [pr for pr in self.report.prs if keeps(pr)]
        kept = {pr.number for pr in prs}
        earlier = {number: release for number, release in self.shipped_before.items() if number in kept}
        return ReleaseReport(self.release, replace(self.report, prs=prs), [], earlier)


def find_release(db: Database, repo: str, text: str) -> Release | None:
    """The release `text` names: `latest` (the last full release, as GitHub's "latest"), its tag in any case,
    or its version however written ("0.11" is v0.11.0)."""
    wanted = text.strip()
    if wanted.lower() == LATEST:
        return latest_release(db, repo)
    exact = get_release(db, repo, wanted)
    if exact is not None:
        return exact
    key = version_key(wanted)
    for release in releases_of(db, repo):
        if release.tag.lower() == wanted.lower() or (key is not None and version_key(release.tag) == key):
            return release
    return None


def closest_tags(db: Database, repo: str, text: str, limit: int = 3) -> list[str]:
    """The stored tags most like `text`, the closest first."""
    tags = [release.tag for release in releases_of(db, repo)]
    by_lower = {tag.lower(): tag for tag in tags}
    return [by_lower[tag] for tag in difflib.get_close_matches(text.strip().lower(), list(by_lower), n=limit, cutoff=0.5)]


def load_release(db: Database, release: Release, tz: ZoneInfo) -> ReleaseReport:
    """The mapped `release`'s PRs: those the store holds, as a report over the days they merged, and the rest by number."""
    numbers = range_numbers(db, release.repo, release.tag)
    found = get_prs(db, release.repo, numbers)
    prs = sorted(found.values(), key=lambda pr: (pr.merged_at, pr.number), reverse=True)
    first, last = _days(prs, release, tz)
    report = DailyReport(release.repo, first, last, tz, report_title(db, release.repo), zone_label(tz, first, last), prs)
    earlier = {}
    for number, shipped in shipped_in(db, release.repo, list(found)).items():
        # A full release counts only full releases before it: v0.11.0 does not repeat what v0.11.0rc1 previewed.
        before = [other for other in shipped if other.published_at < release.published_at
                  and (release.prerelease or not other.prerelease)]
        if before:
            earlier[number] = before[0]
    return ReleaseReport(release, report, [number for number in numbers if number not in found], earlier)


def _days(prs: list[PullRequest], release: Release, tz: ZoneInfo) -> tuple[date, date]:
    """The local days its PRs merged on (its publish day when the store has none of them)."""
    if not prs:
        day = local_day(release.published_at, tz)
        return day, day
    return local_day(prs[-1].merged_at, tz), local_day(prs[0].merged_at, tz)


@dataclass(frozen=True)
class ReleaseStatus:
    """Where a PR shipped, as far as the stored releases tell."""

    first: Release | None = None  # the first release whose range names it
    first_final: Release | None = None  # the first full release whose range names it
    latest: Release | None = None  # without a release: the last one published, which does not have it
    unmapped: tuple[Release, ...] = ()  # releases published since its merge whose ranges are not read yet

    @property
    def released(self) -> bool:
        return self.first is not None

    @property
    def known(self) -> bool:
        """Whether the store can tell: it has the release, or every release since the merge is mapped."""
        return self.released or not self.unmapped


def release_status(db: Database, pr: PullRequest) -> ReleaseStatus | None:
    """Where `pr` shipped; None when the store knows no release of its repository."""
    shipped = shipped_in(db, pr.repo, [pr.number]).get(pr.number, [])
    if shipped:
        final = next((release for release in shipped if not release.prerelease), None)
        return ReleaseStatus(first=shipped[0], first_final=final)
    releases = releases_of(db, pr.repo)
    if not releases:
        return None
    since = tuple(release for release in releases if release.published_at > pr.merged_at and not release.mapped)
    return ReleaseStatus(latest=releases[0], unmapped=since)

