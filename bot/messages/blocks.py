"""Daily reports and PR summaries as Slack messages (mrkdwn text plus Block Kit blocks)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.messages.mrkdwn import escape, first_sentence, link, truncate
from store.model import PullRequest
from store.report.day import DailyReport
from store.report.markdown import SECTIONS
from store.retrieval.choose import MAX_LISTED
from store.subscription.filter import Filter
from store.understanding.areas import area_names, resolve_area, title_tags

# Slack allows 50 blocks and 3000 characters per section; leave headroom for the
# undocumented cumulative limit on block text.
MAX_BLOCKS = 45
MAX_SECTION_CHARS = 2900
MAX_MESSAGE_CHARS = 11000
# chat.postMessage advises at most 4,000 characters of text; with blocks it is only the notification fallback.
MAX_FALLBACK_CHARS = 3900
SUMMARY_ACTION = "prdigest_pr_summary"
# PRs listed one by one in a reply; keeps a week within the five messages a response_url takes.
MAX_HOME_BLOCKS = 100  # Slack's limit for a Home tab view


@dataclass(frozen=True)
class Asked:
    """What an answer answered, for its vote buttons: the question (after the thread's earlier ones),
    the answer's first line and the PRs it cited."""

    question: str
    history: tuple[str, ...]
    first_line: str
    citations: tuple[str, ...]  # OWNER/NAME#N


@dataclass
class Message:
    text: str  # mrkdwn; also the notification fallback
    blocks: list[dict[str, Any]] = field(default_factory=list)
    asked: Asked | None = None  # set on an answer to a question

    @property
    def shown(self) -> str:
        """What people see: the text of every block (the text field is only the fallback)."""
        texts = [block["text"]["text"] for block in self.blocks if "text" in block]
        return "\n".join(texts) if texts else self.text


def mrkdwn_section(text: str, accessory: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "section",
        # verbatim stops Slack from auto-linking names and channels in our text
        "text": {"type": "mrkdwn", "text": truncate(text, MAX_SECTION_CHARS), "verbatim": True},
    }
    if accessory:
        block["accessory"] = accessory
    return block


def text_sections(lines: list[str]) -> list[dict[str, Any]]:
    """Lines of our own mrkdwn in as few sections as Slack's per-section limit allows."""
    return [mrkdwn_section(chunk) for chunk in pack_lines(lines, MAX_SECTION_CHARS)]


def pr_link(pr: PullRequest) -> str:
    return link(pr.url, f"#{pr.number} {pr.title}")


def pr_line(pr: PullRequest, tz: ZoneInfo, with_date: bool = False) -> str:
    """One PR as a bullet: link, author, areas, and its *What changed* sentence."""
    when = pr.merged_at.astimezone(tz).strftime("%b %d %H:%M" if with_date else "%H:%M")
    meta = [f"by {escape(pr.author)}", when]
    if pr.areas:
        meta.append(", ".join(pr.areas))
    line = f"\u2022 {pr_link(pr)}  _({' · '.join(meta)})_"
    what = first_sentence(pr.summary.what_changed) if pr.summary else ""
    return f"{line}\n    {escape(what)}" if what else line


def summary_button(pr: PullRequest) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": "Full summary"},
        "action_id": SUMMARY_ACTION,
        "value": f"{pr.repo}#{pr.number}",
    }


# Areas that touch many PRs in passing; a PR is grouped under them only when nothing more specific applies.
BROAD_AREAS = ("docs", "ci")


def primary_area(pr: PullRequest) -> str:
    """The one area a PR is listed under: what its title tags name, else its most specific area."""
    tagged = [area for area in (resolve_area(tag, pr.repo) for tag in title_tags(pr.title)) if area in pr.areas]
    specific = [area for area in pr.areas if area not in BROAD_AREAS]
    return (tagged or specific or pr.areas or ["other"])[0]


def area_order(repo: str) -> Callable[[str], int]:
    """Sort key for the repository's areas: areas.toml's order, then areas it no longer lists."""
    names = area_names(repo)
    return lambda area: names.index(area) if area in names else len(names)


