"""The `/prdigest` commands: one parser and dispatcher for Slack, `prdigest run` and the shell."""
from __future__ import annotations

import logging
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from typing import Callable
from zoneinfo import ZoneInfo

from bot.empty_store import empty_store_notice
from bot.mentions import answer
from bot.mrkdwn import escape
from bot.runtime import Runtime
from bot.slack_render import Message, pr_list_message, pr_summary_message, reply_messages, text_message
from store.areas import UnknownArea, area_names, require_area
from store.days import local_day
from store.db import StoreError
from store.lazy_re import LazyPattern
from store.posts import get_post
from store.prs import get_pr, latest_merge
from store.reports import DailyReport, load_report
from store.retrieval.search import search_prs
from store.subscriptions import DEFAULT_POST_AT, Subscription, all_subscriptions, channel_subscriptions, subscribe, unsubscribe

log = logging.getLogger(__name__)

MAX_RANGE_DAYS = 366
DEFAULT_DAYS = 7  # `area`, `author` and `areas` without a period: the last week
SEARCH_HITS = 10
_DATE_LIKE = LazyPattern(r"^\d{4}-\d{1,2}-\d{1,2}$")
_TIME = LazyPattern(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$", re.IGNORECASE)
# 1234, #1234, or a PR's URL (as typed, or as Slack wraps it: <https://...|label>)
_PR_NUMBER = LazyPattern(r"^<?(?:#|\S*/pull/)?(\d{1,9})(?:[/|][^>]*)?>?$")
_SLACK_USER = LazyPattern(r"^[UW][A-Z0-9]+$")


class CommandError(ValueError):
    """Bad arguments: a one-line explanation, answered together with the command's usage."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


@dataclass
class Reply:
    messages: list[Message]
    public: bool = False  # shown to the whole channel rather than only to the person asking
    error: bool = False

    @property
    def text(self) -> str:
        """The mrkdwn of every message as people see it, as `prdigest run` prints it."""
        return "\n\n".join(message.shown for message in self.messages)


def _reply(text: str, public: bool = False, error: bool = False) -> Reply:
    return Reply([text_message(text)], public=public, error=error)


@dataclass
class Call:
    """One command being answered: who asks, where, when, and the words after the command name."""

    runtime: Runtime
    args: str
    now: datetime
    channel: str | None = None
    user: str | None = None
    words: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.words = self.args.split()
        self.now = self.now.astimezone(self.tz)

    @property
    def tz(self) -> ZoneInfo:
        return self.runtime.settings.timezone

    @property
    def repo(self) -> str:
        return self.runtime.settings.default_repo

    @property
    def today(self) -> date:
        return local_day(self.now, self.tz)


@dataclass(frozen=True)
class Period:
    first: date
    last: date


@dataclass(frozen=True)
class Command:
    usage: str
    about: str
    run: Callable[[Call], Reply]
    slow: bool = False  # may wait on a model: acknowledged with a "looking" note first
    reads_prs: bool = True  # answered with the empty-store notice while the store has no PRs


# ------------------------------------------------------------------ periods

PERIOD_USAGE = "today | yesterday | week | YYYY-MM-DD | YYYY-MM-DD..YYYY-MM-DD"


def is_period(word: str) -> bool:
    return word.lower() in ("today", "yesterday", "week") or word[:1].isdigit()


def parse_period(word: str, today: date, command: str) -> Period:
    """One period word; a bad one raises CommandError naming what was expected."""
    lowered = word.lower()
    if lowered == "today":
        return Period(today, today)
    if lowered == "yesterday":
        return Period(today - timedelta(days=1), today - timedelta(days=1))
    if lowered == "week":
        return last_days(today, DEFAULT_DAYS)
    if ".." in word:
        start, _, end = word.partition("..")
        first, last = _parse_date(start, command), _parse_date(end, command)
        if first > last:
            raise CommandError(f"the range {escape(word)} starts after it ends", command)
        if (last - first).days >= MAX_RANGE_DAYS:
            raise CommandError(f"ranges are limited to {MAX_RANGE_DAYS} days", command)
        return Period(first, last)
    day = _parse_date(word, command)
    return Period(day, day)


def last_days(today: date, days: int) -> Period:
    return Period(today - timedelta(days=days - 1), today)


def _parse_date(text: str, command: str) -> date:
    try:
        if not _DATE_LIKE.match(text):
            raise ValueError
        return date(*map(int, text.split("-")))
    except ValueError:
        raise CommandError(f"`{escape(text)}` is not a date; expected YYYY-MM-DD", command) from None


def _split_period(call: Call, command: str) -> tuple[list[str], Period]:
    """The words before an optional trailing period, and the period (default: the last DEFAULT_DAYS)."""
    words = call.words
    if len(words) > 1 and is_period(words[-1]):
        return words[:-1], parse_period(words[-1], call.today, command)
    return words, last_days(call.today, DEFAULT_DAYS)


# ------------------------------------------------------------------ reports

def _load(call: Call, period: Period, area: str | None = None) -> DailyReport:
    return load_report(call.runtime.db, call.repo, period.first, call.tz, last=period.last, area=area)


def _report_reply(call: Call, report: DailyReport, scope: str | None = None) -> Reply:
    live = report.last >= call.today
    if not report.prs:
        return _nothing(call, report, scope, live)
    return Reply(reply_messages(report, scope, as_of=call.now if live else None))


def _nothing(call: Call, report: DailyReport, scope: str | None, live: bool) -> Reply:
    """Nothing merged: say so, and point to the latest day that has PRs."""
    scoped = f" {escape(scope)}" if scope else ""
    as_of = f", as of {call.now.strftime('%H:%M')}" if live else ""
    lines = [f"Nothing merged{scoped} in {escape(call.repo)} for {report.label} ({report.tz_label}){as_of}."]
    latest = latest_merge(call.runtime.db, call.repo)
    if latest is not None:  # the dispatcher answers an empty store before any command runs
        day = local_day(latest, call.tz).isoformat()
        lines.append(f"The latest day with merged PRs is {day}: `/prdigest {day}`.")
    return _reply("\n".join(lines))


def cmd_period(call: Call) -> Reply:
    if len(call.words) > 1:
        raise CommandError("give one period", "when")
    word = call.words[0] if call.words else "today"
    return _report_reply(call, _load(call, parse_period(word, call.today, "when")))


def cmd_area(call: Call) -> Reply:
    words, period = _split_period(call, "area")
    if not words:
        raise CommandError("which area?", "area")
    try:
        area = require_area(" ".join(words))
    except UnknownArea as exc:
        raise CommandError(escape(str(exc)), "area") from None
    return _report_reply(call, _load(call, period, area), scope=f"in {area}")


def cmd_author(call: Call) -> Reply:
    words, period = _split_period(call, "author")
    if len(words) != 1:
        raise CommandError("give one GitHub login", "author")
    login = words[0].lstrip("@")
    report = _load(call, period)
    mine = [pr for pr in report.prs if pr.author.lower() == login.lower()]
    return _report_reply(call, replace(report, prs=mine), scope=f"by {login}")


def cmd_areas(call: Call) -> Reply:
    if len(call.words) > 1:
        raise CommandError("give at most one period", "areas")
    period = parse_period(call.words[0], call.today, "areas") if call.words else last_days(call.today, DEFAULT_DAYS)
    report = _load(call, period)
    if not report.prs:
        return _nothing(call, report, None, report.last >= call.today)
    counts = Counter(area for pr in report.prs for area in pr.areas)
    unlabelled = sum(1 for pr in report.prs if not pr.areas)
    lines = [f"*Areas of {escape(call.repo)}, {report.label} ({report.tz_label}): {len(report.prs)} merged PRs*"]
    busy = sorted(counts, key=lambda area: (-counts[area], area_names().index(area)))
    lines.extend(f"\u2022 `{area}` {counts[area]}" for area in busy)
    if unlabelled:
        lines.append(f"\u2022 no area: {unlabelled}")
    quiet = [area for area in area_names() if area not in counts]
    if quiet:
        lines.append("No PRs: " + ", ".join(quiet))
    lines.append("_One area's PRs: `/prdigest area NAME [when]`._")
    return _reply("\n".join(lines))


# ------------------------------------------------------------------ single PRs, search, questions

def cmd_pr(call: Call) -> Reply:
    match = _PR_NUMBER.match(call.args.strip())
    if not match:
        raise CommandError("give a PR number, like `pr 1234`", "pr")
    return _pr_summary(call.runtime, call.repo, int(match.group(1)))


def _pr_summary(runtime: Runtime, repo: str, number: int) -> Reply:
    pr = get_pr(runtime.db, repo, number)
    if pr is None:
        return _reply(
            f"#{number} is not in the store: it holds the merged PRs of {escape(repo)}"
            " (an open PR, or one merged since the last ingest, is not there yet)."
        )
    from bot.summarize import ensure_summary  # imported on use: it brings in the model client

    pr = ensure_summary(runtime.db, runtime.settings, pr, runtime.llm)
    return Reply([pr_summary_message(pr, runtime.settings.timezone)])


def pr_reply(runtime: Runtime, repo: str, number: int) -> Reply:
    """The full summary of one PR (the report's button); never raises."""
    return guarded(f"pr {repo}#{number}", lambda: _pr_summary(runtime, repo, number))


def cmd_search(call: Call) -> Reply:
    query = call.args.strip()
    if not query:
        raise CommandError("search for what?", "search")
    result = search_prs(call.runtime.db, query, call.repo, call.tz, limit=SEARCH_HITS, now=call.now)
    if not result.hits:
        return _reply(f"Nothing in {escape(call.repo)} matched \u201c{escape(query)}\u201d.")
    heading = f"*PRs of {escape(call.repo)} matching \u201c{escape(query)}\u201d*"
    return Reply([pr_list_message(heading, [hit.pr for hit in result.hits], call.tz, result.note)])


def cmd_ask(call: Call) -> Reply:
    question = call.args.strip()
    if not question:
        raise CommandError("ask what?", "ask")
    return Reply([answer(call.runtime, question, now=call.now)])


# ------------------------------------------------------------------ subscriptions

def parse_time(text: str) -> time | None:
    """"9", "9:30", "09:30", "9am", "5:30pm" as a time of day; None if it is not one."""
    match = _TIME.match(text)
    if not match:
        return None
    hour, minute, half = int(match.group(1)), int(match.group(2) or 0), (match.group(3) or "").lower()
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    return time(hour, minute)


def _need_channel(call: Call, command: str) -> str:
    if not call.channel:
        raise CommandError(
            "subscriptions belong to a Slack channel: run this in the channel (or `prdigest run --channel ID`)",
            command,
        )
    return call.channel


def describe(sub: Subscription, tz: ZoneInfo) -> str:
    areas = f" (areas: {', '.join(sub.areas)})" if sub.areas else ""
    return f"the daily report of {escape(sub.repo)}{areas} at {sub.post_at.strftime('%H:%M')} {tz.key} time"


def next_report(call: Call, sub: Subscription) -> str:
    """When the next report comes: today if its time is still ahead and today's is not out yet, else tomorrow."""
    posted = get_post(call.runtime.db, sub.channel, sub.repo, call.today - timedelta(days=1), sub.areas)
    return "today" if call.now.time() < sub.post_at and posted is None else "tomorrow"


def cmd_subscribe(call: Call) -> Reply:
    channel = _need_channel(call, "subscribe")
    post_at, areas = DEFAULT_POST_AT, []
    words = list(call.words)
    while words:
        word = words.pop(0)
        if word.lower() == "at":
            if not words:
                raise CommandError("`at` needs a time, like `at 09:00`", "subscribe")
            word = words.pop(0)
        when = parse_time(word)
        if when is not None:
            post_at = when
            continue
        try:
            area = require_area(word)
        except UnknownArea as exc:
            raise CommandError(escape(str(exc)), "subscribe") from None
        if area not in areas:
            areas.append(area)
    areas.sort(key=area_names().index)
    now = call.now
    sub, created = subscribe(call.runtime.db, channel, call.repo, areas, post_at, call.user, now)
    who = f" (set by <@{call.user}>)" if call.user and _SLACK_USER.match(call.user) else ""
    done = "This channel now gets" if created else "Updated: this channel gets"
    return _reply(
        f"{done} {describe(sub, call.tz)}{who}. The next one comes {next_report(call, sub)}.\n"
        "_A private channel needs `/invite @prdigest` first; `/prdigest unsubscribe` stops it._",
        public=True,
    )


def cmd_unsubscribe(call: Call) -> Reply:
    channel = _need_channel(call, "unsubscribe")
    if call.words:
        raise CommandError("unsubscribe takes no arguments", "unsubscribe")
    repos = unsubscribe(call.runtime.db, channel)
    if not repos:
        return _reply("This channel has no daily report to stop.")
    return _reply(f"This channel no longer gets the daily report of {escape(', '.join(repos))}.", public=True)


def cmd_subscriptions(call: Call) -> Reply:
    if call.words:
        raise CommandError("subscriptions takes no arguments", "subscriptions")
    if call.channel:
        subs = channel_subscriptions(call.runtime.db, call.channel)
        if not subs:
            return _reply("This channel gets no daily report. `/prdigest subscribe [AREA...] [at HH:MM]` starts one.")
        return _reply("\n".join(f"This channel gets {describe(sub, call.tz)}." for sub in subs))
    subs = all_subscriptions(call.runtime.db)
    if not subs:
        return _reply("No channel gets the daily report yet.")
    return _reply("\n".join(f"\u2022 {escape(sub.channel)}: {describe(sub, call.tz)}" for sub in subs))


# ------------------------------------------------------------------ help and dispatch

def cmd_help(call: Call) -> Reply:
    return _reply(help_text(call.runtime.settings.default_repo))


WHEN = Command("[when]", "what merged: today so far, yesterday, the last 7 days (week), a day or a range", cmd_period)
COMMANDS: dict[str, Command] = {
    "today": WHEN,
    "yesterday": WHEN,
    "week": WHEN,
    "area": Command("area NAME [when]", "one area (default: the last 7 days)", cmd_area),
    "areas": Command("areas [when]", "every area with its count (default: the last 7 days)", cmd_areas),
    "pr": Command("pr N", "the full summary of one PR", cmd_pr, slow=True),
    "author": Command("author LOGIN [when]", "one person's PRs (default: the last 7 days)", cmd_author),
    "search": Command("search TEXT", "find PRs by words", cmd_search),
    "ask": Command("ask QUESTION", "a question about what merged (or mention @prdigest)", cmd_ask, slow=True),
    "subscribe": Command(
        "subscribe [AREA...] [at HH:MM]",
        f"yesterday's report in this channel every day (default {DEFAULT_POST_AT.strftime('%H:%M')})",
        cmd_subscribe,
        reads_prs=False,
    ),
    "unsubscribe": Command("unsubscribe", "stop this channel's daily report", cmd_unsubscribe, reads_prs=False),
    "subscriptions": Command("subscriptions", "what this channel gets", cmd_subscriptions, reads_prs=False),
    "help": Command("help", "this list", cmd_help, reads_prs=False),
}


def help_text(repo: str) -> str:
    lines = [f"*/prdigest*: what merged in {escape(repo)}"]
    unique = dict.fromkeys(COMMANDS.values())
    lines.extend(f"\u2022 `/prdigest {command.usage}` \u2014 {command.about}" for command in unique)
    lines.append(f"_when_ is {PERIOD_USAGE}. Mention @prdigest with a question to get the answer in a thread.")
    return "\n".join(lines)


def usage(name: str) -> str:
    command = COMMANDS.get(name, WHEN)
    return f"Usage: `/prdigest {command.usage}`" + (f" (_when_ is {PERIOD_USAGE})" if "when" in command.usage else "")


def find_command(text: str) -> tuple[str, Command | None, str]:
    """The command word, its Command (None if unknown) and the text after it."""
    stripped = text.strip()
    word, _, rest = stripped.partition(" ")
    name = word.lower()
    if not name:
        return "today", COMMANDS["today"], ""
    if is_period(name):
        return name, WHEN, stripped
    return name, COMMANDS.get(name), rest


def is_slow(text: str) -> bool:
    command = find_command(text)[1]
    return command is not None and command.slow


def _unknown(name: str, text: str, repo: str) -> Reply:
    import difflib  # here, as only a mistyped command needs it

    close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
    hint = f" Did you mean `{close[0]}`?" if close else ""
    if not close and len(text.split()) > 2:
        hint = f" To ask a question: `/prdigest ask {escape(text.strip())}`"
    return _reply(f"`{escape(name)}` is not a command.{hint}\n\n{help_text(repo)}", error=True)


def execute(
    runtime: Runtime, text: str, channel: str | None = None, user: str | None = None, now: datetime | None = None
) -> Reply:
    """Answer one command. Never raises: bad input and failing dependencies become a short reply."""
    name, command, rest = find_command(text)
    if command is None:
        return _unknown(name, text, runtime.settings.default_repo)
    call = Call(runtime, rest, now or runtime.now(), channel, user)
    return guarded(text.strip(), lambda: _run(command, call))


def _run(command: Command, call: Call) -> Reply:
    """The command's reply; one that reads PRs says instead when the store holds none to read."""
    notice = command.reads_prs and empty_store_notice(call.runtime.db, call.repo)
    if notice:
        return _reply(escape(notice))
    return command.run(call)


def guarded(what: str, work: Callable[[], Reply]) -> Reply:
    """work(), with bad arguments and failing dependencies turned into a short reply."""
    try:
        return work()
    except CommandError as exc:
        return _reply(f"{exc}\n{usage(exc.command)}", error=True)
    except (StoreError, sqlite3.OperationalError) as exc:
        log.warning("store unavailable for %r: %s", what, exc)
        return _reply("Sorry, the store is busy or unavailable right now; try again in a minute.", error=True)
    except Exception:  # the bot answers every command, whatever broke
        log.exception("%r failed", what)
        return _reply("Sorry, something went wrong while answering that; it has been logged.", error=True)
