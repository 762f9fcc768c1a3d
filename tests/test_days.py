from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from conftest import LA
from pr_factory import make_pr

from store.days import day_bounds, local_day, zone_label, zone_names
from store.model import PullRequest
from store.report.day import load_report
from store.tables.prs import save_pr

UTC = UTC


def _pr(number: int, merged_at: datetime) -> PullRequest:
    return make_pr(number, f"PR {number}", merged_at=merged_at, files=[])


def test_day_lengths_across_dst():
    for day, hours in ((date(2026, 3, 8), 23), (date(2026, 11, 1), 25), (date(2026, 2, 9), 24)):
        start, end = day_bounds(day, LA)
        assert end - start == timedelta(hours=hours)


def test_last_and_first_second_of_a_day(db):
    cases = [
        # (utc instant, local day it belongs to)
        (datetime(2026, 2, 10, 7, 59, 59, tzinfo=UTC), date(2026, 2, 9)),   # 23:59:59 PST
        (datetime(2026, 2, 10, 8, 0, 5, tzinfo=UTC), date(2026, 2, 10)),    # 00:00:05 PST
        (datetime(2026, 3, 8, 7, 59, 59, tzinfo=UTC), date(2026, 3, 7)),    # before spring forward
        (datetime(2026, 3, 8, 8, 0, 5, tzinfo=UTC), date(2026, 3, 8)),
        (datetime(2026, 3, 9, 6, 59, 59, tzinfo=UTC), date(2026, 3, 8)),    # 23:59:59 PDT
        (datetime(2026, 3, 9, 7, 0, 5, tzinfo=UTC), date(2026, 3, 9)),
        (datetime(2026, 11, 1, 9, 30, tzinfo=UTC), date(2026, 11, 1)),      # 01:30 PST, second pass
        (datetime(2026, 11, 2, 7, 59, 59, tzinfo=UTC), date(2026, 11, 1)),  # 23:59:59 PST after fall back
        (datetime(2026, 11, 2, 8, 0, 5, tzinfo=UTC), date(2026, 11, 2)),
    ]
    for number, (moment, expected) in enumerate(cases, start=1):
        assert local_day(moment, LA) == expected
        save_pr(db, _pr(number, moment))
    for number, (moment, expected) in enumerate(cases, start=1):
        numbers = [pr.number for pr in load_report(db, "acme/engine", expected, LA).prs]
        assert number in numbers, (moment, expected, numbers)
        for other in (expected - timedelta(days=1), expected + timedelta(days=1)):
            assert number not in [pr.number for pr in load_report(db, "acme/engine", other, LA).prs]


def test_zone_labels_follow_the_zone_and_its_season():
    berlin, kolkata, istanbul = ZoneInfo("Europe/Berlin"), ZoneInfo("Asia/Kolkata"), ZoneInfo("Europe/Istanbul")
    assert zone_label(berlin, date(2026, 1, 15)) == "CET"
    assert zone_label(berlin, date(2026, 7, 15)) == "CEST"
    assert zone_label(berlin, date(2026, 3, 20), date(2026, 4, 3)) == "CET/CEST"  # across the switch
    assert zone_label(kolkata, date(2026, 6, 1)) == "IST"
    assert zone_label(istanbul, date(2026, 6, 1)) == "UTC+03"  # a zone with no letters to its name
    assert zone_names(LA, 2026) == {"PST", "PDT"}