def touching(prs: list[PullRequest]) -> Counter[str]:
    """How many PRs touch each area; a PR touches all of its areas, so these add up to more than the PRs."""
    return Counter(area for pr in prs for area in pr.areas)


def top_areas(prs: list[PullRequest], repo: str, limit: int | None = 3) -> list[tuple[str, int]]:
    order = area_order(repo)
    return sorted(touching(prs).items(), key=lambda item: (-item[1], order(item[0])))[:limit]


HIGHLIGHTS = 3
WEEKLY_HIGHLIGHTS = 5
# A reply lists its PRs right below its summary: a list this short is read whole, and highlights would repeat it.
SHORT_LIST = 6


def highlights(prs: list[PullRequest], limit: int = HIGHLIGHTS) -> list[PullRequest]:
    """The substantial PRs most worth a glance: wide reach first, then size."""
    substantial = [pr for pr in prs if pr.type == "substantial"]
    quiet = {"ci", "docs"}
    return sorted(
        substantial,
        key=lambda pr: (bool(set(pr.areas) - quiet), len(pr.areas), pr.file_count),
        reverse=True,
    )[:limit]


def report_headline(report: DailyReport, scope: str | None = None, as_of: datetime | None = None, week: bool = False) -> str:
    """"vLLM: merged PRs [scope ]for DAY (PST)[, as of HH:MM]"; scope is e.g. "in rocm"."""
    name = report.title.replace(" Merged PR Report", "")
    scoped = f" {scope}" if scope else ""
    span = f"the week {report.label}" if week else report.label
    headline = f"{name}: merged PRs{scoped} for {span} ({report.tz_label})"
    if as_of is not None:
        headline += f", as of {as_of.astimezone(report.tz).strftime('%H:%M')}"
    return headline


def is_range(report: DailyReport) -> bool:
    return report.first != report.last


def parent_message(
    report: DailyReport, scope: str | None = None, as_of: datetime | None = None, in_thread: bool = True,
    highlighted: bool = True, week: bool = False, headline: str | None = None, notes: Sequence[str] = (),
) -> Message:
    """The thread's parent: date (or `headline`, our mrkdwn), counts by type, `notes` (our mrkdwn lines), top
    areas, and three highlights unless not `highlighted`. A week's parent counts every area and has up to five
    highlights."""
    prs = report.prs
    kinds = Counter(pr.type for pr in prs)
    lines = [headline or f"*{escape(report_headline(report, scope, as_of, week))}*"]
    lines.append(f"{len(prs)} merged: {kinds['substantial']} substantial, {kinds['trivial']} trivial")
    lines.extend(notes)
    areas = top_areas(prs, report.repo, limit=None if week else 3)
    if areas:
        lead = "PRs by area, each counting every PR touching it" if week else "Top areas, by PRs touching each"
        lines.append(f"{lead}: " + ", ".join(f"{area} ({count})" for area, count in areas))
    picks = highlights(prs, WEEKLY_HIGHLIGHTS if week else HIGHLIGHTS) if highlighted else []
    if picks:
        lines.append("Highlights:")
        lines.extend(pr_line(pr, report.tz, with_date=is_range(report)) for pr in picks)
    if in_thread:
        lines.append("_Every PR is in the thread._" if prs else "_Nothing merged that day._")
    return Message(text=truncate("\n".join(lines), MAX_FALLBACK_CHARS), blocks=text_sections(lines))


