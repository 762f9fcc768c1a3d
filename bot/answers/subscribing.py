"""`subscribe`, `unsubscribe`, `subscriptions` and `me`: what channels and people follow, through which
filter, on which cadence.

A subscription's words are its cadence (`daily`, `weekdays`, `weekly [on DAY]`, `live`, `my-prs`,
`at HH:MM`) and its filter (store.subscription.filter), in any order; the filter is printed back
as its canonical text, which reads back to the same filter.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import time, timedelta
from zoneinfo import ZoneInfo

from bot.answers.call import Call, CommandError, Reply, reply
from bot.messages.mrkdwn import escape
from store.subscription.cadence import (
    CADENCES,
    DAILY,
    DAY_NAMES,
    DEFAULT_POST_AT,
    LIVE,
    MY_PRS,
    RELEASES,
    SATURDAY,
    WEEKDAYS,
    WEEKLY,
    Cadence,
    read_weekday,
)
from store.subscription.filter import AUTHOR, Filter, FilterError, parse_filter, split_terms
from store.subscription.logins import is_login
from store.tables.people import github_login, link_github
from store.tables.posts import find_post
from store.tables.subscriptions import (
    Subscription,
    channel_subscriptions,
    is_user,
    report_key,
    subscribe,
    team_subscriptions,
    unsubscribe,
)
from store.text.patterns import LazyPattern

_TIME = LazyPattern(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$", re.IGNORECASE)
# The words of a cadence; `watch` is an older name of `live`.
CADENCE_WORDS = {**{name: name for name in CADENCES}, "watch": LIVE}
# Besides filter terms, the words a subscription takes: a mistyped one is suggested like a term.
OWN_WORDS = (*CADENCE_WORDS, "at", "on")
SUBSCRIBE_USAGE = "subscribe [REPO...] [FILTER...] [daily | weekdays | weekly [on DAY] | live | releases] [at HH:MM]"
FILTER_USAGE = (
    "FILTER is AREA, author:LOGIN, label:NAME or path:GLOB (each also with `-` before it to leave those out),"
    " `-bots` or `substantial`: terms of one kind are ORed, kinds are ANDed, and a `-` term always wins"
)


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


# ------------------------------------------------------------------ what a subscription says

def describe(sub: Subscription, tz: ZoneInfo) -> str:
    """The subscription in words, its filter as the canonical text that `subscribe` reads back."""
    rule = f" (`{escape(sub.filter.text)}`)" if not sub.filter.everything else ""
    of = f" of {escape(sub.repo)}{rule}"
    cadence = sub.cadence
    at = f"at {cadence.post_at.strftime('%H:%M')} {tz.key} time"
    if cadence.name == DAILY:
        return f"the daily report{of} {at}"
    if cadence.name == WEEKDAYS:
        return f"the weekday report{of} {at}, Monday to Friday (Monday's covers the weekend)"
    if cadence.name == WEEKLY:
        return f"the weekly report{of} on {DAY_NAMES[cadence.weekday].title()}s {at}, for the 7 days before"
    if cadence.name == LIVE:
        return f"live alerts{of} as PRs merge"
    if cadence.name == RELEASES:
        return f"a thread for each new release{of}"
    return f"a message for each PR of yours that merges in {escape(sub.repo)}{rule}"


def _next_report(call: Call, sub: Subscription) -> str:
    """When the next report comes: "today", "tomorrow" or "on Monday"."""
    cadence = sub.cadence
    for ahead in range(8):
        day = call.today + timedelta(days=ahead)
        if (cadence.name == WEEKDAYS and day.weekday() >= SATURDAY) or (
            cadence.name == WEEKLY and day.weekday() != cadence.weekday
        ):
            continue
        if ahead == 0:  # today's, unless its time has passed or it is out already
            posted = find_post(call.runtime.db, report_key(sub, day - timedelta(days=1)))
            if call.now.time() >= cadence.post_at or posted is not None:
                continue
        return "today" if ahead == 0 else "tomorrow" if ahead == 1 else f"on {DAY_NAMES[day.weekday()].title()}"
    raise AssertionError("every cadence that reports comes within a week")


def _comes(call: Call, sub: Subscription) -> str:
    if sub.slot == MY_PRS:
        return " Each comes with the ingest that finds it merged."
    if sub.live:
        return " The first comes with the next ingest."
    if sub.slot == RELEASES:
        return " The first comes when the next release is published."
    return f" The next one comes {_next_report(call, sub)}."


# ------------------------------------------------------------------ reading the words

@dataclass
class Wanted:
    cadence: Cadence
    terms: list[str]  # the filter's words


def read_wanted(words: Sequence[str], command: str, personal: bool) -> Wanted:
    """The cadence the words give (daily unless they say) and the words left for the filter."""
    wanted = _WantedWords(command, personal)
    queue = list(words)
    while queue:
        wanted.read(queue.pop(0), queue)
    return wanted.wanted()


class _WantedWords:
    """A subscription command's words, read in order: a cadence, `on DAY`, `at TIME`; the rest are the filter's."""

    def __init__(self, command: str, personal: bool) -> None:
        self.command, self.personal = command, personal
        self.name: str | None = None
        self.post_at, self.timed = DEFAULT_POST_AT, False
        self.weekday: int | None = None
        self.terms: list[str] = []

    def read(self, word: str, queue: list[str]) -> None:
        """One word; `on` and `at` take the word after them from `queue`."""
        low = word.lower()
        if low in CADENCE_WORDS:
            self._cadence(CADENCE_WORDS[low])
        elif low == "on":
            self.weekday = read_weekday(queue.pop(0)) if queue else None
            if self.weekday is None:
                raise CommandError("`on` needs a day of the week, like `weekly on friday`", self.command)
        elif low == "at" or parse_time(word) is not None:
            when = parse_time(queue.pop(0) if low == "at" and queue else word)
            if when is None:
                raise CommandError("`at` needs a time, like `at 09:00`", self.command)
            self.post_at, self.timed = when, True
        else:
            self.terms.append(word)

    def _cadence(self, name: str) -> None:
        if self.name not in (None, name):
            choices = list(CADENCES) if self.personal else [name for name in CADENCES if name != MY_PRS]
            raise CommandError(f"give one of {', '.join(choices[:-1])} or {choices[-1]}", self.command)
        self.name = name

    def wanted(self) -> Wanted:
        name, command = self.name or DAILY, self.command
        if name == MY_PRS and not self.personal:
            raise CommandError("my-prs is a subscription of your own: `/prdigest me subscribe my-prs`", command)
        if self.timed and name in (LIVE, MY_PRS, RELEASES):
            comes = {LIVE: "live alerts come as PRs merge", MY_PRS: "my-prs messages come as PRs merge",
                     RELEASES: "release threads come as releases are published"}[name]
            raise CommandError(f"{comes}; `at` is for reports", command)
        if self.weekday is not None and name != WEEKLY:
            raise CommandError("`on DAY` is for the weekly report: `weekly on friday`", command)
        return Wanted(Cadence(name, self.post_at, self.weekday or 0), self.terms)


def _planned(call: Call, repos: Sequence[str], wanted: Wanted, command: str) -> list[tuple[str, Filter]]:
    """Each repository whose areas the filter names, with the filter read for it; CommandError when none has them.

    As with `area`, a repository without the areas is left out rather than refused.
    """
    found, refusal = [], None
    for repo in repos:
        try:
            rule = parse_filter(wanted.terms, repo, OWN_WORDS)
        except FilterError as exc:
            refusal = refusal or exc
            continue
        if wanted.cadence.name == MY_PRS and rule.has(AUTHOR):
            raise CommandError("my-prs are the PRs you wrote: leave `author:` out", command)
        found.append((repo, rule))
    if not found:
        raise CommandError(escape(str(refusal)), command)
    return found


def _split(call: Call, command: str) -> list[str]:
    try:
        return split_terms(call.args)
    except FilterError as exc:
        raise CommandError(escape(str(exc)), command) from None


def _slot(words: Sequence[str], command: str) -> str | None:
    """The one slot `unsubscribe` words name (daily, weekly, live, my-prs), or None for all of them."""
    slots = {Cadence(CADENCE_WORDS[word.lower()]).slot for word in words if word.lower() in CADENCE_WORDS}
    if len(slots) > 1 or any(word.lower() not in CADENCE_WORDS for word in words):
        raise CommandError("unsubscribe takes at most a repository and one of daily, weekly, live, releases or my-prs", command)
    return next(iter(slots), None)


# ------------------------------------------------------------------ channels

def _need_channel(call: Call, command: str) -> str:
    if not call.channel:
        raise CommandError(
            "subscriptions belong to a Slack channel: run this in the channel (or `prdigest run --channel ID`)",
            command,
        )
    return call.channel


def cmd_subscribe(call: Call) -> Reply:
    channel = _need_channel(call, "subscribe")
    wanted = read_wanted(_split(call, "subscribe"), "subscribe", personal=False)
    subs = [_subscribe(call, channel, repo, rule, wanted.cadence) for repo, rule in _planned(call, call.repos, wanted, "subscribe")]
    who = f" (set by <@{call.user}>)" if call.user and is_user(call.user) else ""
    lines = []
    for sub, created in subs:
        done = "This channel now gets" if created else "Updated: this channel gets"
        lines.append(f"{done} {describe(sub, call.tz)}{who}.{_comes(call, sub)}")
    lines.append("_A private channel needs `/invite @prdigest` first; `/prdigest unsubscribe` stops it._")
    return reply("\n".join(lines), public=True)


def _subscribe(call: Call, channel: str, repo: str, rule: Filter, cadence: Cadence) -> tuple[Subscription, bool]:
    return subscribe(call.runtime.db, call.team, channel, repo, rule, cadence, call.user, call.now)


def cmd_unsubscribe(call: Call) -> Reply:
    channel = _need_channel(call, "unsubscribe")
    slot = _slot(call.words, "unsubscribe")
    removed = _unsubscribe(call, channel, slot)
    if not removed:
        of = f" of {escape(', '.join(call.repos))}" if call.scope.named else ""
        return reply(f"This channel has no {_KINDS[slot]}{of} to stop.")
    return reply("\n".join(f"This channel no longer gets {describe(sub, call.tz)}." for sub in removed), public=True)


# What `unsubscribe` says a channel or person has none of, by slot.
_KINDS = {None: "reports, live alerts or release threads", DAILY: "daily report", WEEKLY: "weekly report",
          LIVE: "live alerts", MY_PRS: "my-prs messages", RELEASES: "release threads"}


def _unsubscribe(call: Call, channel: str, slot: str | None) -> list[Subscription]:
    repos = call.repos if call.scope.named else (None,)
    return [sub for repo in repos for sub in unsubscribe(call.runtime.db, call.team, channel, repo, slot)]


def cmd_subscriptions(call: Call) -> Reply:
    if call.words:
        raise CommandError("subscriptions takes no arguments", "subscriptions")
    if call.channel:
        subs = channel_subscriptions(call.runtime.db, call.team, call.channel)
        if not subs:
            return reply(f"This channel gets no reports, live alerts or release threads. `/prdigest {SUBSCRIBE_USAGE}` starts one.")
        return reply("\n".join(f"This channel gets {describe(sub, call.tz)}." for sub in subs))
    subs = team_subscriptions(call.runtime.db, call.team)
    if not subs:
        return reply("No channel gets reports, live alerts or release threads yet.")
    return reply("\n".join(f"\u2022 {escape(sub.channel)}: {describe(sub, call.tz)}" for sub in subs))


# ------------------------------------------------------------------ people

ME_USAGE = "me [github LOGIN | subscribe [REPO...] [FILTER...] [daily | weekdays | weekly | live | releases | my-prs] | unsubscribe ...]"


def cmd_me(call: Call) -> Reply:
    user = call.user
    if not user or not is_user(user):
        raise CommandError("personal subscriptions belong to a Slack user: use `/prdigest me` in Slack", "me")
    word, _, rest = call.args.strip().partition(" ")
    me = Call(call.runtime, rest, call.now, call.scope, call.team, call.channel, user)
    action = {"": _my_subscriptions, "subscriptions": _my_subscriptions, "github": _link, "subscribe": _my_subscribe,
              "unsubscribe": _my_unsubscribe}.get(word.lower())
    if action is None:
        raise CommandError(f"`{escape(word)}` is not something `me` does", "me")
    return replace(action(me, user), personal=True)


def _link(call: Call, user: str) -> Reply:
    login = call.args.strip().removeprefix("@")
    if not login:
        linked = github_login(call.runtime.db, call.team, user)
        return reply(f"Your GitHub login is `{escape(linked)}`." if linked else "You have linked no GitHub login yet.")
    if not is_login(login):
        raise CommandError(f"`{escape(login)}` is not a GitHub login (letters, digits and hyphens)", "me")
    before = link_github(call.runtime.db, call.team, user, login)
    was = f" (it was `{escape(before)}`)" if before and before != login else ""
    return reply(f"Your GitHub login is now `{escape(login)}`{was}: `my-prs` follows the PRs it writes.")


def _my_repos(call: Call) -> Sequence[str]:
    """The repositories a personal subscription covers: those named, else every configured one (not the channel's)."""
    return call.repos if call.scope.named else call.runtime.settings.repos


def _my_subscribe(call: Call, user: str) -> Reply:
    wanted = read_wanted(_split(call, "me"), "me", personal=True)
    subs = [_subscribe(call, user, repo, rule, wanted.cadence) for repo, rule in _planned(call, _my_repos(call), wanted, "me")]
    lines = [
        f"{'You now get' if created else 'Updated: you get'} {describe(sub, call.tz)}, by direct message.{_comes(call, sub)}"
        for sub, created in subs
    ]
    if wanted.cadence.name == MY_PRS and github_login(call.runtime.db, call.team, user) is None:
        lines.append("Link your GitHub login first, or nothing comes: `/prdigest me github LOGIN`.")
    return reply("\n".join(lines))


def _my_unsubscribe(call: Call, user: str) -> Reply:
    slot = _slot(call.words, "me")
    removed = _unsubscribe(call, user, slot)
    if not removed:
        return reply(f"You have no {_KINDS[slot]} to stop.")
    return reply("\n".join(f"You no longer get {describe(sub, call.tz)}." for sub in removed))


def _my_subscriptions(call: Call, user: str) -> Reply:
    if call.args.strip():
        raise CommandError("`me` alone lists your subscriptions", "me")
    login = github_login(call.runtime.db, call.team, user)
    lines = [f"Your GitHub login: `{escape(login)}`." if login else "No GitHub login linked: `/prdigest me github LOGIN`."]
    subs = channel_subscriptions(call.runtime.db, call.team, user)
    lines.extend(f"You get {describe(sub, call.tz)}, by direct message." for sub in subs)
    if not subs:
        lines.append("You get nothing by direct message yet: `/prdigest me subscribe my-prs`, or the App Home's controls.")
    return reply("\n".join(lines))

