"""The `/prdigest` commands: one parser and dispatcher for Slack, `prdigest run` and the shell."""
from __future__ import annotations

import functools
import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.answers.call import Call, CommandError, Reply
from bot.answers.call import reply as _reply
from bot.answers.empty_store import empty_store_notice
from bot.answers.mentions import answer
from bot.answers.scope import Scope, ambiguous_number, channel_repos, followed, holders, not_followed, scope_of
from bot.answers.subscribing import (
    FILTER_USAGE,
    ME_USAGE,
    SUBSCRIBE_USAGE,
    cmd_me,
    cmd_subscribe,
    cmd_subscriptions,
    cmd_unsubscribe,
)
from bot.messages.blocks import (
    Message,
    area_order,
    mrkdwn_section,
    pr_list_message,
    pr_summary_message,
    reply_messages,
    text_message,
)
from bot.messages.mrkdwn import escape
from bot.messages.releases import release_list_message, release_messages, release_name, release_status_line
from bot.runtime import Runtime
from store.days import local_day
from store.db import StoreError, StoreFull, StoreReadOnly
from store.report.day import DailyReport, load_report
from store.report.release import LATEST, closest_tags, find_release, load_release, release_status
from store.retrieval.reading.when import TimeRange, read_time
from store.retrieval.search import search_prs
from store.subscription.cadence import DEFAULT_POST_AT
from store.tables.previews import QUIET_SECONDS, previews_on, set_previews
from store.tables.prs import get_pr, latest_merge
from store.tables.releases import releases_of
from store.tables.subscriptions import is_user
from store.tables.teams import Team
from store.text.patterns import LazyPattern
from store.text.prose import sentence, typed
from store.understanding.areas import UnknownArea, area_names, resolve_area

log = logging.getLogger(__name__)

MAX_RANGE_DAYS = 366
DEFAULT_DAYS = 7  # `area`, `author` and `areas` without a period: the last week
SEARCH_HITS = 10
RELEASES_LISTED = 10  # `releases` lists the last ten
# Slack takes at most five responses to one command.
MAX_RESPONSES = 5
# 1234, #1234, or a PR's URL (as typed, or as Slack wraps it: <https://...|label>)
_PR_NUMBER = LazyPattern(r"^<?(?:#|\S*/pull/)?(\d{1,9})(?:[/|][^>]*)?>?$")


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
    scoped: bool = True  # repositories named in its words limit it (a question finds its own)
    free_text: bool = False  # an OWNER/NAME it does not know is just words, not a mistake


# ------------------------------------------------------------------ periods

PERIOD_USAGE = "today | yesterday | week | a day (2026-02-24, feb 24, last friday) | a range (feb 9-13, 2026-02-09..2026-02-13)"


def is_period(word: str) -> bool:
    """Whether a command's first word starts a period: a period word, or a date being typed."""
    return word.lower() in ("today", "yesterday", "week") or word[:1].isdigit()


def reads_as_period(text: str, tz: ZoneInfo, now: datetime) -> bool:
    """Whether the whole of `text` names a time as questions read them ("feb 24", "last friday"), well or not."""
    found, rest, problems = read_time(text, tz, now)
    return (found is not None or bool(problems)) and not rest


def read_period(call: Call, text: str, command: str) -> tuple[str, Period | None]:
    """`text` without the period it names, and that period (None when it names none).

    Periods are read as questions read times, so "feb 24", "last friday" and
    "feb 9-13" work as well as 2026-02-24; a trailing "week" is the last 7 days.
    """
    words = text.split()
    if words and words[-1].lower() == "week":
        return " ".join(words[:-1]), last_days(call.today, DEFAULT_DAYS)
    found, rest, problems = read_time(text, call.tz, call.now)
    if problems:
        raise CommandError(escape(sentence(problems[0])), command)
    if found is None:
        return text.strip(), None
    return rest, _period_of(found, call, command)