def home_blocks(
    reports: Sequence[DailyReport], help_text: str, before: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The Home tab: what comes `before`, each repository's latest day, as many as fit, then how to use the bot."""
    blocks: list[dict[str, Any]] = list(before)
    for report in reports:
        more = parent_message(report, in_thread=False).blocks
        if len(blocks) + len(more) < MAX_HOME_BLOCKS:  # one left for the help
            blocks += more
    return [*blocks, mrkdwn_section(help_text)]


def thread_messages(report: DailyReport, limit: int | None = None, more: Callable[[int], str] | None = None) -> list[Message]:
    """Every PR of the day, grouped by area; trivial PRs compact at the end.

    With `limit`, at most that many substantial and that many trivial PRs are
    listed, and a last line says how many were left out (`more`, by default how to narrow the list down).
    """
    with_date = is_range(report)
    substantial = [pr for pr in report.prs if pr.type != "trivial"]
    trivial = [pr for pr in report.prs if pr.type == "trivial"]
    shown, shown_trivial = substantial[:limit], trivial[:limit]
    touched = touching(report.prs)
    blocks: list[dict[str, Any]] = []
    for area, prs in by_area(shown, report.repo):
        blocks.append(mrkdwn_section(group_heading(area, len(prs), touched[area])))
        for pr in prs:
            blocks.append(mrkdwn_section(pr_line(pr, report.tz, with_date), accessory=summary_button(pr)))
    if shown_trivial:
        lines = [f"*trivial* ({len(trivial)}) _\u2014 any PR's full summary: `/prdigest pr N`_"] + [
            f"\u2022 {pr_link(pr)} _by {escape(pr.author)}_" for pr in shown_trivial
        ]
        blocks.extend(text_sections(lines))
    left_out = len(substantial) - len(shown) + len(trivial) - len(shown_trivial)
    if left_out:
        blocks.append(mrkdwn_section(f"_{(more or more_note)(left_out)}_"))
    return split_blocks(blocks)


def by_area(prs: list[PullRequest], repo: str) -> list[tuple[str, list[PullRequest]]]:
    """PRs grouped under their main areas, in their order within each; the largest group first, ties in areas.toml's order."""
    groups: dict[str, list[PullRequest]] = {}
    for pr in prs:
        groups.setdefault(primary_area(pr), []).append(pr)
    position = area_order(repo)
    return sorted(groups.items(), key=lambda group: (-len(group[1]), position(group[0])))


def group_heading(area: str, listed: int, touched: int) -> str:
    """An area's heading in the list. A PR is listed once, under its main area, while the top areas count every
    PR touching an area, so when the two differ the heading says which is which."""
    if listed == touched:
        return f"*{area}* ({listed})"
    return f"*{area}* ({listed} listed here; {touched} touch {area})"


def more_note(left_out: int) -> str:
    """The line under a list cut short, shared by reports, commands and answers."""
    return f"\u2026and {left_out} more; narrow it down with an area, an author or a shorter period."


def daily_report_messages(report: DailyReport, scope: str | None = None, week: bool = False) -> list[Message]:
    """The parent message followed by the thread replies; a week's parent counts every area."""
    return [parent_message(report, scope, week=week)] + thread_messages(report)


def filter_scope(rule: Filter) -> str | None:
    """How a report names what its subscription's filter keeps: "in rocm, nvidia", or the rule itself
    (plain text, escaped where it is shown, as a headline is)."""
    if rule.everything:
        return None
    if rule.only_areas:
        return f"in {', '.join(rule.areas)}"
    return f"matching `{rule.text}`"


def reply_messages(
    report: DailyReport, scope: str | None = None, as_of: datetime | None = None, limit: int = MAX_LISTED
) -> list[Message]:
    """A day or a period as the answer to a command: the summary, then its PRs (at most `limit` of each type)."""
    parent = parent_message(report, scope, as_of, in_thread=False, highlighted=worth_highlighting(report))
    return [parent] + thread_messages(report, limit=limit)


def worth_highlighting(report: DailyReport) -> bool:
    """Whether a reply's summary picks highlights: not when the list right below it is short enough to read whole."""
    return sum(pr.type != "trivial" for pr in report.prs) > SHORT_LIST


def pack_lines(lines: list[str], limit: int) -> list[str]:
    """Join lines into chunks of at most `limit` characters, never splitting a line."""
    chunks: list[str] = []
    current = ""
    for line in lines:
        line = truncate(line, limit)
        if current and len(current) + 1 + len(line) > limit:
            chunks.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        chunks.append(current)
    return chunks


def split_blocks(blocks: list[dict[str, Any]]) -> list[Message]:
    """Spread blocks over as many messages as Slack's per-message limits require."""
    messages: list[Message] = []
    current: list[dict[str, Any]] = []
    size = 0
    for block in blocks:
        text = block.get("text", {}).get("text", "")
        if current and (len(current) >= MAX_BLOCKS or size + len(text) > MAX_MESSAGE_CHARS):
            messages.append(_message(current))
            current, size = [], 0
        current.append(block)
        size += len(text)
    if current:
        messages.append(_message(current))
    return messages


def _message(blocks: list[dict[str, Any]]) -> Message:
    text = "\n".join(block.get("text", {}).get("text", "") for block in blocks)
    return Message(text=truncate(text, MAX_FALLBACK_CHARS), blocks=blocks)


def pr_summary_message(pr: PullRequest, tz: ZoneInfo, shipped: str | None = None) -> Message:
    """The full four-section summary of one PR, and `shipped` (our mrkdwn: the release that shipped it) under its head."""
    when = pr.merged_at.astimezone(tz).strftime("%Y-%m-%d %H:%M %Z")
    head = f"*{pr_link(pr)}*\nby {escape(pr.author)} · merged {when}"
    if pr.merged_by:
        head += f" by {escape(pr.merged_by)}"
    head += f" · {pr.type}" + (f" · {', '.join(pr.areas)}" if pr.areas else "")
    if shipped:
        head += f"\n{shipped}"
    blocks = [mrkdwn_section(head)]
    if pr.summary:
        for key, label in SECTIONS:
            body = pr.summary.as_dict()[key].strip()
            if body:
                blocks.append(mrkdwn_section(f"*{label}*\n{escape(body)}"))
        if not pr.summary.source.startswith("model:") and pr.summary.source != "imported":
            blocks.append(mrkdwn_section("_Summary extracted from the PR description._"))
    text = "\n\n".join(block["text"]["text"] for block in blocks)
    return Message(text=truncate(text, MAX_FALLBACK_CHARS), blocks=blocks)


def text_message(text: str) -> Message:
    """Our own mrkdwn text (anything untrusted in it already escaped), in as many sections as it needs."""
    return Message(text=truncate(text, MAX_FALLBACK_CHARS), blocks=text_sections(text.split("\n")))


def pr_list_message(heading: str, prs: list[PullRequest], tz: ZoneInfo, note: str | None = None) -> Message:
    """A heading (our mrkdwn) and PRs one per section, each with its summary button."""
    blocks = [mrkdwn_section(heading)]
    if note:
        blocks.append(mrkdwn_section(f"_{escape(note)}_"))
    blocks.extend(mrkdwn_section(pr_line(pr, tz, with_date=True), accessory=summary_button(pr)) for pr in prs)
    return _message(blocks[:MAX_BLOCKS])


# A live alert lists this many PRs one by one; a burst beyond it ends with a pointer to the rest.
LIVE_LISTED = 30


def live_message(prs: list[PullRequest], rule: Filter, tz: ZoneInfo) -> Message:
    """Newly merged PRs as one compact alert: each with its link, author, time, areas and *What changed*."""
    repo = prs[0].repo
    scope = f" {escape(filter_scope(rule) or '')}" if not rule.everything else ""
    if len(prs) == 1:
        heading = f"*Merged{scope}* \u00b7 {escape(repo)}"
    else:
        heading = f"*{len(prs)} PRs merged{scope}* \u00b7 {escape(repo)}"
    blocks = pr_list_message(heading, prs[-LIVE_LISTED:], tz).blocks  # the newest, when a burst is longer
    if len(prs) > LIVE_LISTED:
        blocks.append(mrkdwn_section(f"_\u2026and {len(prs) - LIVE_LISTED} earlier ones: `/prdigest today`._"))
    text = f"{heading}: " + ", ".join(f"#{pr.number} {escape(pr.title)}" for pr in prs[:5])
    return Message(text=truncate(text, MAX_FALLBACK_CHARS), blocks=blocks)


def grouped_message(parts: list[tuple[str, Message]]) -> Message:
    """Messages about several repositories as one: each under its repository's name."""
    blocks: list[dict[str, Any]] = []
    for repo, message in parts:
        blocks.append(mrkdwn_section(f"*{escape(repo)}*"))
        blocks.extend(message.blocks)
    return _message(blocks[:MAX_BLOCKS])
