"""Days people name instead of dates: "labor day", "thanksgiving", "over the long weekend".

The reports' days are Pacific, and the teams who read them mostly keep US holidays, so these are the US federal
holidays, the eves people say, and a few named days. A holiday asked about is its last one on or before today.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

# A holiday by each name people say it: on a fixed day of a month, or the nth weekday of one (-1: the last).
_FIXED: dict[str, tuple[int, int]] = {
    "new year's day": (1, 1), "new years day": (1, 1), "new year's": (1, 1), "new years": (1, 1),
    "juneteenth": (6, 19), "independence day": (7, 4), "veterans day": (11, 11), "christmas eve": (12, 24),
    "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25), "new year's eve": (12, 31), "new years eve": (12, 31),
    # Not holidays, but days people name all the same.
    "valentine's day": (2, 14), "st patrick's day": (3, 17), "st. patrick's day": (3, 17), "saint patrick's day": (3, 17),
    "halloween": (10, 31),
}
_MONDAY, _THURSDAY = 0, 3
_NTH_WEEKDAY: dict[str, tuple[int, int, int]] = {
    "mlk day": (1, _MONDAY, 3), "martin luther king day": (1, _MONDAY, 3), "presidents day": (2, _MONDAY, 3),
    "presidents' day": (2, _MONDAY, 3), "memorial day": (5, _MONDAY, -1), "labor day": (9, _MONDAY, 1),
    "columbus day": (10, _MONDAY, 2), "indigenous peoples day": (10, _MONDAY, 2), "thanksgiving": (11, _THURSDAY, 4),
    "thanksgiving day": (11, _THURSDAY, 4),
}
# Longest first, so "christmas eve" is not read as "christmas".
HOLIDAY_NAMES = sorted([*_FIXED, *_NTH_WEEKDAY], key=len, reverse=True)


def holiday(name: str, today: date) -> date:
    """The last day named `name` (one of HOLIDAY_NAMES, lowercase) on or before `today`."""
    on: Callable[[int], date] = (lambda year: date(year, *_FIXED[name])) if name in _FIXED else (
        lambda year: _nth_weekday(year, *_NTH_WEEKDAY[name])
    )
    day = on(today.year)
    return day if day <= today else on(today.year - 1)


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date:
    if nth > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    last = (date(year, month % 12 + 1, 1) if month < 12 else date(year + 1, 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def long_weekend(today: date) -> tuple[date, date]:
    """The last long weekend: Saturday to Monday (a Monday holiday), before today, no later than yesterday."""
    saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
    return saturday, min(saturday + timedelta(days=2), today - timedelta(days=1))
