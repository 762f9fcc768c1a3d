"""When a subscription sends, and which local days each of its reports covers.

- `daily`: every day at its time, the report of yesterday.
- `weekdays`: Monday to Friday at its time. A report covers the days after the last day the previous
  report covered, through yesterday: Tuesday to Friday that is yesterday, and Monday's covers Friday,
  Saturday and Sunday. When the previous report did not go out (the bot was down on the Friday of a long
  weekend), the next one covers every day since, up to a week back.
- `weekly`: on its day (Monday unless told) at its time, the 7 days up to the day before.
- `live` and `my-prs`: each PR soon after it is stored; they have no time. `my-prs` also tells of each release
  that ships the person's PRs.
- `releases`: a thread for each release published since, once its PRs are mapped; it has no time either.

Times are local wall-clock times: one skipped by the spring DST switch comes with the first minute after
it, and one that happens twice in autumn comes at the first.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAILY, WEEKDAYS, WEEKLY, LIVE, MY_PRS, RELEASES = "daily", "weekdays", "weekly", "live", "my-prs", "releases"
CADENCES = (DAILY, WEEKDAYS, WEEKLY, LIVE, MY_PRS, RELEASES)
REPORTS = (DAILY, WEEKDAYS, WEEKLY)  # the cadences that post a report at a time
DEFAULT_POST_AT = time(9, 0)
DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SATURDAY = 5
# A report after downtime reaches back at most this far; an older last report is not followed.
CATCH_UP = timedelta(days=7)
WEEK = timedelta(days=7)
ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Cadence:
    name: str = DAILY
    post_at: time = DEFAULT_POST_AT  # local time of day (reports only)
    weekday: int = 0  # the day a weekly report comes, Monday 0

    @property
    def slot(self) -> str:
        """A channel (or a person) has at most one subscription to a repository per slot: `daily` and
        `weekdays` share one, since a channel wants one of the two."""
        return DAILY if self.name == WEEKDAYS else self.name

    @property
    def reports(self) -> bool:
        return self.name in REPORTS

    @property
    def text(self) -> str:
        """The words `subscribe` takes for it: `daily at 09:00`, `weekly on monday at 09:00`, `live`."""
        at = f" at {self.post_at.strftime('%H:%M')}" if self.reports else ""
        on = f" on {DAY_NAMES[self.weekday]}" if self.name == WEEKLY else ""
        return f"{self.name}{on}{at}"

    def due(self, now: datetime, tz: ZoneInfo, since: datetime) -> date | None:
        """The last day of the report due at `now`, for a subscription made at `since`; None when none is.

        A daily or weekdays report is due from its time until midnight (after downtime only the latest
        is sent). A weekly one is due from its time until the next week's: a week missed while the bot was
        down is sent late, once.
        """
        if not self.reports:
            return None
        local = now.astimezone(tz)
        day = local.date()
        if self.name == WEEKLY:
            day -= timedelta(days=(day.weekday() - self.weekday) % 7)
        elif self.name == WEEKDAYS and day.weekday() >= SATURDAY:
            return None
        wall = datetime.combine(day, self.post_at)
        if local.replace(tzinfo=None) < wall:
            if self.name != WEEKLY:
                return None
            day -= WEEK
            wall = datetime.combine(day, self.post_at)
        if since > wall.replace(tzinfo=tz):
            return None  # subscribed after that report's time: the first one comes at the next
        return day - ONE_DAY

    def report_for(self, day: date) -> date:
        """The last day of the report that covers `day`: the day itself, except for `weekdays`, whose
        Monday report covers Friday to Sunday."""
        if self.name != WEEKDAYS:
            return day
        posted = day + ONE_DAY
        while posted.weekday() >= SATURDAY:
            posted += ONE_DAY
        return posted - ONE_DAY

    def first_day(self, last: date, covered: date | None = None) -> date:
        """The first day of the report ending `last`, given the last day an earlier report of the
        subscription covered (None: there was none)."""
        if self.name == WEEKLY:
            return last - WEEK + ONE_DAY
        if self.name != WEEKDAYS:
            return last
        posted = last + ONE_DAY
        earliest = posted - CATCH_UP
        if covered is not None and earliest <= covered < last:
            return covered + ONE_DAY
        previous = posted - ONE_DAY  # the weekday before the one it is posted on
        while previous.weekday() >= SATURDAY:
            previous -= ONE_DAY
        return max(previous, earliest)


EVERY_DAY = Cadence()


def read_weekday(word: str) -> int | None:
    """A day of the week as typed: `monday`, `mon`, `Mondays`; None if the word is none."""
    word = word.lower().rstrip("s") if len(word) > 4 else word.lower()
    for number, name in enumerate(DAY_NAMES):
        if word == name or (len(word) >= 3 and name.startswith(word)):
            return number
    return None
