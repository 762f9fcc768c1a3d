"""When a question or a command asks about: dates, ranges, weekdays, zones and the parts of a day.

The reader is deliberately forgiving: what it does not recognise as a time stays
in the text for the rest of the question's reading.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from store.days import day_bounds
from store.retrieval.reading.holidays import HOLIDAY_NAMES, holiday, long_weekend
from store.text.patterns import LazyPattern


@dataclass(frozen=True)
class TimeRange:
    start: datetime | None  # inclusive; None is open
    end: datetime | None  # exclusive; None is open (open-ended phrases like "since" end now)
    label: str  # how answers say it: "on Fri Feb 13", "this week (since Mon Feb 9)"


# All time: what a question about everything ("who wrote the most PRs?") is kept to.
EVER = TimeRange(None, None, "in the store")


# ---------------------------------------------------------------- time

# Month names that are words as often ("spec dec" is speculative decoding): a month only after "in" or beside a day.
_WORDS_TOO = ("mar", "may", "dec")
_MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
    "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
# Short weekday names, read only beside a date ("tue apr 7"): alone, "sat" and "sun" are words too.
_WEEKDAY_SHORT = r"(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3,
}
# Longest first, so "sept" is not read as "sep".
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MON = rf"(?P<mon>{_MONTH_NAMES})\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_COUNT = r"(?P<count>\d+|(?:a\s+)?(?:couple|few)(?:\s+of)?|" + "|".join(_NUMBER_WORDS) + r")"
_UNIT = r"(?P<unit>hours?|hrs?|days?|weeks?|months?)"
_SEP = r"\s*(?:-|–|—|\.\.|/|\bto\b|\bthrough\b|\bthru\b|\buntil\b|\btill\b|\band\b|\bor\b)\s*"
_MARK = "\x00"  # stands for a recognised time expression inside the text; stripped from input first
_TOKEN = _MARK + r"(?P<{name}>\d+)" + _MARK


@dataclass(frozen=True)
class _Moment:
    """A recognised time expression: local days first..last, or an exact rolling window."""

    first: date | None = None
    last: date | None = None
    start: datetime | None = None  # rolling windows only
    label: str = ""
    # A month-day without a year resolves against an anchor ("most recent not after it").
    month: int | None = None
    day: int | None = None


# Whether any PR merged in [start, end): what picks "the sunday in feb" among February's Sundays.
MergedBetween = Callable[[datetime, datetime], bool]


class _TimeParser:
    def __init__(self, tz: ZoneInfo, now: datetime, merged: MergedBetween | None = None) -> None:
        self.tz = tz
        self.now = now
        self.merged = merged
        self.today = now.astimezone(tz).date()
        self.moments: list[_Moment] = []
        self.problems: list[str] = []

    # --- labels
    def day_label(self, day: date) -> str:
        text = f"{day:%a %b} {day.day}"
        return text if day.year == self.today.year else f"{text}, {day.year}"

    # --- resolving
    def resolve(self, moment: _Moment, anchor: date) -> tuple[date, date] | None:
        if moment.month is not None and moment.day is not None:
            for year in (anchor.year, anchor.year - 1):
                try:
                    day = date(year, moment.month, moment.day)
                except ValueError:
                    continue
                if day <= anchor:
                    return day, day
            return None
        if moment.first is None or moment.last is None:
            return None
        return moment.first, moment.last

    def bounds(self, first: date, last: date) -> tuple[datetime, datetime]:
        return day_bounds(first, self.tz)[0], day_bounds(last, self.tz)[1]

    # --- step 1: single expressions become marks
    def mark(self, text: str) -> str:
        steps: list[tuple[str, Callable[[re.Match[str]], _Moment | None]]] = [
            (r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", self._iso),
            # "apr 6-7", "apr 6/7": two days of a month named before them.
            (rf"\b{_MON}\s+{_DAY}{_SEP}(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\b{_YEAR}", self._month_span),
            # "3/16", "3/16/2026": month first, as in the US.
            (r"(?<![\w/.])(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])(?:/(?P<y>\d{4}))?(?![\w/])", self._month_slash_day),
            (rf"\b{_MON}\s+{_DAY}\b{_YEAR}", self._month_day),
            (rf"\b{_DAY}\s+(?:of\s+)?{_MON}(?![a-z]){_YEAR}", self._month_day),
            # "today's main", "tonight's nightly": main as it is, no time.
            (r"\b(?:today|tonight)'?s\s+(?=(?:main|master|head|tip|build|nightly|nightlies|wheels?|image)\b)", lambda m: None),
            (r"\b(?:the\s+)?day\s+before\s+yesterday\b", lambda m: self._days_ago(2, "the day before yesterday")),
            # "last night" is yesterday, narrowed to the night afterwards (see _within_day).
            (r"\byesterday\b|\blast\s+(?=night\b)", lambda m: self._days_ago(1, "yesterday")),
            # "this morning" is today, narrowed to the morning afterwards (see _within_day).
            (r"\b(?:today|tonight)\b|\bthis\s+(?=(?:morning|afternoon|evening)\b)", lambda m: self._days_ago(0, "today")),
            # "the sunday in feb", "that friday in feb (the 13th)": one weekday of a month.
            (rf"\b(?:(?:on\s+)?(?:the|that|a)\s+)?(?P<wd>{'|'.join(_WEEKDAYS)})s?\s+in\s+(?P<mon>{_MONTH_NAMES})\b"
             r"(?:\s*[(,]?\s*(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)\s*\)?)?", self._weekday_in_month),
            # "the 16th", "on the 22nd": that day of this month, or of the last month that has had it.
            (r"\b(?:on\s+)?the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)\b", self._ordinal_day),
            # A weekday or "the weekend/week of" beside a date only restates it: the date decides.
            # "monday night apr 13" too: the part of the day stays, to narrow the date.
            (rf"\b(?:{'|'.join(_WEEKDAYS)}|{_WEEKDAY_SHORT}|(?:the\s+)?weekend\s+of)\b\.?,?\s*"
             rf"(?=(?:(?:late\s+|early\s+)?(?:night|morning|afternoon|evening)\s+)?(?:the\s+)?{_MARK})", lambda m: None),
            # "the feb 21-22 weekend": the weekend after a date only restates it too.
            (rf"(?<={_MARK})\s+(?:long\s+)?weekend\b", lambda m: None),
            (r"\b(?:(?:over|on|during)\s+)?(?:the\s+|this\s+|last\s+)?long\s+weekend\b", self._long_weekend),
            # "heading into thanksgiving, what merged yesterday?": the holiday is when it is asked, not what of.
            (rf"\b(?:heading|going)\s+into\s+(?:the\s+)?(?:{'|'.join(re.escape(name) for name in HOLIDAY_NAMES)})(?![\w'])",
             lambda m: None),
            (rf"\b(?:on\s+)?(?P<holiday>{'|'.join(re.escape(name) for name in HOLIDAY_NAMES)})(?![\w'])", self._holiday),
            # "in the last week", "over the past month": the days up to now; "last week" alone is the calendar's,
            # and "the last week of august" a week of a month.
            (r"\b(?:in|over|during|within)\s+the\s+(?:last|past)\s+(?P<unit>week|month)\b(?!\s+of\b)", self._rolling),
            (r"\b(?P<mod>this|last|past|previous|prior)\s+(?P<period>week|month|weekend)\b", self._period),
            (r"\b(?:(?:over|on|during|at)\s+)?the\s+(?P<period>weekend)\b", self._period),
            (rf"\b(?:(?:in|over|during)\s+)?(?:the\s+)?(?:last|past|previous)\s+{_COUNT}\s+{_UNIT}", self._rolling),
            (r"\b(?:the\s+)?(?:last|past)\s+(?P<unit>hour|day)\b", self._rolling),
            (rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", self._ago),
            (r"\b(?:(?P<mod>last|this|past)\s+)?(?P<wd>" + "|".join(_WEEKDAYS) + r")\b", self._weekday),
            # "since the start of april", "the end of march": the month, as near as a day range can say.
            (rf"\b(?:the\s+)?(?:start|beginning|end|middle|rest)\s+of\s+(?=(?:{_MONTH_NAMES})\b)", lambda m: None),
            # "april and may", "feb to mar", "march or april": two months together (a bare "may" reads as a month beside
            # another).
            (rf"\b(?P<mon>{_MONTH_NAMES})\s+(?:and|&|to|through|thru|-|or)\s+(?P<mon2>{_MONTH_NAMES})\b", self._month_pair),
            # A month by its name or "feb", or "in may" (a bare "may" or "mar" is a word as often as a month).
            (r"\b(?:in\s+(?P<may>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")|(?P<mon>" + "|".join(m for m in _MONTHS if m not in _WORDS_TOO) + r"))\b(?:\s+(?P<year>\d{4}))?", self._month),
        ]
        for pattern, build in steps:
            text = re.sub(pattern, partial(self._replace, build=build), text)
        return text

    def _replace(self, match: re.Match[str], build: Callable[[re.Match[str]], _Moment | None]) -> str:
        moment = build(match)
        if moment is None:
            return " "
        self.moments.append(moment)
        return f" {_MARK}{len(self.moments) - 1}{_MARK} "

    def _date(self, year: int | None, month: int, day: int, said: str) -> _Moment | None:
        try:
            if year is None:
                date(2000, month, day)  # a leap year: Feb 29 is a date in some years
                return _Moment(month=month, day=day)
            found = date(year, month, day)
        except ValueError:
            self.problems.append(f"{said.strip().capitalize()} is not a date")
            return None
        return _Moment(first=found, last=found)

    def _iso(self, m: re.Match[str]) -> _Moment | None:
        # "2026-02-30" is well formed; what is wrong is that February has no 30th, so say it as "Feb 30".
        month = int(m["m"])
        said = f"{date(2000, month, 1):%b} {int(m['d'])}" if 1 <= month <= 12 else m[0]
        return self._date(int(m["y"]), month, int(m["d"]), said)

    def _month_slash_day(self, m: re.Match[str]) -> _Moment | None:
        return self._date(int(m["y"]) if m["y"] else None, int(m["m"]), int(m["d"]), m[0])

    def _month_day(self, m: re.Match[str]) -> _Moment | None:
        year = int(m["year"]) if m["year"] else None
        return self._date(year, _MONTHS[m["mon"]], int(m["day"]), m[0])

    def _month_span(self, m: re.Match[str]) -> _Moment | None:
        year = int(m["year"]) if m["year"] else None
        month = _MONTHS[m["mon"]]
        last = self._date(year, month, int(m["day2"]), m[0])
        first = self._date(year, month, int(m["day"]), m[0])
        if last is None or first is None:
            return None
        # With a year, `last` is already a dated moment, which resolves to its own days.
        end = self.resolve(last, self.today)
        if end is None:
            return None
        try:
            start = end[0].replace(day=int(m["day"]))
        except ValueError:
            return None
        if start > end[0]:
            self.problems.append(f"{m[0].strip()} ends before it starts")
            return None
        return _Moment(first=start, last=end[0])

    def _ordinal_day(self, m: re.Match[str]) -> _Moment | None:
        month = self.today.replace(day=1)
        for _ in range(3):  # the 31st may be two months back
            try:
                day = month.replace(day=int(m["day"]))
            except ValueError:
                day = None
            if day is not None and day <= self.today:
                return _Moment(first=day, last=day)
            month = (month - timedelta(days=1)).replace(day=1)
        return None

    def _holiday(self, m: re.Match[str]) -> _Moment:
        day = holiday(m["holiday"], self.today)
        return _Moment(first=day, last=day, label=f"on {m['holiday']} ({self.day_label(day)})")

    def _long_weekend(self, m: re.Match[str]) -> _Moment:
        first, last = long_weekend(self.today)
        return _Moment(first=first, last=last, label=f"over the long weekend ({self.day_label(first)} to {self.day_label(last)})")

    def _days_ago(self, days: int, label: str) -> _Moment:
        day = self.today - timedelta(days=days)
        return _Moment(first=day, last=day, label=f"{label} ({self.day_label(day)})")

    def _period(self, m: re.Match[str]) -> _Moment:
        mod = m.groupdict().get("mod")
        current = mod == "this"
        if m["period"] == "week":
            monday = self.today - timedelta(days=self.today.weekday())
            if current:
                return _Moment(first=monday, last=self.today, label=f"this week (since {self.day_label(monday)})")
            if mod == "past":
                return self._window(timedelta(days=7), "in the past week")
            first = monday - timedelta(days=7)
            last = monday - timedelta(days=1)
            return _Moment(first=first, last=last, label=f"last week ({self.day_label(first)} to {self.day_label(last)})")
        if m["period"] == "weekend":
            saturday = self.today - timedelta(days=(self.today.weekday() - 5) % 7)
            if not current and saturday + timedelta(days=1) >= self.today:
                saturday -= timedelta(days=7)
            last = min(saturday + timedelta(days=1), self.today)
            return _Moment(first=saturday, last=last, label=f"the weekend of {self.day_label(saturday)}")
        first_of_month = self.today.replace(day=1)
        if current:
            return _Moment(first=first_of_month, last=self.today, label=f"this month (since {self.day_label(first_of_month)})")
        if mod == "past":
            return self._window(timedelta(days=30), "in the past month")
        last = first_of_month - timedelta(days=1)
        return _Moment(first=last.replace(day=1), last=last, label=f"last month ({last:%B %Y})")

    def _count(self, m: re.Match[str]) -> int:
        raw = m.groupdict().get("count") or "1"
        if raw.isdigit():
            return int(raw)
        words = raw.split()
        return _NUMBER_WORDS[next((w for w in words if w in ("couple", "few")), words[0])]

    def _span(self, count: int, unit: str) -> timedelta:
        if unit.startswith("h"):
            return timedelta(hours=count)
        if unit.startswith("w"):
            return timedelta(weeks=count)
        if unit.startswith("m"):
            return timedelta(days=30 * count)
        return timedelta(days=count)

    def _window(self, span: timedelta, label: str) -> _Moment:
        return _Moment(start=self.now - span, label=label)

    def _rolling(self, m: re.Match[str]) -> _Moment | None:
        count = self._count(m)
        if count < 1 or count > 3650:
            return None
        unit = m["unit"].rstrip("s")
        unit = "hour" if unit.startswith("h") else unit
        noun = unit if count == 1 else unit + "s"
        return self._window(self._span(count, unit), f"in the last {count} {noun}" if count > 1 else f"in the last {noun}")

    def _ago(self, m: re.Match[str]) -> _Moment | None:
        count = self._count(m)
        if count > 3650:
            return None
        day = (self.now - self._span(count, m["unit"])).astimezone(self.tz).date()
        return _Moment(first=day, last=day, label=f"on {self.day_label(day)}")

    def _weekday(self, m: re.Match[str]) -> _Moment:
        wanted = _WEEKDAYS[m["wd"]]
        back = (self.today.weekday() - wanted) % 7
        if m["mod"] in ("last", "past") and back == 0:
            back = 7
        day = self.today - timedelta(days=back)
        if m["mod"] == "this":
            day = self.today - timedelta(days=self.today.weekday()) + timedelta(days=wanted)
        return _Moment(first=day, last=day)

    def _month(self, m: re.Match[str]) -> _Moment | None:
        first, last = self._month_days(m["may"] or m["mon"], int(m["year"]) if m["year"] else None)
        return _Moment(first=first, last=last, label=f"in {first:%B %Y}")

    def _weekday_in_month(self, m: re.Match[str]) -> _Moment | None:
        """The day named ("(the 13th)"); else the one such weekday of the month on which PRs merged. When several
        (or none) did, the whole month: a range cannot hold every Sunday of it, and the note says so."""
        first, last = self._month_days(m["mon"])
        if m["day"]:
            return self._date(first.year, first.month, int(m["day"]), m[0])
        wanted = _WEEKDAYS[m["wd"]]
        days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
        days = [day for day in days if day.weekday() == wanted and day <= self.today]
        if self.merged is not None:
            days = [day for day in days if self.merged(*self.bounds(day, day))]
        if len(days) == 1:
            return _Moment(first=days[0], last=days[0], label=f"on {self.day_label(days[0])}")
        self.problems.append(f"{m['wd'].capitalize()}s in {first:%B} are read as all of {first:%B}")
        return _Moment(first=first, last=last, label=f"in {first:%B %Y}")

    def _month_days(self, name: str, year: int | None = None) -> tuple[date, date]:
        """The first and last day of a month named without a year: the latest one not after today."""
        month = _MONTHS[name]
        if year is None:
            year = self.today.year if month <= self.today.month else self.today.year - 1
        first = date(year, month, 1)
        return first, (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)

    def _month_pair(self, m: re.Match[str]) -> _Moment | None:
        # In either order ("may and april"): from the earlier month's first day to the later one's last.
        (first, _), (_, last) = sorted((self._month_days(m["mon"]), self._month_days(m["mon2"])))
        return _Moment(first=first, last=last, label=f"from {first:%B} to {last:%B %Y}")

    # --- step 2: marks combine into one range
    def combine(self, text: str) -> tuple[str, TimeRange | None]:
        token = lambda name: _TOKEN.format(name=name)
        forms: list[tuple[str, Callable[[re.Match[str]], TimeRange | None]]] = [
            (rf"\b(?:between|from)\s+{token('a')}\s*(?:and|to|through|thru|until|till|-|–)\s*{token('b')}", self._between),
            (rf"{token('a')}\s*(?:-|–|—|\.\.|to|through|thru|until|till)\s*{token('b')}", self._between),
            (rf"\b(?:the\s+)?week\s+(?:of|starting)\s+{token('a')}", self._week_of),
            # "work from march" is march; "from march on" is since.
            (rf"\b(?:since|after|starting)\s+{token('a')}", self._since),
            (rf"\bfrom\s+{token('a')}(?=\s*(?:on|onwards?|forwards?)\b)", self._since),
            (rf"\bfrom\s+{token('a')}", self._single),
            # "up to Feb 13" is a bound; "what has X been up to this week" is not.
            (rf"\b(?:before|until|till|(?<!\bbeen\s)(?<!\bis\s)(?<!'s\s)up\s+to|by)\s+{token('a')}", self._before),
            (rf"{token('a')}", self._single),
        ]
        found: TimeRange | None = None
        for pattern, build in forms:
            def replace_one(m: re.Match[str], build=build) -> str:
                nonlocal found
                span = build(m)
                if found is None:
                    found = span
                return " "
            text = re.sub(pattern, replace_one, text)
        return text, found

    def _moment(self, m: re.Match[str], name: str) -> _Moment:
        return self.moments[int(m[name])]

    def _days(self, moment: _Moment, anchor: date) -> tuple[date, date] | None:
        days = self.resolve(moment, anchor)
        if days is None and moment.month is not None and moment.day is not None:
            self.problems.append(f"no {date(2000, moment.month, moment.day):%b} {moment.day} yet")
        return days

    def _between(self, m: re.Match[str]) -> TimeRange | None:
        first, last = self._moment(m, "a"), self._moment(m, "b")
        if first.start is not None or last.start is not None:
            return self._single_moment(first)
        end_days = self._days(last, self.today)
        if end_days is None:
            return None
        start_days = self._days(first, end_days[1])
        if start_days is None:
            return None
        label = f"from {self.day_label(start_days[0])} to {self.day_label(end_days[1])}"
        return TimeRange(*self.bounds(start_days[0], end_days[1]), label)

    def _week_of(self, m: re.Match[str]) -> TimeRange | None:
        """Monday to Sunday of the week that holds the day."""
        days = self._days(self._moment(m, "a"), self.today)
        if days is None:
            return None
        monday = days[0] - timedelta(days=days[0].weekday())
        sunday = min(monday + timedelta(days=6), self.today)
        return TimeRange(*self.bounds(monday, sunday), f"the week of {self.day_label(monday)}")

    def _since(self, m: re.Match[str]) -> TimeRange | None:
        moment = self._moment(m, "a")
        verb = m[0].split()[0]
        if moment.start is not None:
            return TimeRange(moment.start, self.now, moment.label)
        days = self._days(moment, self.today)
        if days is None:
            return None
        # "anything to change after yesterday?" is after yesterday's merges: yesterday is in it.
        if verb == "after" and not moment.label.startswith("yesterday"):
            return TimeRange(self.bounds(*days)[1], self.now, f"after {self.day_label(days[1])}")
        return TimeRange(self.bounds(*days)[0], self.now, f"since {self.day_label(days[0])}")

    def _before(self, m: re.Match[str]) -> TimeRange | None:
        moment = self._moment(m, "a")
        if moment.start is not None:
            return TimeRange(None, moment.start, f"before {moment.label}")
        days = self._days(moment, self.today)
        if days is None:
            return None
        if m[0].startswith("before"):
            return TimeRange(None, self.bounds(*days)[0], f"before {self.day_label(days[0])}")
        return TimeRange(None, self.bounds(*days)[1], f"until {self.day_label(days[1])}")

    def _single(self, m: re.Match[str]) -> TimeRange | None:
        return self._single_moment(self._moment(m, "a"))

    def _single_moment(self, moment: _Moment) -> TimeRange | None:
        if moment.start is not None:
            return TimeRange(moment.start, self.now, moment.label)
        days = self._days(moment, self.today)
        if days is None:
            return None
        if moment.label:
            label = moment.label
        elif days[0] == days[1]:
            label = f"on {self.day_label(days[0])}"
        else:
            label = f"from {self.day_label(days[0])} to {self.day_label(days[1])}"
        return TimeRange(*self.bounds(*days), label)


# ---------------------------------------------------------------- time zones

# Zone words people put beside a date; each reads the date's day in that zone. CST (US or China) is left unread.
_ZONES = {
    "utc": "UTC", "gmt": "UTC", "pst": "America/Los_Angeles", "pdt": "America/Los_Angeles",
    "pacific": "America/Los_Angeles", "est": "America/New_York", "edt": "America/New_York",
    "eastern": "America/New_York", "cet": "Europe/Berlin", "cest": "Europe/Berlin", "ist": "Asia/Kolkata",
    "jst": "Asia/Tokyo", "kst": "Asia/Seoul",
}
_ZONE = LazyPattern(r"\b(?:in\s+)?(" + "|".join(_ZONES) + r")\b(?:\s+time)?|\((pt|et)\)|(?<=[ap]m\s)(pt|et)\b")
# "PT" and "ET" are words too ("pt" in PyTorch paths); only "(PT)" or "9am PT" is read as a zone.
_SHORT_ZONES = {"pt": "America/Los_Angeles", "et": "America/New_York"}


def _take_zone(text: str, tz: ZoneInfo) -> tuple[str, ZoneInfo]:
    """The time zone the question names for its dates (its word removed), else the configured one."""
    found = _ZONE.search(text)
    if found is None:
        return text, tz
    zone = _ZONES[found[1]] if found[1] else _SHORT_ZONES[found[2] or found[3]]
    return text[: found.start()] + " " + text[found.end() :], ZoneInfo(zone)


# ---------------------------------------------------------------- parts of a day

# Hours [from, to) of a local day; "morning" is everything before noon, as people ask about overnight merges.
_PARTS = {"morning": (0, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 24), "small hours": (0, 6)}
_PART = LazyPattern(
    r"\b(?:(?:in|on|during)\s+)?(?:the\s+)?(?P<part>morning|afternoon|evening|night|(?:small|wee|early)\s+hours)\b(?:\s+of\b)?"
)
# "3pm", "3:30 pm", "15:30" (a 24-hour clock), "noon"; after a part of the day, a bare "6" ("evening, after 6").
_AT = (
    r"(?:(?P<hour{n}>\d{{1,2}})(?::(?P<minute{n}>[0-5]\d))?\s*(?P<ampm{n}>[ap]\.?m\b\.?)"
    r"|(?P<hour24{n}>[01]?\d|2[0-3]):(?P<minute24{n}>[0-5]\d)(?!\s*[ap]\.?m)"
    r"|(?P<named{n}>noon|midday|midnight)"
    r"|(?P<bare{n}>1[0-2]|0?[1-9])(?![\d:]))"
)
_CLOCK = LazyPattern(r"\b(?P<rel>before|after|since|until|till)\s+" + _AT.format(n="") + r"\b")
# "between 6 and 8am", "noon-6pm", "11:30 to 1:30".
_CLOCK_RANGE = LazyPattern(
    r"(?:\b(?:between|btwn|from)\s+)?(?<![\w/:.-])" + _AT.format(n="") + r"(?:\s*[-\u2013]\s*|\s+(?:and|to|until|till)\s+)"
    + _AT.format(n="2") + r"\b"
)
# "in the 8pm hour": that hour, as a range.
_HOUR_OF = LazyPattern(r"\b(?:in|during)\s+the\s+(?P<hour>1[0-2]|0?[1-9])\s*(?P<ampm>[ap]\.?m\.?)\s+hour\b")


def _within_day(text: str, found: TimeRange | None, tz: ZoneInfo) -> tuple[str, TimeRange | None]:
    """Narrow a one-day range to the part of the day the text names ("the evening of", "before 3am")."""
    if found is None or found.start is None or found.end is None:
        return text, found
    day = found.start.astimezone(tz).date()
    if (found.end - timedelta(microseconds=1)).astimezone(tz).date() != day:
        return text, found  # a range of days or a rolling window: parts of a day do not apply
    start, end, label = found.start, found.end, found.label
    part = _PART.search(text)
    # A bare hour in the afternoon or evening is pm; in the morning or the small hours, am.
    hours = _PARTS.get(part["part"], _PARTS["small hours"]) if part else None  # "wee hours", "early hours"
    later = hours is not None and hours[0] >= 12
    if part and hours:
        first, last = hours
        start, end = _at_hour(day, first, tz), _at_hour(day, last, tz)
        label = f"in the {part['part']} of {day:%a %b} {day.day}"
        text = text[: part.start()] + " " + text[part.end() :]
    text = _HOUR_OF.sub(_as_clock_range, text)
    between = _CLOCK_RANGE.search(text)
    if between and (_read_clock(between, part) or between["ampm2"]) and _read_clock(between, part, "2"):
        # "between 6 and 8am": a bare first hour takes the second's am or pm, unless that puts it after the
        # second ("between 10 and 2pm" is 10am to 2pm).
        first_later = later
        if between["bare"] and between["ampm2"]:
            first_later = between["ampm2"].startswith("p") and int(between["bare"]) % 12 <= int(between["hour2"]) % 12
        (hour, minute), (hour2, minute2) = _clock_time(between, first_later), _clock_time(between, later, "2")
        if (hour2, minute2) < (hour, minute) and hour2 < 12 and not between["ampm2"]:
            hour2 += 12  # "11:30 to 1:30" ends after noon
        narrowed = (max(start, _at_hour(day, hour, tz) + timedelta(minutes=minute)),
                    min(end, _at_hour(day, hour2, tz) + timedelta(minutes=minute2)))
        start, end, label = _narrowed(start, end, label, narrowed, between[0])
        text = text[: between.start()] + " " + text[between.end() :]
    clock = _CLOCK.search(text)
    if clock and _read_clock(clock, part):
        hour, minute = _clock_time(clock, later)
        moment = _at_hour(day, hour, tz) + timedelta(minutes=minute)
        before = clock["rel"] in ("before", "until", "till")
        narrowed = (start, min(end, moment)) if before else (max(start, moment), end)
        start, end, label = _narrowed(start, end, label, narrowed, f"{clock['rel']} {clock[0].split(None, 1)[1]}")
        text = text[: clock.start()] + " " + text[clock.end() :]
    return text, TimeRange(start, end, label)


def _as_clock_range(found: re.Match[str]) -> str:
    hour, ampm = int(found["hour"]), found["ampm"][0]
    if hour == 11:
        return " after 11pm " if ampm == "p" else " between 11am and noon "  # the hour ends at midnight or noon
    return f" between {hour}{ampm}m and {hour % 12 + 1}{ampm}m "


def _narrowed(
    start: datetime, end: datetime, label: str, narrowed: tuple[datetime, datetime], said: str
) -> tuple[datetime, datetime, str]:
    """The range narrowed to a clock time, unless that leaves nothing ("the evening, before 12"): then as it was."""
    if narrowed[0] >= narrowed[1]:
        return start, end, label
    return narrowed[0], narrowed[1], f"{label}, {said}"


def _read_clock(match: re.Match[str], part: re.Match[str] | None, n: str = "") -> bool:
    """Whether the clock time is one: a bare number ("after 6") is, only once a part of the day was named."""
    return not match[f"bare{n}"] or part is not None


def _clock_time(match: re.Match[str], later: bool, n: str = "") -> tuple[int, int]:
    if match[f"named{n}"]:
        return (0, 0) if match[f"named{n}"] == "midnight" else (12, 0)
    if match[f"hour24{n}"]:
        hour = int(match[f"hour24{n}"])
        # "the afternoon, after 2:30": an hour below 12 in the afternoon or evening is pm.
        return hour + (12 if later and hour < 12 else 0), int(match[f"minute24{n}"])
    if match[f"bare{n}"]:
        return int(match[f"bare{n}"]) % 12 + (12 if later else 0), 0
    hour = int(match[f"hour{n}"]) % 12 + (12 if match[f"ampm{n}"].startswith("p") else 0)
    return min(hour, 23), int(match[f"minute{n}"] or 0)


def _at_hour(day: date, hour: int, tz: ZoneInfo) -> datetime:
    """The start of `hour` on a local day; 24 is the start of the next day (23 or 25 hours later across DST)."""
    if hour >= 24:
        return day_bounds(day, tz)[1]
    return datetime.combine(day, datetime.min.time(), tzinfo=tz).replace(hour=hour).astimezone(UTC)



def read_time(
    text: str, tz: ZoneInfo, now: datetime, merged: MergedBetween | None = None
) -> tuple[TimeRange | None, str, list[str]]:
    """The time `text` names, read in the zone it names or `tz` ("feb 24", "last friday", "feb 9-13 UTC",
    "mar 13 before 9am"); the rest of the text, lowercased; and what made a date unreadable ("Feb 30 is not a date").
    `merged` says whether PRs merged in a range, for "the sunday in feb"."""
    rest, zone = _take_zone(text.replace(_MARK, " ").lower(), tz)
    times = _TimeParser(zone, now, merged)
    rest, found = times.combine(times.mark(rest))
    rest, found = _within_day(rest, found, zone)
    if found and zone != tz:
        found = replace(found, label=f"{found.label} ({zone.key})")
    return found, " ".join(rest.replace(_MARK, " ").split()), times.problems


def read_day(text: str, tz: ZoneInfo, now: datetime) -> date:
    """The one local day `text` names, read as commands read days ("2026-02-13", "feb 13", "yesterday",
    "last friday"); ValueError saying what is wrong in one line ("Feb 30 is not a date")."""
    found, rest, problems = read_time(text, tz, now)
    if problems:
        raise ValueError(problems[0])
    if found is None or rest or found.start is None:
        raise ValueError(f"{text.strip()!r} is not a day: give one like 2026-02-13, feb 13, yesterday or last friday")
    first = found.start.astimezone(tz).date()
    last = (found.end - timedelta(microseconds=1)).astimezone(tz).date() if found.end else now.astimezone(tz).date()
    if first != last:
        raise ValueError(f"{text.strip()!r} is more than one day ({first} to {last}): give one day")
    return first