def _period_of(span: TimeRange, call: Call, command: str) -> Period:
    """The local days a time covers, as far as today."""
    if span.start is None:
        raise CommandError(f"{escape(span.label)} has no first day: give a day or a range of days", command)
    first = local_day(span.start, call.tz)
    last = local_day(span.end - timedelta(microseconds=1), call.tz) if span.end else call.today
    if first > last:
        raise CommandError(f"the range {first}..{last} starts after it ends", command)
    if (last - first).days >= MAX_RANGE_DAYS:
        raise CommandError(f"ranges are limited to {MAX_RANGE_DAYS} days", command)
    return Period(first, last)


def last_days(today: date, days: int) -> Period:
    return Period(today - timedelta(days=days - 1), today)


def _split_period(call: Call, text: str, command: str) -> tuple[str, Period]:
    """`text` without its period, and the period (default: the last DEFAULT_DAYS)."""
    rest, period = read_period(call, text, command)
    return rest, period or last_days(call.today, DEFAULT_DAYS)


# ------------------------------------------------------------------ reports

def _load(call: Call, period: Period, area: str | None = None) -> DailyReport:
    return load_report(call.runtime.db, call.repo, period.first, call.tz, last=period.last, area=area)


def _report_reply(call: Call, report: DailyReport, scope: str | None = None) -> Reply:
    live = report.last >= call.today
    if not report.prs:
        return _nothing(call, report, scope, live)
    return Reply(reply_messages(report, scope, as_of=call.now if live else None, limit=call.listed))


def _nothing(call: Call, report: DailyReport, scope: str | None, live: bool) -> Reply:
    """Nothing merged: say so, and point to the latest day that has PRs."""
    scoped = f" {escape(scope)}" if scope else ""
    as_of = f", as of {call.now.strftime('%H:%M')}" if live else ""
    lines = [f"Nothing merged{scoped} in {escape(call.repo)} for {report.label} ({report.tz_label}){as_of}."]
    latest = latest_merge(call.runtime.db, call.repo)
    if latest is not None:  # the dispatcher answers an empty store before any command runs
        day = local_day(latest, call.tz).isoformat()
        lines.append(f"The latest day with merged PRs is {day}: `/prdigest {day}`.")
    return replace(_reply("\n".join(lines)), found=False)


def each_repo(call: Call, one: Callable[[Call], Reply]) -> Reply:
    """`one` for every repository the call covers: those that found something in turn, then a line for the rest."""
    if len(call.repos) == 1:
        return one(call)
    replies = [one(call.for_repo(repo)) for repo in call.repos]
    found = [reply for reply in replies if reply.found]
    quiet = [reply.text.split("\n")[0] for reply in replies if not reply.found]
    if not found:
        return _reply("\n".join(reply.text for reply in replies), public=any(r.public for r in replies))
    messages = [message for reply in found for message in reply.messages]
    if quiet:
        messages.append(text_message("\n".join(quiet)))
    if len(messages) > MAX_RESPONSES:
        messages = messages[: MAX_RESPONSES - 1] + [
            text_message(f"_{len(messages) - MAX_RESPONSES + 1} more messages left out: name one repository to see all of its PRs._")
        ]
    return Reply(messages, public=any(reply.public for reply in found))


def cmd_period(call: Call) -> Reply:
    rest, period = read_period(call, call.args or "today", "when")
    if rest or period is None:
        raise CommandError(f"`{escape(rest)}` is not a day or a range of days; give one period", "when")
    return each_repo(call, lambda one: _report_reply(one, _load(one, period)))


def cmd_area(call: Call) -> Reply:
    name, period = _split_period(call, call.args, "area")
    if not name:
        raise CommandError("which area?", "area")
    areas = {repo: resolve_area(name, repo) for repo in call.repos}
    having = tuple(repo for repo, area in areas.items() if area)
    if not having:
        raise CommandError(escape(str(UnknownArea(name, call.repo))), "area")
    call = call.limited(having)
    return each_repo(call, lambda one: _report_reply(one, _load(one, period, areas[one.repo]), f"in {areas[one.repo]}"))


