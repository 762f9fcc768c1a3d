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


def zone_label(tz: ZoneInfo, first: date, last: date | None = None) -> str:
    """How reports name the zone of local days first..last: its abbreviation on each ("PST", "CEST"),
    both across a switch ("CET/CEST")."""
    return "/".join(dict.fromkeys(_abbreviation(tz, day) for day in (first, last or first)))


def zone_names(tz: ZoneInfo, year: int) -> set[str]:
    """Every name the zone goes by in `year`: standard and daylight time."""
    return {_abbreviation(tz, date(year, month, 1)) for month in range(1, 13)}


def _abbreviation(tz: ZoneInfo, day: date) -> str:
    # At noon, past any switch (they happen at night); a zone known only by its offset ("+03") says UTC+03.
    name = datetime.combine(day, time(12), tzinfo=tz).tzname() or tz.key
    return name if name[:1].isalpha() else f"UTC{name}"
