"""Cadences: when daily, weekdays and weekly reports come due, and which days each covers, across DST switches."""
from __future__ import annotations

from datetime import date, datetime, time

import pytest
from conftest import LA

from store.subscription.cadence import DAILY, LIVE, WEEKDAYS, WEEKLY, Cadence, read_weekday

LONG_AGO = datetime(2026, 1, 1, tzinfo=LA)
MON, TUE, WED, THU, FRI, SAT, SUN = range(7)


def due(cadence: Cadence, moment: str, since: datetime = LONG_AGO) -> date | None:
    return cadence.due(datetime.fromisoformat(moment), LA, since)


def test_weekdays_come_monday_to_friday_and_monday_covers_the_weekend():
    weekdays = Cadence(WEEKDAYS, time(9, 0))
    assert due(weekdays, "2026-03-06T09:00:00-08:00") == date(2026, 3, 5)  # Friday: Thursday
    assert due(weekdays, "2026-03-07T12:00:00-08:00") is None  # Saturday
    assert due(weekdays, "2026-03-08T12:00:00-07:00") is None  # Sunday, the spring switch
    assert due(weekdays, "2026-03-09T08:59:00-07:00") is None
    assert due(weekdays, "2026-03-09T09:00:00-07:00") == date(2026, 3, 8)  # Monday: through Sunday
    assert weekdays.first_day(date(2026, 3, 8), covered=date(2026, 3, 5)) == date(2026, 3, 6)  # Friday to Sunday
    assert weekdays.first_day(date(2026, 3, 8)) == date(2026, 3, 6)  # a new subscription: the same
    assert weekdays.first_day(date(2026, 3, 9), covered=date(2026, 3, 8)) == date(2026, 3, 9)  # Tuesday: Monday


def test_a_monday_after_a_long_weekend_covers_every_day_since_the_last_report():
    weekdays = Cadence(WEEKDAYS, time(9, 0))
    # Thursday's report covered Wednesday; nothing went out on the Friday of the long weekend.
    assert weekdays.first_day(date(2026, 3, 8), covered=date(2026, 3, 4)) == date(2026, 3, 5)
    # After a week and more without a report, a Monday covers the weekend as usual, not the whole gap.
    assert weekdays.first_day(date(2026, 3, 8), covered=date(2026, 2, 20)) == date(2026, 3, 6)
    # A Tuesday after a Monday holiday on which the report did go out covers Monday alone.
    assert weekdays.first_day(date(2026, 5, 25), covered=date(2026, 5, 24)) == date(2026, 5, 25)


def test_a_report_asked_for_by_day_is_the_one_that_covers_it():
    weekdays = Cadence(WEEKDAYS)
    assert [weekdays.report_for(date(2026, 3, day)) for day in (5, 6, 7, 8, 9)] == [
        date(2026, 3, 5), date(2026, 3, 8), date(2026, 3, 8), date(2026, 3, 8), date(2026, 3, 9)]
    assert Cadence(WEEKLY).report_for(date(2026, 3, 4)) == date(2026, 3, 4)  # the week that ends on it
    assert Cadence(WEEKLY).first_day(date(2026, 3, 8)) == date(2026, 3, 2)
    assert Cadence(DAILY).first_day(date(2026, 3, 8), covered=date(2026, 3, 1)) == date(2026, 3, 8)


def test_weekly_comes_on_its_day_and_a_week_missed_is_sent_late_once():
    monday = Cadence(WEEKLY, time(9, 0), MON)
    assert due(monday, "2026-03-09T09:00:00-07:00") == date(2026, 3, 8)  # the week Mar 2-8, across the switch
    assert due(monday, "2026-03-11T15:00:00-07:00") == date(2026, 3, 8)  # down on Monday: still that week
    assert due(monday, "2026-03-16T08:59:00-07:00") == date(2026, 3, 8)  # until the next week's time
    assert due(monday, "2026-03-16T09:00:00-07:00") == date(2026, 3, 15)
    made_tuesday = datetime(2026, 3, 10, 12, 0, tzinfo=LA)
    assert due(monday, "2026-03-12T09:00:00-07:00", since=made_tuesday) is None  # the first comes next Monday
    assert due(monday, "2026-03-16T09:00:00-07:00", since=made_tuesday) == date(2026, 3, 15)
    friday = Cadence(WEEKLY, time(17, 0), FRI)
    assert due(friday, "2026-03-13T17:00:00-07:00") == date(2026, 3, 12)  # Friday to Thursday


def test_times_skipped_or_doubled_by_dst_come_once_at_the_first_moment():
    sunday_night = Cadence(WEEKLY, time(2, 30), SUN)
    assert due(sunday_night, "2026-03-08T01:59:00-08:00") == date(2026, 2, 28)  # the week before
    assert due(sunday_night, "2026-03-08T03:00:00-07:00") == date(2026, 3, 7)  # 02:30 never happened
    weekdays = Cadence(WEEKDAYS, time(1, 30))
    assert due(weekdays, "2026-11-02T01:30:00-08:00") == date(2026, 11, 1)  # Monday after the autumn switch
    doubled = Cadence(WEEKLY, time(1, 30), SUN)
    assert due(doubled, "2026-11-01T01:29:00-07:00") == date(2026, 10, 24)
    assert due(doubled, "2026-11-01T01:30:00-07:00") == date(2026, 10, 31)  # the first 01:30, PDT


def test_live_never_comes_due_and_days_read_as_typed():
    assert due(Cadence(LIVE), "2026-03-09T09:00:00-07:00") is None
    assert [read_weekday(word) for word in ("monday", "Mon", "fridays", "thu", "tues", "s", "noon")] == [
        MON, MON, FRI, THU, TUE, None, None]
    assert Cadence(WEEKLY, time(7, 5), FRI).text == "weekly on friday at 07:05"


@pytest.mark.parametrize("cadence", [Cadence(DAILY), Cadence(WEEKDAYS), Cadence(WEEKLY)])
def test_a_subscription_made_after_the_time_starts_at_the_next_one(cadence):
    made = datetime(2026, 3, 9, 10, 0, tzinfo=LA)  # a Monday, after 09:00
    assert due(cadence, "2026-03-09T11:00:00-07:00", since=made) is None