def cmd_author(call: Call) -> Reply:
    login, _, when = call.args.strip().partition(" ")
    rest, period = _split_period(call, when, "author")
    if not login or rest:
        raise CommandError("give one GitHub login", "author")
    login = login.lstrip("@")

    def one(call: Call) -> Reply:
        report = _load(call, period)
        mine = [pr for pr in report.prs if pr.author.lower() == login.lower()]
        return _report_reply(call, replace(report, prs=mine), scope=f"by {login}")

    return each_repo(call, one)


def cmd_areas(call: Call) -> Reply:
    rest, period = _split_period(call, call.args, "areas")
    if rest:
        raise CommandError("give at most one period", "areas")
    return each_repo(call, lambda one: _area_counts(one, period))


def _area_counts(call: Call, period: Period) -> Reply:
    report = _load(call, period)
    if not report.prs:
        return _nothing(call, report, None, report.last >= call.today)
    counts = Counter(area for pr in report.prs for area in pr.areas)
    unlabelled = sum(1 for pr in report.prs if not pr.areas)
    lines = [f"*Areas of {escape(call.repo)}, {report.label} ({report.tz_label}): {len(report.prs)} merged PRs*"]
    names, order = area_names(call.repo), area_order(call.repo)
    busy = sorted(counts, key=lambda area: (-counts[area], order(area)))
    lines.extend(f"\u2022 `{area}` {counts[area]}" for area in busy)
    if unlabelled:
        lines.append(f"\u2022 no area: {unlabelled}")
    quiet = [area for area in names if area not in counts]
    if quiet:
        lines.append("No PRs: " + ", ".join(quiet))
    lines.append("_One area's PRs: `/prdigest area NAME [when]`._")
    return _reply("\n".join(lines))


# ------------------------------------------------------------------ single PRs, search, questions

def cmd_pr(call: Call) -> Reply:
    match = _PR_NUMBER.match(call.args.strip())
    if not match:
        raise CommandError("give a PR number, like `pr 1234`", "pr")
    number = int(match.group(1))
    if call.scope.named and len(call.repos) == 1:
        return _pr_summary(call.runtime, call.repo, number)
    found = holders(call.runtime, call.repos, number, followed(call.runtime, call.team))
    if len(found) > 1:
        return _reply(ambiguous_number(number, found))
    return _pr_summary(call.runtime, found[0] if found else call.repo, number)


def _pr_summary(runtime: Runtime, repo: str, number: int) -> Reply:
    pr = get_pr(runtime.db, repo, number)
    if pr is None:
        return _reply(
            f"{escape(repo)}#{number} is not in the store: it holds the PRs merged there"
            " (an open PR, or one merged since the last ingest, is not there yet).",
            error=True,  # `prdigest run` exits 1 on it, and it is not offered for sharing
        )
    from bot.model.summarize import ensure_summary  # imported on use: it brings in the model client

    pr = ensure_summary(runtime.db, runtime.settings, pr, runtime.llm)
    tz = runtime.settings.timezone
    shipped = release_status_line(release_status(runtime.db, pr), pr, tz)
    return Reply([pr_summary_message(pr, tz, shipped)])


def pr_reply(runtime: Runtime, repo: str, number: int) -> Reply:
    """The full summary of one PR (the report's button); never raises."""
    return guarded(f"pr {repo}#{number}", lambda: _pr_summary(runtime, repo, number))


def cmd_search(call: Call) -> Reply:
    query = call.args.strip()
    if not query:
        raise CommandError("search for what?", "search")
    return each_repo(call, lambda one: _search(one, query))


def _search(call: Call, query: str) -> Reply:
    result = search_prs(call.runtime.db, query, call.repo, call.tz, limit=SEARCH_HITS, now=call.now)
    if not result.hits:
        return replace(_reply(f"Nothing in {escape(call.repo)} matched \u201c{escape(query)}\u201d."), found=False)
    heading = f"*PRs of {escape(call.repo)} matching \u201c{escape(query)}\u201d*"
    return Reply([pr_list_message(heading, [hit.pr for hit in result.hits], call.tz, result.note)])


def cmd_ask(call: Call) -> Reply:
    question = call.args.strip()
    if not question:
        raise CommandError("ask what?", "ask")
    return Reply([answer(call.runtime, question, call.team, now=call.now, channel=call.channel)])


