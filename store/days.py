"""Calendar days in the configured timezone, and the UTC text form timestamps are stored in."""
from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def to_utc_text(moment: datetime) -> str:
    """The stored form: "YYYY-MM-DDTHH:MM:SSZ", in UTC."""
    # isoformat cut at the seconds: about half the time strftime takes, and every saved PR costs one.
    return moment.astimezone(UTC).isoformat()[:19] + "Z"


def now_text() -> str:
    """The current instant in the stored UTC text form."""
    return to_utc_text(datetime.now(UTC))


def from_utc_text(text: str) -> datetime:
    # The stored form is ISO 8601, which fromisoformat reads without strptime's import and locale regexes.
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def day_bounds(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants [start, end) of a local calendar day; 23 or 25 hours long across DST."""
    start = datetime.combine(day, time(0), tzinfo=tz)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz)
    return start.astimezone(UTC), end.astimezone(UTC)


def range_bounds(first: date, last: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The UTC instants covering local days first..last inclusive."""
    return day_bounds(first, tz)[0], day_bounds(last, tz)[1]


def local_day(moment: datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date()


def standard_abbreviation(tz: ZoneInfo, year: int) -> str:
    """The zone's standard-time name ("PST" for Los Angeles all year), as the reports label days."""
    for month in (1, 7):
        probe = datetime(year, month, 1, 12, tzinfo=tz)
        if not probe.dst():
            return probe.tzname() or str(tz)
    return datetime(year, 1, 1, 12, tzinfo=tz).tzname() or str(tz)
