"""Releases as Slack messages: the list of releases, one release's PRs as a day's are shown, and where a PR shipped."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.messages.blocks import (
    Message,
    parent_message,
    pr_list_message,
    text_message,
    thread_messages,
    worth_highlighting,
)
from bot.messages.mrkdwn import escape, link
from store.model import PullRequest
from store.report.release import ReleaseReport, ReleaseStatus
from store.retrieval.choose import MAX_LISTED
from store.tables.releases import Release
from store.text.prose import join_words, plural

# Numbers of a range the store lacks, listed one by one before "and N more".
UNKNOWN_LISTED = 20


def day(moment: datetime, tz: ZoneInfo) -> str:
    """"Mar 3, 2026": the local day of a release's publishing or a PR's merge."""
    return moment.astimezone(tz).strftime("%b %-d, %Y")


def release_name(release: Release) -> str:
    """The release as a link to its page, marked when it is a prerelease."""
    return link(release.url, release.title) + (" _(prerelease)_" if release.prerelease else "")


def range_words(release: Release) -> str:
    """What a mapped release's PRs are counted from: "since v0.10.1", or its whole history for the first."""
    return f"since {escape(release.previous)}" if release.previous else "up to it (its whole history)"


def release_list_message(repo: str, releases: Sequence[Release], tz: ZoneInfo) -> Message:
    lines = [f"*Releases of {escape(repo)}*, the last published first"]
    for release in releases:
        if release.mapped:
            what = f"{plural(release.prs, 'PR')} {range_words(release)}"
        else:
            what = f"_PRs not mapped: `prdigest release-notes {escape(release.tag)}` reads them_"
        lines.append(f"\u2022 {release_name(release)} \u00b7 published {day(release.published_at, tz)} \u00b7 {what}")
    lines.append("_One release's PRs: `/prdigest release TAG` (or `latest`)._")
    return text_message("\n".join(lines))


def release_notes_lines(found: ReleaseReport) -> list[str]:
    """The lines under a release's counts: PRs an earlier release shipped first, and numbers the store lacks."""
    lines = []
    earlier = Counter(release.tag for release in found.shipped_before.values())
    if earlier:
        where = join_words([f"{escape(tag)} ({count})" for tag, count in sorted(earlier.items())])
        lines.append(f"{plural(sum(earlier.values()), 'PR')} of them shipped first in an earlier release: {where}")
    if found.unknown:
        shown = ", ".join(f"#{number}" for number in found.unknown[:UNKNOWN_LISTED])
        more = f" and {len(found.unknown) - UNKNOWN_LISTED} more" if len(found.unknown) > UNKNOWN_LISTED else ""
        lines.append(f"{plural(len(found.unknown), 'PR number')} of its range not in the store: {shown}{more}")
    return lines


def release_headline(found: ReleaseReport, tz: ZoneInfo, scope: str | None = None) -> str:
    """"vLLM v0.11.0, published Mar 3, 2026: 412 PRs since v0.10.2"; `scope` ("in rocm") narrows the count."""
    release = found.release
    name = found.report.title.replace(" Merged PR Report", "")
    count = len(found.report.prs) + len(found.unknown)
    return (
        f"*{escape(name)} {release_name(release)}*, published {day(release.published_at, tz)}: "
        f"{plural(count, 'PR')}{f' {escape(scope)}' if scope else ''} {range_words(release)}"
    )


def release_messages(found: ReleaseReport, tz: ZoneInfo, limit: int = MAX_LISTED) -> list[Message]:
    """A release as the answer to a command: its counts, areas and highlights, then its PRs by area."""
    report, tag = found.report, escape(found.release.tag)
    parent = parent_message(report, in_thread=False, highlighted=worth_highlighting(report),
                            headline=release_headline(found, tz), notes=release_notes_lines(found))
    more = lambda left_out: f"\u2026and {left_out} more: `prdigest release-notes {tag}` lists every one."
    return [parent] + thread_messages(report, limit=limit, more=more)


def release_thread(found: ReleaseReport, tz: ZoneInfo, scope: str | None = None) -> list[Message]:
    """A release as a thread: the parent with its counts and highlights, every PR by area in the replies."""
    parent = parent_message(found.report, headline=release_headline(found, tz, scope), notes=release_notes_lines(found))
    return [parent] + thread_messages(found.report)


def yours_shipped_message(release: Release, prs: list[PullRequest], tz: ZoneInfo) -> Message:
    """A person's own PRs that a release shipped, for their direct message."""
    heading = f"*Your {plural(len(prs), 'PR')} shipped in {release_name(release)}*, published {day(release.published_at, tz)}"
    return pr_list_message(heading, prs, tz)


def shipped_words(status: ReleaseStatus | None) -> str | None:
    """Where a PR shipped, in a few plain words ("Shipped in v0.11.1", "Not in a release yet"); None when the
    store knows no release, or a release published since the PR merged is not mapped yet."""
    if status is None or not status.known:
        return None
    first = status.first
    if first is None:
        return "Not in a release yet"
    return f"Shipped in {first.tag}" + (" (prerelease)" if first.prerelease else "")


def release_status_line(status: ReleaseStatus | None, pr: PullRequest, tz: ZoneInfo) -> str | None:
    """Where the PR shipped, in one line of mrkdwn; None when the store knows no release of its repository."""
    if status is None:
        return None
    if status.first is not None:
        first = status.first
        shipped = f"Released in {release_name(first)}, published {day(first.published_at, tz)}"
        if not first.prerelease:
            return shipped + "."
        final = status.first_final
        if final is None:
            return shipped + "; in no full release yet."
        return shipped + f"; first full release {release_name(final)}, published {day(final.published_at, tz)}."
    if status.unmapped:
        tags = join_words([escape(release.tag) for release in status.unmapped])
        return f"Release not known: the PRs of {tags}, published since it merged, are not mapped yet."
    latest = status.latest
    assert latest is not None, "release_status names the last release when the PR has none"
    merged = f"Not released yet: merged {day(pr.merged_at, tz)}"
    if pr.merged_at > latest.published_at:
        return f"{merged}, after {release_name(latest)} (published {day(latest.published_at, tz)}); it will be in the next release."
    return (
        f"{merged} but not in {release_name(latest)} (published {day(latest.published_at, tz)}), the latest release;"
        " it will be in the next release."
    )