# ------------------------------------------------------------------ releases

def cmd_releases(call: Call) -> Reply:
    if call.words:
        raise CommandError("releases takes no arguments", "releases")
    return each_repo(call, _releases)


def _releases(call: Call) -> Reply:
    found = releases_of(call.runtime.db, call.repo, limit=RELEASES_LISTED)
    if not found:
        return replace(_reply(f"No release of {escape(call.repo)} is stored yet: `prdigest ingest` reads them."), found=False)
    return Reply([release_list_message(call.repo, found, call.tz)])


def cmd_release(call: Call) -> Reply:
    wanted = call.args.strip() or LATEST
    if len(wanted.split()) > 1:
        raise CommandError("give one tag, or `latest`", "release")
    return each_repo(call, lambda one: _release(one, wanted))


def _release(call: Call, wanted: str) -> Reply:
    db = call.runtime.db
    release = find_release(db, call.repo, wanted)
    if release is None:
        if wanted.lower() == LATEST or not releases_of(db, call.repo, limit=1):
            return _releases(call)
        close = closest_tags(db, call.repo, wanted)
        hint = f" The closest: {', '.join(f'`{escape(tag)}`' for tag in close)}." if close else " `/prdigest releases` lists them."
        return replace(_reply(f"No release `{escape(wanted)}` of {escape(call.repo)}.{hint}"), found=False)
    if not release.mapped:
        return _reply(
            f"{release_name(release)} of {escape(call.repo)} came out before the oldest PR in the store, so its PRs"
            f" are not mapped: `prdigest release-notes {escape(release.tag)}` reads them from GitHub."
        )
    return Reply(release_messages(load_release(db, release, call.tz), call.tz, limit=call.listed))


# ------------------------------------------------------------------ link previews

def cmd_unfurl(call: Call) -> Reply:
    word = call.args.strip().lower()
    if word not in ("on", "off", ""):
        raise CommandError("say `on` or `off`", "unfurl")
    if not call.channel:
        raise CommandError("link previews belong to a Slack channel: run this in the channel", "unfurl")
    if not word:
        state = "on" if previews_on(call.runtime.db, call.team, call.channel) else "off"
        return _reply(f"PR link previews are {state} in this channel. `/prdigest unfurl on` or `off` changes it.")
    changed = set_previews(call.runtime.db, call.team, call.channel, word == "on", call.user, call.now)
    if not changed:
        return _reply(f"PR link previews were already {word} in this channel.")
    if word == "off":
        return _reply("PR links pasted in this channel are no longer previewed by prdigest.", public=True)
    who = f" (turned on by <@{call.user}>)" if call.user and is_user(call.user) else ""
    repos = escape(", ".join(followed(call.runtime, call.team)))
    return _reply(
        f"PR links of {repos} pasted in this channel now get a compact preview{who}: title, author, merged date,"
        f" areas and what changed. A PR is previewed at most once in {QUIET_SECONDS // 60} minutes here."
        " `/prdigest unfurl off` stops them.",
        public=True,
    )


# ------------------------------------------------------------------ help and dispatch

def cmd_help(call: Call) -> Reply:
    return _reply(help_text(call.repos))


WHEN = Command("[when]", "what merged: today so far, yesterday, the last 7 days (week), a day or a range", cmd_period)
COMMANDS: dict[str, Command] = {
    "today": WHEN,
    "yesterday": WHEN,
    "week": WHEN,
    "area": Command("area NAME [when]", "one area (default: the last 7 days)", cmd_area),
    "areas": Command("areas [when]", "every area with its count (default: the last 7 days)", cmd_areas),
    "pr": Command("pr N", "the full summary of one PR", cmd_pr, slow=True),
    "author": Command("author LOGIN [when]", "one person's PRs (default: the last 7 days)", cmd_author),
    "releases": Command("releases", "the last releases, with how many PRs each shipped", cmd_releases),
    "release": Command("release [TAG | latest]", "one release's PRs by area (default: the latest)", cmd_release),
    "search": Command("search TEXT", "find PRs by words", cmd_search, free_text=True),
    "ask": Command("ask QUESTION", "a question about what merged (or mention @prdigest)", cmd_ask, slow=True, scoped=False),
    "subscribe": Command(
        SUBSCRIBE_USAGE,
        f"this channel's report: yesterday's every day (default {DEFAULT_POST_AT.strftime('%H:%M')}), the weekdays'"
        " (Monday's covers the weekend), the week's (default Monday), `live`: each PR as soon as it is ingested,"
        " or `releases`: a thread for each new release",
        cmd_subscribe,
        reads_prs=False,
    ),
    "unsubscribe": Command(
        "unsubscribe [REPO...] [daily | weekly | live | releases]",
        "stop this channel's reports, alerts and release threads (all, unless named)",
        cmd_unsubscribe, reads_prs=False,
    ),
    "subscriptions": Command("subscriptions", "what this channel gets", cmd_subscriptions, reads_prs=False),
    "me": Command(
        ME_USAGE, "your own subscriptions, by direct message: link your GitHub login, then `me subscribe my-prs`",
        cmd_me, reads_prs=False,
    ),
    "unfurl": Command(
        "unfurl on | off", "previews of PR links pasted in this channel (off unless turned on)", cmd_unfurl,
        reads_prs=False, scoped=False,
    ),
    "help": Command("help", "this list", cmd_help, reads_prs=False),
}


QUESTIONS = "Mention @prdigest with a question to get the answer in a thread."


def help_text(repos: Sequence[str], questions: str = QUESTIONS) -> str:
    """The list of commands, then how to ask a question (`questions`, our mrkdwn)."""
    lines = [f"*/prdigest*: what merged in {escape(', '.join(repos))}"]
    unique = dict.fromkeys(COMMANDS.values())
    lines.extend(f"\u2022 `/prdigest {command.usage}` \u2014 {command.about}" for command in unique)
    lines.append(f"_when_ is {PERIOD_USAGE}. {FILTER_USAGE}.")
    lines.append(questions)
    if len(repos) > 1:
        lines.append("Name a repository (`OWNER/NAME` or its name) in a command or a question to see only that one.")
    return "\n".join(lines)


def usage(name: str) -> str:
    command = COMMANDS.get(name, WHEN)
    where = f" (_when_ is {PERIOD_USAGE})" if "when" in command.usage else f" ({FILTER_USAGE})" if "FILTER" in command.usage else ""
    return f"Usage: `/prdigest {command.usage}`{where}"


def find_command(text: str, tz: ZoneInfo, now: datetime) -> tuple[str, Command | None, str]:
    """The command word, its Command (None if unknown) and the text after it; a period is the `when` command."""
    stripped = text.strip()
    word, _, rest = stripped.partition(" ")
    name = word.lower()
    if not name:
        return "today", COMMANDS["today"], ""
    if is_period(name):
        return name, WHEN, stripped
    if name in COMMANDS:
        return name, COMMANDS[name], rest
    if reads_as_period(stripped, tz, now):
        return name, WHEN, stripped
    return name, None, rest


def is_command(runtime: Runtime, text: str) -> bool:
    """Whether `text` is a command, or one word that is a mistyped command's name, rather than a question."""
    name, command, _ = find_command(typed(text), runtime.settings.timezone, runtime.now())
    return command is not None or (len(text.split()) == 1 and _closest_command(name) is not None)


def command_name(runtime: Runtime, text: str) -> str:
    """The name a command goes by in logs: its word ("area", "pr"), "when" for a day or a range, "unknown"."""
    _, command, _ = find_command(typed(text), runtime.settings.timezone, runtime.now())
    return command.usage.split()[0].strip("[]") if command else "unknown"


def is_slow(text: str) -> bool:
    command = COMMANDS.get(text.strip().partition(" ")[0].lower())
    return command is not None and command.slow


def _closest_command(name: str) -> str | None:
    import difflib  # here, as only a mistyped command needs it

    close = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown(name: str, text: str, repos: Sequence[str]) -> Reply:
    close = _closest_command(name)
    hint = f" Did you mean `{close}`?" if close else ""
    if not close and len(text.split()) > 2:
        hint = f" To ask a question: `/prdigest ask {escape(text.strip())}`"
    return _reply(f"`{escape(name)}` is not a command.{hint}\n\n{help_text(repos)}", error=True)


def execute(
    runtime: Runtime, text: str, team: Team, channel: str | None = None, user: str | None = None,
    now: datetime | None = None,
) -> Reply:
    """Answer one command from the team's workspace. Never raises: bad input and failing dependencies become a
    short reply."""
    text, now = typed(text), now or runtime.now()
    name, command, rest = find_command(text, runtime.settings.timezone, now)
    if command is None:
        return corrected(runtime, text, team, channel, user, now) or _unknown(name, text, runtime.settings.repos)
    return guarded(text.strip(), lambda: _run(name, command, runtime, rest, now, team, channel, user))


def corrected(
    runtime: Runtime, text: str, team: Team, channel: str | None = None, user: str | None = None,
    now: datetime | None = None,
) -> Reply | None:
    """The answer to `text` read as the command its first word mistypes by one letter ("are rocm": `area rocm`),
    saying so; None when no such command takes the rest of the words.

    Only commands that read PRs are tried, never one that changes a subscription, and `ask`, since a mistyped
    `ask` is a question anyway. The rest must read as that command's arguments: "are there rocm fixes?" is no
    area's name, so it stays a question."""
    from store.retrieval.reading.typos import one_slip

    word, _, rest = typed(text).strip().partition(" ")
    word = word.lower()
    if len(word) < 3:
        return None
    for name, command in COMMANDS.items():
        if not command.reads_prs or command.run is cmd_ask or not one_slip(word, name):
            continue
        args = rest if command is not WHEN else f"{name} {rest}".strip()
        run = functools.partial(_run, name, command, runtime, args, now, team, channel, user)
        reply = guarded(f"{name} {rest}", run)
        if not reply.error:
            return _noted(reply, f"_Read `{escape(word)}` as `{name}`._")
    return None


def _noted(reply: Reply, note: str) -> Reply:
    """`reply` with `note` (our mrkdwn) above its first message."""
    first, *others = reply.messages
    noted = Message(text=f"{note}\n{first.text}", blocks=[mrkdwn_section(note), *first.blocks], asked=first.asked)
    return replace(reply, messages=[noted, *others])


def _run(
    name: str, command: Command, runtime: Runtime, rest: str, now: datetime | None, team: Team, channel: str | None,
    user: str | None,
) -> Reply:
    """The command's reply, for the repositories it names or the channel's.

    One that reads PRs says instead when the store holds none to read.
    """
    if command.scoped:
        scope = scope_of(runtime, rest, team, channel)
    else:
        scope = Scope(channel_repos(runtime, team, channel), rest)
    if scope.unknown and not command.free_text:
        raise CommandError(not_followed(scope.unknown[0], followed(runtime, team)), name)
    call = Call(runtime, scope.text, now or runtime.now(), scope, team, channel, user)
    if command.reads_prs:
        notices = [empty_store_notice(call.runtime.db, repo) for repo in call.repos]
        if all(notices):
            return _reply(escape(notices[0] or ""))
    return command.run(call)


def guarded(what: str, work: Callable[[], Reply]) -> Reply:
    """work(), with bad arguments and failing dependencies turned into a short reply."""
    try:
        return work()
    except CommandError as exc:
        return _reply(f"{exc}\n{usage(exc.command)}", error=True)
    except (StoreReadOnly, StoreFull) as exc:  # not busy and not a moment's trouble: say what it is
        log.warning("%r needs to write: %s", what, exc)
        return _reply(escape(str(exc)), error=True)
    except (StoreError, sqlite3.OperationalError) as exc:
        log.warning("store unavailable for %r: %s", what, exc)
        return _reply("Sorry, the store is busy or unavailable right now; try again in a minute.", error=True)
    except Exception:  # the bot answers every command, whatever broke
        log.exception("%r failed", what)
        return _reply("Sorry, something went wrong while answering that; it has been logged.", error=True)
