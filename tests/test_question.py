from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from conftest import LA
from freezegun import freeze_time
from pr_factory import REPO, make_pr

from store.days import day_bounds
from store.retrieval.finding.lookup import StoreLookup
from store.retrieval.reading.clean import plain_question
from store.retrieval.reading.form import read_form
from store.retrieval.reading.parse import parse_question
from store.retrieval.reading.query import Doubt, Intent, Order, Person, Role, Side, Tally
from store.retrieval.reading.synonyms import synonyms_of
from store.retrieval.reading.when import read_time
from store.tables.prs import save_pr

# A Saturday afternoon in Los Angeles.
NOW = datetime(2026, 2, 14, 15, 30, tzinfo=LA)


def _days(text: str, now: datetime = NOW, tz: ZoneInfo = LA) -> tuple[date | None, date | None]:
    """The local days a question's time covers: first and last (inclusive)."""
    time = parse_question(text, tz, now).time
    assert time is not None, text
    first = time.start.astimezone(tz).date() if time.start else None
    last = (time.end - timedelta(seconds=1)).astimezone(tz).date() if time.end else None
    return first, last


@pytest.mark.parametrize(
    "text, first, last",
    [
        ("what merged today?", "2026-02-14", "2026-02-14"),
        ("what merged yesterday?", "2026-02-13", "2026-02-13"),
        ("the day before yesterday", "2026-02-12", "2026-02-12"),
        ("what changed this week?", "2026-02-09", "2026-02-14"),
        ("anything last week", "2026-02-02", "2026-02-08"),
        ("on Feb 13", "2026-02-13", "2026-02-13"),
        ("February 13th", "2026-02-13", "2026-02-13"),
        ("13 Feb", "2026-02-13", "2026-02-13"),
        ("the 13th of February", "2026-02-13", "2026-02-13"),
        ("2026-02-13", "2026-02-13", "2026-02-13"),
        ("Feb 13, 2025", "2025-02-13", "2025-02-13"),
        ("between Feb 9 and Feb 13", "2026-02-09", "2026-02-13"),
        ("from Feb 9 to 13", "2026-02-09", "2026-02-13"),
        ("Feb 9-13", "2026-02-09", "2026-02-13"),
        ("2026-02-09..2026-02-11", "2026-02-09", "2026-02-11"),
        ("on Tuesday", "2026-02-10", "2026-02-10"),
        ("last Saturday", "2026-02-07", "2026-02-07"),
        ("this month", "2026-02-01", "2026-02-14"),
        ("last month", "2026-01-01", "2026-01-31"),
        ("in January", "2026-01-01", "2026-01-31"),
        # "from" alone names the time itself: "rocm work from january" is January's.
        ("rocm work from january", "2026-01-01", "2026-01-31"),
        ("anything from tuesday?", "2026-02-10", "2026-02-10"),
        ("3 days ago", "2026-02-11", "2026-02-11"),
        # Without a year: the most recent one that is not in the future.
        ("on Feb 20", "2025-02-20", "2025-02-20"),
        ("Dec 30", "2025-12-30", "2025-12-30"),
    ],
)
def test_days(text, first, last):
    assert _days(text) == (date.fromisoformat(first), date.fromisoformat(last))


@pytest.mark.parametrize(
    "text, first",
    [("since Monday", "2026-02-09"), ("since Feb 10", "2026-02-10"), ("since yesterday", "2026-02-13"), ("after Feb 12", "2026-02-13"),
     ("from january on", "2026-01-01"), ("from feb 3 onwards", "2026-02-03")],
)
def test_open_ended(text, first):
    # "since" runs until now, so a store ahead of the clock (a test, a bad import) adds nothing.
    assert _days(text) == (date.fromisoformat(first), NOW.date())


def test_before_and_until():
    assert _days("before Feb 13") == (None, date(2026, 2, 12))
    assert _days("until Feb 13") == (None, date(2026, 2, 13))


def test_rolling_windows_are_exact():
    for text, hours in (("in the last 3 days", 72), ("past 24 hours", 24), ("last couple of days", 48), ("the past week", 168)):
        time = parse_question(text, LA, NOW).time
        assert (time.start, time.end) == (NOW - timedelta(hours=hours), NOW), text


def test_range_across_new_year():
    assert _days("Dec 30 to Jan 2", now=datetime(2026, 1, 3, 9, tzinfo=LA)) == (date(2025, 12, 30), date(2026, 1, 2))


def test_days_follow_the_configured_zone():
    tokyo = ZoneInfo("Asia/Tokyo")
    time = parse_question("yesterday", tokyo, NOW).time  # already Sunday Feb 15 in Tokyo
    assert (time.start, time.end) == day_bounds(date(2026, 2, 14), tokyo)
    # A DST day in Los Angeles is 23 hours long.
    spring = parse_question("2026-03-08", LA, NOW).time
    assert spring.end - spring.start == timedelta(hours=23)


@freeze_time("2026-02-14 23:30:00")  # UTC: still the 14th in Los Angeles
def test_now_defaults_to_the_clock():
    assert parse_question("today", LA).time.start == day_bounds(date(2026, 2, 14), LA)[0]


def test_labels_name_the_days():
    assert parse_question("on Feb 13", LA, NOW).time.label == "on Fri Feb 13"
    assert parse_question("yesterday", LA, NOW).time.label == "yesterday (Fri Feb 13)"
    assert parse_question("Feb 20", LA, NOW).time.label == "on Thu Feb 20, 2025"
    assert parse_question("between Feb 9 and Feb 13", LA, NOW).time.label == "from Mon Feb 9 to Fri Feb 13"


def test_impossible_dates_are_reported_not_guessed():
    question = parse_question("what merged on Feb 30?", LA, NOW)
    assert question.time is None and question.problems == ("Feb 30 is not a date",)
    assert question.concepts == ()


def test_pr_references():
    text = "why was #101 reverted, and PR 102, pr #103, https://github.com/acme/engine/pull/104/files?"
    assert parse_question(text, LA, NOW).numbers == (104, 101, 102, 103)
    # Slack wraps links and mentions in angle brackets.
    slack = "<@U0123ABC> what about <https://github.com/acme/engine/pull/105|#105>?"
    assert parse_question(slack, LA, NOW).numbers == (105,)
    # Dates and counts are not PR numbers; a bare number is one only if the store has that PR.
    assert parse_question("2026-02-13 last 3 days 2048", LA, NOW).numbers == ()
    # A number longer than any PR number never reaches SQLite as one.
    assert parse_question("see https://github.com/acme/engine/pull/99999999999999999999999", LA, NOW).numbers == ()


@pytest.fixture
def lookup(db):
    save_pr(db, make_pr(2048, "[Core] Something", author="Grace-H", merged_by="linus-t"))
    save_pr(db, make_pr(2049, "[Core] Other", author="ada-l", merged_by="vllm-bot"))
    return StoreLookup(db, REPO)


def test_a_person_before_wrote_or_merged_is_the_author_or_the_merger(lookup):
    assert parse_question("anything ada-l wrote?", LA, NOW, lookup).people == (Person("ada-l", Role.AUTHOR),)
    assert parse_question("prs linus-t merged", LA, NOW, lookup).people == (Person("linus-t", Role.MERGER),)


def test_a_first_name_is_the_one_login_it_starts_and_people_left_out_two_ways(lookup):
    assert parse_question("what did linus merge?", LA, NOW, lookup).people == (Person("linus-t", Role.ANY, merges=True),)
    assert parse_question("prs not merged by linus-t or the bot", LA, NOW, lookup).excluded == ("linus-t", "bots")
    assert parse_question("mar 13 merges that vllm-bot didn't merge", LA, NOW, lookup).excluded == ("vllm-bot",)
    assert parse_question("rocm prs, excluding the ci/build ones", LA, NOW).excluded_areas == (("ci",),)
    assert _local_span(parse_question("in the small hours of mar 13, before 3", LA, MAR_14)) == ("Mar 13 00:00", "Mar 13 03:00")


def test_people(lookup):
    ask = lambda text: list(parse_question(text, LA, NOW, lookup).people)
    assert ask("what did grace-h merge yesterday?") == [Person("Grace-H", Role.ANY, merges=True)]
    assert ask("PRs by @ada-l") == [Person("ada-l", Role.ANY)]
    assert ask("anything merged by linus-t") == [Person("linus-t", Role.MERGER)]
    assert ask("authored by GRACE-H") == [Person("Grace-H", Role.AUTHOR)]
    assert ask("what did vllm-bot merge") == [Person("vllm-bot", Role.ANY, merges=True)]
    # An @-mention is a person even if the store has not seen them; "by <word>" is not.
    assert ask("@someone-new") == [Person("someone-new", Role.ANY)]
    assert ask("crashes caused by preemption") == []
    assert parse_question("what about 2048", LA, NOW, lookup).numbers == (2048,)


def test_areas_by_name_and_alias():
    for text, area in (
        ("anything on ROCm?", "rocm"),
        ("AMD changes", "rocm"),
        ("spec decode fixes", "speculative-decoding"),
        ("what happened in MRV2", "model-runner-v2"),
        ("what changed in the scheduler this week?", "core"),
        ("OpenAI API changes", "frontend"),
    ):
        assert parse_question(text, LA, NOW).areas == (area,), text
    question = parse_question("AMD changes", LA, NOW)
    assert {"amd", "rocm", "mi300"} <= set(question.area_phrases)
    assert question.area_same == ("amd", "rocm")


def test_free_text_drops_question_words_and_expands_synonyms():
    question = parse_question("Why was the detokenizer optimization merged?", LA, NOW)
    assert [c.said for c in question.concepts] == ["detokenizer", "optimization"]
    server = parse_question("anything about the OpenAI-compatible server?", LA, NOW).concepts
    assert [c.said for c in server] == ["openai-compatible server"]
    assert {"entrypoints", "api server"} <= set(server[0].phrases.same)
    assert "chat completions" in server[0].phrases.all and "chat completions" not in server[0].phrases.same
    # A narrower word finds the wider idea, not its siblings; only its own words mean the same.
    int4 = synonyms_of(("int4",))
    assert int4.same == ("int4",) and "quantization" in int4.all and "fp8" not in int4.all
    assert "fp8" in synonyms_of(("quantization",)).all


def test_empty_and_nonsense():
    assert parse_question("", LA, NOW).is_empty
    assert parse_question("   what is the?  ", LA, NOW).is_empty
    weird = parse_question('"); drop table prs; -- "NEAR(a b)" *', LA, NOW)
    assert not weird.has_filters and all(c.said.isascii() for c in weird.concepts)


def test_follow_up_keeps_time_and_swaps_topic():
    first = parse_question("what changed in the scheduler this week?", LA, NOW)
    follow = parse_question("and on ROCm?", LA, NOW).following(first)
    assert follow.areas == ("rocm",) and follow.time == first.time
    same_topic = parse_question("and yesterday?", LA, NOW).following(first)
    assert same_topic.areas == ("core",) and same_topic.time.label.startswith("yesterday")
    assert "this week" in first.describe() and "in core" in first.describe()


def test_long_text_is_cut_with_a_note():
    pasted = "why does this fail " + " ".join(f"word{i}" for i in range(400))
    question = parse_question(pasted, LA, NOW)
    assert len(question.concepts) == 12
    assert question.problems == ("only the first 600 characters were read", "only the first 12 words were searched for")


def test_crafted_questions_cannot_stall_parsing(hang_guard):
    for text in ("<http://" + "a" * 100_000, "PR" + " " * 100_000 + "x", "by " * 50_000, "feb 9" + " - " * 30_000,
                 "@" + "a-" * 50_000, "#" * 100_000, "last " * 30_000 + "days"):
        parse_question(text, LA, NOW)


# ---------------------------------------------------------------- dates as people write them

MAR_14 = datetime(2026, 3, 14, 18, 0, tzinfo=LA)  # a Saturday


def _local_span(question) -> tuple[str, str]:
    return question.time.start.astimezone(LA).strftime("%b %d %H:%M"), question.time.end.astimezone(LA).strftime("%b %d %H:%M")


def test_a_weekday_beside_a_date_restates_it_and_the_date_decides():
    # By the clock "monday" would be Mar 9; the date says Mar 2, and its weekday agrees or not, the date wins.
    assert _local_span(parse_question("what landed Monday, Mar 2?", LA, MAR_14)) == ("Mar 02 00:00", "Mar 03 00:00")
    assert _local_span(parse_question("anything on wednesday the 4th", LA, MAR_14)) == ("Mar 04 00:00", "Mar 05 00:00")


def test_an_ordinal_day_alone_is_the_latest_such_day_so_far():
    assert _local_span(parse_question("prs from the 3rd", LA, MAR_14))[0] == "Mar 03 00:00"
    assert _local_span(parse_question("what merged on the 28th?", LA, MAR_14)) == ("Feb 28 00:00", "Mar 01 00:00")


def test_the_week_and_the_weekend_of_a_date():
    assert _local_span(parse_question("anything the week of mar 4?", LA, MAR_14)) == ("Mar 02 00:00", "Mar 09 00:00")
    assert _local_span(parse_question("the weekend of mar 7-8", LA, MAR_14)) == ("Mar 07 00:00", "Mar 09 00:00")


def test_holidays_and_the_long_weekend_are_the_last_such_days_and_no_topic():
    sep_9 = datetime(2026, 9, 9, 9, 30, tzinfo=LA)  # the Wednesday after Labor Day
    labor = parse_question("what merged on labor day?", LA, sep_9)
    assert _local_span(labor) == ("Sep 07 00:00", "Sep 08 00:00") and labor.concepts == ()
    assert labor.time.label == "on labor day (Mon Sep 7)"
    assert _local_span(parse_question("anything go in over the long weekend?", LA, sep_9)) == ("Sep 05 00:00", "Sep 08 00:00")
    # A holiday not yet come this year is last year's; "christmas eve" is not "christmas".
    assert _local_span(parse_question("what merged on christmas eve", LA, MAR_14)) == ("Dec 24 00:00", "Dec 25 00:00")
    assert _local_span(parse_question("anything on thanksgiving?", LA, MAR_14)) == ("Nov 27 00:00", "Nov 28 00:00")
    assert _local_span(parse_question("memorial day merges", LA, sep_9)) == ("May 25 00:00", "May 26 00:00")
    assert _local_span(parse_question("rocm changes on st patrick's day?", LA, sep_9)) == ("Mar 17 00:00", "Mar 18 00:00")


def test_in_the_last_week_is_the_days_up_to_now_and_last_week_the_calendars():
    rolling = parse_question("any rocm changes in the last week?", LA, MAR_14)
    assert rolling.time.start == MAR_14 - timedelta(weeks=1) and rolling.time.label == "in the last week"
    assert _local_span(parse_question("what merged last week?", LA, MAR_14)) == ("Mar 02 00:00", "Mar 09 00:00")
    # "The last week of february" is a week of a month, not the days up to now.
    assert parse_question("anything in the last week of february?", LA, MAR_14).time.label != "in the last week"


def test_two_days_of_a_month_joined_by_or_are_both_asked():
    question = parse_question("anything merged on mar 10 or 11", LA, MAR_14)
    assert _local_span(question) == ("Mar 10 00:00", "Mar 12 00:00") and question.concepts == ()


def test_a_zone_word_reads_the_day_in_that_zone_and_is_no_topic():
    question = parse_question("what merged mar 12 UTC?", LA, MAR_14)
    assert _local_span(question) == ("Mar 11 17:00", "Mar 12 17:00")
    assert question.concepts == () and "(UTC)" in question.time.label
    assert parse_question("what merged mar 12 pst", LA, MAR_14).time.label == "on Thu Mar 12"


def test_where_a_thing_came_from_asks_for_the_one_pr_that_brought_it():
    question = parse_question("where did --max-waiting-requests originally come from?", LA, MAR_14)
    assert [concept.said for concept in question.concepts] == ["max-waiting-requests"]
    assert question.one is True


def test_what_broke_is_asked_only_when_the_question_asks_it():
    assert read_form("#501 broke something, what fixed it?").culprit is False
    assert read_form("what fixed the hang caused by the barrier change").culprit is False
    assert read_form("which pr broke the hang check and what fixed it").culprit is True
    assert read_form("what broke the MI300 hang?").culprit is True


def test_heading_into_a_holiday_is_when_it_is_asked():
    question = parse_question("heading into thanksgiving, what got merged yesterday?", LA, MAR_14)
    assert question.time.label.startswith("yesterday") and question.concepts == ()


def test_the_weekend_after_its_dates_only_restates_them():
    question = parse_question("spec decode stuff that merged over the feb 21-22 weekend?", LA, MAR_14)
    assert question.time.label == "from Sat Feb 21 to Sun Feb 22" and question.concepts == ()


def test_todays_main_is_no_time_and_after_yesterday_takes_in_yesterday():
    assert parse_question("safe to bump to today's main?", LA, MAR_14).time is None
    assert parse_question("anything to change after yesterday?", LA, MAR_14).time.label == "since Fri Mar 13"
    assert parse_question("what merged after friday?", LA, MAR_14).time.label.startswith("after Fri Mar 13")


def test_who_has_been_merging_tallies_mergers_and_write_or_merge_is_either_role(db):
    save_pr(db, make_pr(3010, "[Core] Something", author="hmellor", merged_by="ada-l"))
    lookup = StoreLookup(db, REPO)
    assert parse_question("who's been merging most of the rocm prs in march", LA, NOW, lookup).tally is Tally.MERGER
    assert parse_question("what did hmellor write or merge yesterday?", LA, NOW, lookup).people == (Person("hmellor", Role.ANY),)


def test_across_the_digests_is_every_day_the_store_holds():
    question = parse_question("structured output changes across the digests?", LA, MAR_14)
    assert question.time is None and "digests" not in [concept.said for concept in question.concepts]


def test_a_doubt_told_then_asked_is_a_yes_no():
    for text in ("x-request-id echo is still opt-in right?", "pp async send/recv still in main? we counted on it"):
        assert (read_form(text).intent, read_form(text).doubt) == (Intent.YESNO, Doubt.NOW), text
    assert read_form("what is still in main?").intent is not Intent.YESNO


def test_who_did_the_change_asks_for_the_people_of_one_pr():
    assert read_form("who merged the async scheduling default change?").one is True
    assert read_form("who merged the async scheduling changes?").one is False


def test_a_short_setting_before_the_asking_leaves_its_shape():
    removed = read_form("after upgrading can i still pass --legacy-tokenizer?")
    assert removed.intent is Intent.YESNO and removed.doubt is Doubt.NOW
    assert read_form("on latest main, does the flag still work?").doubt is Doubt.NOW
    assert read_form("in march which prs did mgoin merge?").intent is not Intent.YESNO


def test_what_the_asker_is_doing_after_the_question_is_no_topic():
    question = parse_question("anything for battlemage cards? looking at b580s for a lab", LA, MAR_14)
    assert [concept.said for concept in question.concepts] == ["battlemage"]


def test_months_and_weekdays_typed_with_one_slip_still_name_the_time():
    assert parse_question("biggest pr in feburary by files changed", LA, MAR_14).time.label == "in February 2026"
    assert parse_question("what merged on thrusday", LA, MAR_14).time.label == "on Thu Mar 12"
    assert parse_question("what merged yesteday", LA, MAR_14).time.label == "yesterday (Fri Mar 13)"


def test_one_weekday_of_a_month_is_the_one_prs_merged_on_or_the_day_named():
    on_the_22nd = lambda start, end: start <= datetime(2026, 2, 22, 12, tzinfo=LA) < end
    found, rest, problems = read_time("what merged on the sunday in feb after 6pm", LA, MAR_14, on_the_22nd)
    assert (found.label, rest, problems) == ("on Sun Feb 22, after 6pm", "what merged", [])
    assert read_time("first merge on that friday in feb (the 13th)?", LA, MAR_14, on_the_22nd)[0].label == "on Fri Feb 13"
    # Every Sunday, or none, merged something: the month, and a note that says so.
    found, _, problems = read_time("sundays in feb", LA, MAR_14, lambda start, end: True)
    assert found.label == "in February 2026" and problems == ["Sundays in February are read as all of February"]


def test_order_within_a_range_is_read_and_its_word_is_no_topic():
    question = parse_question("which was the very first PR to merge on mar 13?", LA, MAR_14)
    assert (question.order, question.concepts) == (Order.FIRST, ())
    question = parse_question("the most recent rocm change", LA, MAR_14)
    assert (question.order, question.areas) == (Order.LAST, ("rocm",))
    assert parse_question("last week in rocm", LA, MAR_14).order is None
    question = parse_question("which of those is the newest?", LA, MAR_14)
    assert (question.order, question.concepts) == (Order.LAST, ())
    assert parse_question("and which one was oldest", LA, MAR_14).order is Order.FIRST


def test_words_typed_without_their_apostrophe_are_no_topic():
    question = parse_question("which rocm prs crash if youre on an older image and dont upgrade", LA, MAR_14)
    assert [concept.said for concept in question.concepts] == ["crash", "image", "upgrade"]
    assert [concept.said for concept in parse_question("whos been on the tokenizer cache", LA, MAR_14).concepts] == [
        "tokenizer", "cache"]


def test_paths_are_read_as_paths():
    assert parse_question("who touched engine/core/ lately?", LA, MAR_14).paths == ("engine/core/",)
    assert parse_question("changes to loader.py and .github", LA, MAR_14).paths == ("loader.py", ".github")
    question = parse_question("did the requirements files change?", LA, MAR_14)
    assert "requirements/" in question.paths and question.concepts == ()
    assert parse_question("support for qwen3.5", LA, MAR_14).paths == ()


def test_hardware_by_any_of_its_names_finds_the_others():
    phrases = parse_question("anything for MI325X?", LA, MAR_14).concepts[0].phrases
    assert {"gfx942", "mi300"} <= set(phrases.same)
    blackwell = parse_question("any sm100-specific kernels?", LA, MAR_14).concepts[0].phrases
    assert {"blackwell", "b200"} <= set(blackwell.same)


def test_words_that_only_name_an_area_further_are_no_topic():
    question = parse_question("rocm backend stuff on mar 13?", LA, MAR_14)
    assert question.areas == ("rocm",) and question.concepts == ()


def test_a_name_and_its_version_are_one_phrase_and_two_names_stay_two():
    assert [c.said for c in parse_question("any gemma 4 support?", LA, MAR_14).concepts] == ["gemma 4", "support"]
    assert [c.said for c in parse_question("anything for blackwell b200?", LA, MAR_14).concepts] == ["blackwell", "b200"]
    assert [c.said for c in parse_question("h100/h200 defaults", LA, MAR_14).concepts][:2] == ["h100", "h200"]


def test_an_area_named_in_the_plural_is_the_area():
    assert parse_question("anything new for TPUs?", LA, MAR_14).areas == ("tpu",)


def test_slashed_dates_clock_ranges_and_folders_are_read():
    assert _local_span(parse_question("what merged 3/12?", LA, MAR_14)) == ("Mar 12 00:00", "Mar 13 00:00")
    assert _local_span(parse_question("anything mar 13 between noon and 5pm", LA, MAR_14)) == ("Mar 13 12:00", "Mar 13 17:00")
    assert parse_question("changes under docs/ lately", LA, MAR_14).paths == ("docs/",)


def test_areas_left_out_together_or_apart():
    together = parse_question("what merged today that isn't ROCm CI?", LA, MAR_14)
    assert together.excluded_areas == (("rocm", "ci"),)
    apart = parse_question("rocm prs that aren't just CI or docs", LA, MAR_14)
    assert apart.areas == ("rocm",) and apart.excluded_areas == (("ci",), ("docs",))
    assert parse_question("spec decode today, but skip the model runner v2 cleanups", LA, MAR_14).excluded_areas == (
        ("model-runner-v2",)
    ,)
    fixes = parse_question("rocm prs that aren't bug fixes", LA, MAR_14)
    assert fixes.excluded_areas == () and fixes.excluded_words[0].said == "bug fixes"
    tagged = parse_question("mar 13 prs not labelled TPU or docs", LA, MAR_14)
    assert tagged.areas == () and tagged.excluded_areas == (("tpu",), ("docs",))


def test_an_area_asked_and_left_out_leaves_out_the_words_that_named_it():
    nixl = parse_question("kv connector prs in april that aren't nixl", LA, MAR_14)
    assert nixl.areas == ("kv-connector",) and nixl.excluded_areas == ()
    assert [concept.said for concept in nixl.excluded_words] == ["nixl"]


def test_a_zone_in_parentheses_and_a_short_with_slash():
    question = parse_question("what merged between midnight and 3am on mar 13 (PT)?", LA, MAR_14)
    assert question.concepts == () and _local_span(question) == ("Mar 13 00:00", "Mar 13 03:00")
    aside = parse_question("anything mar 13, say between 1pm and 3pm our time?", LA, MAR_14)
    assert aside.concepts == () and _local_span(aside) == ("Mar 13 13:00", "Mar 13 15:00")
    assert parse_question("engine dying w/ prompt lookup", LA, MAR_14).paths == ()


def test_a_tpu_generation_by_its_name_is_its_version():
    assert "v7x" in synonyms_of(("ironwood",)).same
    assert "ironwood" in synonyms_of(("tpu",)).all  # a kind of TPU


def test_how_people_name_risks_finds_how_risks_say_them():
    assert "startup" in synonyms_of(("first", "start")).same  # "the first start after upgrading recompiles"
    assert "cross tenant" in synonyms_of(("privacy",)).same
    assert "time series" in synonyms_of(("series", "count")).same


def test_how_people_say_something_broke_finds_how_prs_say_it():
    assert "crash" in synonyms_of(("fell", "over")).same
    assert "hang" in synonyms_of(("stuck",)).same


def test_a_month_by_its_short_name_after_in_and_negations_in_capitals():
    assert _local_span(parse_question("new models in feb?", LA, MAR_14)) == ("Feb 01 00:00", "Mar 01 00:00")
    assert parse_question("what merged today that ISN'T rocm-related?", LA, MAR_14).excluded_areas == (("rocm",),)


def test_a_24_hour_clock_and_a_bare_hour_after_a_part_of_the_day():
    utc = parse_question("which PRs merged between 02:00 and 04:15 UTC on mar 13?", LA, MAR_14)
    assert utc.concepts == () and (utc.time.start.hour, utc.time.end.hour, utc.time.end.minute) == (2, 4, 15)
    evening = parse_question("anything on friday evening, like after 7?", LA, MAR_14)
    assert evening.concepts == () and _local_span(evening) == ("Mar 13 19:00", "Mar 14 00:00")
    # Without a part of the day, a bare number is no time: "top 5 after 2" is not two o'clock.
    assert _local_span(parse_question("PRs on mar 13 after 2 reverts", LA, MAR_14)) == ("Mar 13 00:00", "Mar 14 00:00")
    assert _local_span(parse_question("mar 13 afternoon", LA, MAR_14)) == ("Mar 13 12:00", "Mar 13 18:00")


def test_lists_and_idioms_that_are_no_filters():
    # A comma after two areas does not make them alternatives; "been up to" is no time bound.
    both = parse_question("LoRA x multimodal, anything this week?", LA, MAR_14)
    assert both.areas == ("lora", "multimodal") and both.areas_together() == (("lora",), ("multimodal",))
    assert parse_question("what has grace-h been up to this week?", LA, MAR_14).time.label.startswith("this week")
    assert parse_question("leaving the bot out, who merged the most today?", LA, MAR_14).excluded == ("bots",)
    parsers = parse_question("frontend changes today other than the tool-call and reasoning parsers?", LA, MAR_14)
    assert parsers.excluded_areas == (("tool-calling",),) and [c.said for c in parsers.excluded_words] == ["reasoning parsers"]
    assert parsers.concepts == ()


def test_who_wrote_and_who_merged_said_with_verbs():
    # "did X author" is what X wrote; "which human merged the most" tallies mergers without the bots.

    tally = read_form("which human merged the most PRs in February?")
    assert (tally.intent, tally.tally) == (Intent.WHO, Tally.MERGER)
    follow = read_form("did anything follow up on #37164?")
    assert follow.relation == "follows" and follow.asks_other


def test_areas_are_alternatives_only_when_or_stands_between_them():
    months = parse_question("any amd moe kernel work in february or march?", LA, MAR_14)
    assert set(months.areas) == {"rocm", "moe", "kernels"} and len(months.areas_together()) == 3
    assert parse_question("rocm / cuda fixes", LA, MAR_14).areas_together() == (("rocm", "nvidia"),)
    either = parse_question("either TPU or XPU changes", LA, MAR_14)
    assert either.areas_together() == (("tpu", "xpu"),) and either.concepts == ()
    # One area, and one of two others: LoRA on TPU, or LoRA on XPU.
    lora = parse_question("lora on tpu or xpu", LA, MAR_14)
    assert lora.areas_together() == (("lora",), ("tpu", "xpu"))
    assert lora.in_areas(["lora", "xpu"]) and not lora.in_areas(["xpu"]) and not lora.in_areas(["lora"])


def test_a_compound_with_a_filler_half_is_its_first_half(lookup):
    assert parse_question("any rocm-flavoured changes?", LA, MAR_14).areas == ("rocm",)
    question = parse_question("anything privacy-related in the frontend?", LA, MAR_14)
    assert [concept.said for concept in question.concepts] == ["privacy"] and question.areas == ("frontend",)
    # "only" restricts: "doc-only" is no plain docs area.
    assert parse_question("doc-only prs", LA, MAR_14).areas == ()


def test_a_dotted_name_no_changed_file_has_is_a_word(lookup):
    question = parse_question("can it load llama.cpp files?", LA, MAR_14, lookup)
    assert question.paths == () and any("gguf" in concept.phrases.same for concept in question.concepts)
    assert parse_question("who touched loader.py?", LA, MAR_14).paths == ("loader.py",)  # without a store to ask, a path


def test_product_names_find_the_generation_prs_name():
    pre_ampere = parse_question("fixes for pre-ampere cards?", LA, MAR_14).concepts[-1]
    assert pre_ampere.said == "pre-ampere" and {"v100", "t4"} <= set(pre_ampere.phrases.all)
    assert "data center gpu max" in parse_question("ponte vecchio support", LA, MAR_14).concepts[0].phrases.same
    assert "avx512" in parse_question("sapphire rapids perf", LA, MAR_14).concepts[0].phrases.all


def test_who_asks_or_what_for_before_a_colon_is_no_topic():
    question = parse_question("for our standup notes: how many PRs merged yesterday?", LA, MAR_14)
    assert plain_question("for our standup notes: how many PRs merged yesterday?") == "how many PRs merged yesterday?"
    assert question.intent is Intent.COUNT and question.concepts == () and question.time is not None
    assert parse_question("kernel person here: who merged the most this week?", LA, MAR_14).tally is Tally.MERGER
    assert "rocm" in parse_question("rocm: anything on fp8?", LA, MAR_14).areas  # a topic before a colon stays


def test_the_risks_of_a_named_change_are_about_that_change_and_what_could_start_is_a_risk():
    subject = parse_question("what are the known risks of the new admission flag?", LA, MAR_14)
    assert not subject.about_risks and [c.said for c in subject.concepts] == ["admission", "flag"]
    assert parse_question("which PRs risk of oom?", LA, MAR_14).about_risks
    assert parse_question("which changes could start rejecting long prompts?", LA, MAR_14).about_risks
    latency = parse_question("which merges could add request latency?", LA, MAR_14)
    assert latency.about_risks and "add" not in [c.said for c in latency.concepts]  # what is added is the risk
    assert parse_question("anything from mar 13 that makes startup slower?", LA, MAR_14).about_risks
    assert not parse_question("the change that makes decode nodes stop waiting", LA, MAR_14).about_risks
    assert read_form("top PR author in march?").tally is Tally.AUTHOR


def test_whether_a_change_still_stands_is_a_doubt_a_revert_answers():
    assert read_form("is the prompt cache from monday still in main?").doubts_revert
    assert read_form("is the new sampler still around?").doubts_revert
    assert read_form("is the MI300 hang still there?").doubt is Doubt.PERSISTS  # a problem still there: a fix answers
    addressed = parse_question("@prdigest is there a flag to cap the queue?", LA, MAR_14)
    assert addressed.intent is Intent.YESNO


def test_a_reland_is_a_follow_up_and_leave_alone_leaves_nothing_out():
    assert read_form("what relanded #501?").relation == "follows" and read_form("what relanded #501?").asks_other
    assert read_form("did the admission change ever come back?").relation == "follows"
    assert read_form("was the admission revert ever undone?").relation == "follows"
    assert read_form("what did the revert undo?").relation == "reverts"
    roomy = parse_question("what could leave less room for the kv cache?", LA, MAR_14)
    assert roomy.excluded_words == () and "room" in [c.said for c in roomy.concepts]
    assert parse_question("mar 13 prs, leaving out docs", LA, MAR_14).excluded_areas == (("docs",),)


def test_a_cost_is_a_risk_and_host_memory_has_its_names():
    costly = parse_question("which changes need more host RAM?", LA, MAR_14)
    assert costly.about_risks and "extra memory" in costly.concepts[0].phrases.same
    assert "host memory" in parse_question("anything for host ram?", LA, MAR_14).concepts[0].phrases.same
    assert parse_question("prs that eat extra gpu memory", LA, MAR_14).about_risks
    assert not parse_question("prs that use the kv cache", LA, MAR_14).about_risks


def test_the_other_type_areas_left_out_once_and_words_that_only_join_two_areas():
    assert parse_question("non-trivial prs on mar 13", LA, MAR_14).pr_type == "substantial"
    assert parse_question("mar 13 prs that are not substantial", LA, MAR_14).pr_type == "trivial"
    assert parse_question("rocm prs that weren't ci or build changes", LA, MAR_14).excluded_areas == (("ci",),)
    joined = parse_question("spec decode together with disaggregated prefill", LA, MAR_14)
    assert joined.areas == ("speculative-decoding", "kv-connector") and joined.concepts == ()


def test_words_that_say_something_got_better_leave_only_what_did():
    for text in ("which prs improve ttft?", "did anything bring TTFT down?", "anything that should cut ttft"):
        assert [c.said for c in parse_question(text, LA, MAR_14).concepts] == ["ttft"], text


def test_the_other_side_of_a_named_pr_is_asked_for():
    assert read_form("which PR did #501 fix?").relation == "fixes" and read_form("which PR did #501 fix?").asks_other
    assert read_form("is there a follow-up to #501?").asks_other
    assert not read_form("is there a follow-up to the scheduler change?").asks_other  # described: both sides answer
    building = read_form("anything in april building on #501?")
    assert building.relation == "follows" and building.asks_other


def test_words_for_when_in_a_day_are_no_topic():
    late = parse_question("what went in late on mar 13, after 10pm?", LA, MAR_14)
    assert late.concepts == () and _local_span(late) == ("Mar 13 22:00", "Mar 14 00:00")


def test_last_night_and_two_days_after_a_month():
    night = parse_question("anything merged after 10pm last night?", LA, MAR_14)
    assert night.concepts == () and _local_span(night) == ("Mar 13 22:00", "Mar 14 00:00")
    assert _local_span(parse_question("the mar 12/13 batch", LA, MAR_14)) == ("Mar 12 00:00", "Mar 14 00:00")


def test_what_a_question_leaves_out_and_its_shape_carry_into_a_follow_up():
    earlier = parse_question("not counting the bot, who merged the most on mar 13?", LA, MAR_14)
    follow = parse_question("and on mar 12?", LA, MAR_14).following(earlier)
    assert follow.excluded == ("bots",) and follow.cues.continues and follow.tally is Tally.MERGER
    assert read_form("is the fp8 decode path back on hopper?").doubts_revert
    assert read_form("anything built on top of the kv offload change?").relation == "follows"


def test_clock_hours_as_people_type_them():
    assert _local_span(parse_question("mar 12 between 6 and 8am", LA, MAR_14)) == ("Mar 12 06:00", "Mar 12 08:00")
    assert _local_span(parse_question("what went in after 10pm on thu mar 12", LA, MAR_14)) == ("Mar 12 22:00", "Mar 13 00:00")
    assert _local_span(parse_question("mar 12, in the 8pm hour", LA, MAR_14)) == ("Mar 12 20:00", "Mar 12 21:00")
    assert _local_span(parse_question("waht landed btwn noon and 2pm on mar 12", LA, MAR_14)) == ("Mar 12 12:00", "Mar 12 14:00")


def test_a_common_word_with_one_slip_is_told_apart_from_a_topic():
    from store.retrieval.reading.typos import misspelt_filler

    assert all(misspelt_filler(word) for word in ("waht", "whcih", "chnages", "workin", "anythign"))
    assert not any(misspelt_filler(word) for word in ("rocm", "fork", "gramar", "lora"))


def test_the_start_of_a_month_is_a_time_and_no_topic():
    question = parse_question("tpu work since the start of march", LA, MAR_14)
    assert question.concepts == () and _local_span(question)[0] == "Mar 01 00:00"


def test_files_a_pr_must_not_have_changed_and_two_months_together():
    assert parse_question("mar 13 prs that didnt touch any tests", LA, MAR_14).excluded_paths == ("tests/",)
    assert parse_question("prs that did not change engine/envs.py", LA, MAR_14).excluded_paths == ("engine/envs.py",)
    assert parse_question("prs that weren't trivial", LA, MAR_14).pr_type == "substantial"
    months = parse_question("prs in january and march", LA, MAR_14)
    assert _local_span(months)[0] == "Jan 01 00:00" and months.concepts == ()


def test_what_reads_close_to_a_rule_but_is_not_one():
    from store.retrieval.reading.typos import misspelt_filler

    assert not any(misspelt_filler(word) for word in ("wasm", "lite", "mode", "lang"))
    assert [c.said for c in parse_question("any changes to custom all-reduce?", LA, MAR_14).concepts] == ["custom", "all-reduce"]
    assert not parse_question("which prs use more than one gpu?", LA, MAR_14).about_risks
    assert not parse_question("the commit that makes decode faster", LA, MAR_14).about_risks
    assert not parse_question("was anything that touched rocm reverted?", LA, MAR_14).points_back
    assert parse_question("were they reverted?", LA, MAR_14).points_back
    assert _local_span(parse_question("may and april", LA, datetime(2026, 5, 8, tzinfo=LA)))[0] == "Apr 01 00:00"
    assert _local_span(parse_question("mar 12 between 10 and 2pm", LA, MAR_14)) == ("Mar 12 10:00", "Mar 12 14:00")


def test_a_second_name_left_out_that_is_no_person_is_left_out_as_what_it_names(lookup):
    ci = parse_question("mar 13 prs not by linus-t or ci", LA, MAR_14, lookup)
    assert ci.excluded == ("linus-t",) and ci.areas == () and ci.excluded_areas == (("ci",),)


def test_a_phrase_that_holds_the_words_asked_is_not_searched_again():
    memory = synonyms_of(("memory",))
    assert "extra gpu memory" not in memory.all and "more ram" in memory.all  # the first finds nothing "memory" does not


def test_operations_words_and_a_bare_pr_number_asked_about():
    assert "kubernetes" in parse_question("k8s fixes", LA, MAR_14).concepts[0].phrases.same
    assert "opentelemetry" in parse_question("otel changes", LA, MAR_14).concepts[0].phrases.same
    assert "graceful shutdown" in parse_question("anything for zero-downtime rollouts?", LA, MAR_14).concepts[0].phrases.same
    assert read_form("did 39617 get reverted?").asks_other
    assert [c.said for c in parse_question("prs whose risks mention memory", LA, MAR_14).concepts] == ["memory"]


def test_words_typed_without_their_apostrophe_and_the_way_a_count_is_asked():
    untouched = parse_question("yesterdays prs that dont touch anything under docs/", LA, NOW)
    assert untouched.excluded_paths == ("docs/",) and untouched.concepts == ()
    assert _days("yesterdays merges") == (date(2026, 2, 13), date(2026, 2, 13))
    counted = parse_question("count of prs merged on feb 12?", LA, NOW)
    assert counted.concepts == () and read_form("count of prs merged on feb 12?").intent is Intent.COUNT
    assert [c.said for c in parse_question("the number of token count bugs", LA, NOW).concepts] == ["token", "count", "bugs"]


def test_a_clock_range_needs_no_between():
    assert _local_span(parse_question("mar 13 afternoon (noon-6pm) merges", LA, MAR_14)) == ("Mar 13 12:00", "Mar 13 18:00")
    # Around lunch, "1:30" comes after "11:30": the afternoon's.
    assert _local_span(parse_question("mar 13, like 11:30 to 1:30", LA, MAR_14)) == ("Mar 13 11:30", "Mar 13 13:30")
    assert _local_span(parse_question("anything on 3/12 from 9-11am", LA, MAR_14)) == ("Mar 12 09:00", "Mar 12 11:00")


def test_leaving_out_a_type_asks_for_the_other():
    for text in ("prs the bot merged yesterday, leaving out the trivial ones", "what merged apart from the trivial stuff"):
        question = parse_question(text, LA, NOW)
        assert question.pr_type == "substantial" and question.excluded_words == (), text


def test_a_yes_no_asked_in_the_last_words():
    assert read_form("vllm was quietly ignoring our adapters... fixed yet?").intent is Intent.YESNO
    assert read_form("the nixl crash on hangup, resolved?").intent is Intent.YESNO
    assert read_form("ROCm CI flakes and timeouts: what got fixed?").intent is not Intent.YESNO


def test_names_as_people_say_them(db):
    for number, author in ((3001, "AndreasKaratzas"), (3002, "raj-v"), (3003, "bigPYJ1151"), (3004, "rajeshwar"),
                           (3005, "dependabot[bot]")):
        save_pr(db, make_pr(number, "[Core] Something", author=author))
    lookup = StoreLookup(db, REPO)
    ask = lambda text: list(parse_question(text, LA, NOW, lookup).people)
    # A first name run into the login, or first and last name together; a short one only before a dash.
    assert ask("andreas's prs?") == [Person("AndreasKaratzas", Role.ANY)]
    assert ask("everything andreas karatzas wrote") == [Person("AndreasKaratzas", Role.ANY)]
    assert ask("what did raj merge yesterday") == [Person("raj-v", Role.ANY, merges=True)]
    # A GitHub App by its name, without the "[bot]" its login ends in.
    assert ask("anything from Dependabot?") == [Person("dependabot[bot]", Role.AUTHOR)]
    assert ask("the kv cache too big?") == []


def test_a_fix_for_a_named_pr_and_just_the_ones_of_a_kind():
    assert read_form("anything that fixes #39560?").relation == "fixes"
    assert read_form("is there a fix for pr 39560").relation == "fixes"
    assert parse_question("just the tool calling ones", LA, NOW).cues.narrows
    assert not parse_question("just tool calling changes this week", LA, NOW).cues.narrows


def test_several_people_left_out_an_aside_and_areas_joined_by_a_slash(lookup):
    assert parse_question("mar 13 merges not merged by vllm-bot, linus or ada-l", LA, NOW, lookup).excluded == (
        "vllm-bot", "linus-t", "ada-l")
    assert read_form("which person (not the bot) merged the most prs yesterday").tally is Tally.MERGER
    assert parse_question("ci/build prs, not counting the amd/rocm ones", LA, NOW).excluded_areas == (("rocm",),)
    assert parse_question("wat did ada-l merge", LA, NOW, lookup).concepts == ()


def test_how_to_after_what_it_is_about_and_why_it_is_asked_after_it():
    assert read_form("huge schemas get rejected after 30s now, how do i raise that").intent is Intent.HOWTO
    assert read_form("what changed and how do i use it").intent is not Intent.HOWTO
    context = parse_question("which prs touched docs/? trying to figure out where the new pages came from", LA, NOW)
    assert context.paths == ("docs/",) and context.concepts == ()


def test_bot_merges_left_out_are_not_asked_for():
    for text in ("what merged yesterday, not counting what the bot merged?", "PRs not bot-merged yesterday",
                 "dont show the bot merged ones from yesterday"):
        question = parse_question(text, LA, NOW)
        assert question.people == () and question.excluded == ("bots",), text
    assert parse_question("prs the bot merged yesterday", LA, NOW).people == (Person("bots", Role.MERGER),)


def test_a_name_before_its_login_and_bots_excluded_after(lookup):
    named = parse_question("what did linus torvalds (linus-t) merge", LA, NOW, lookup)
    assert named.people == (Person("linus-t", Role.ANY),) and named.concepts == ()
    assert parse_question("who merged the most yesterday, bots excluded", LA, NOW, lookup).excluded == ("bots",)
    assert read_form("most prolific author overall?").tally is Tally.AUTHOR


def test_a_full_name_is_the_login_of_its_initial_and_last_name(db):
    for number, author in ((3001, "opetrov"), (3002, "mk-lund"), (3003, "mxlund")):
        save_pr(db, make_pr(number, "[Core] Something", author=author))
    lookup = StoreLookup(db, REPO)
    ask = lambda text: list(parse_question(text, LA, NOW, lookup).people)
    assert ask("what did olga petrov merge") == [Person("opetrov", Role.ANY)]
    # Two logins fit "mia lund": neither is guessed. No login ends with the name: no person.
    assert ask("what did mia lund merge") == []
    assert ask("what did olga smith merge") == []


def test_what_qualifies_the_areas_left_out_is_left_out_with_them():
    question = parse_question("rocm work last week, not the ci flake stuff", LA, NOW)
    assert question.excluded_areas == (("ci",),) and question.concepts == ()
    both = parse_question("non-nvidia work yesterday, leaving out rocm", LA, NOW)
    assert both.excluded_areas == (("nvidia",), ("rocm",)) and both.concepts == ()


def test_a_fix_of_a_number_and_since_alone():
    for text in ("anything fixing 39416?", "what fixed the fallout from 36133", "what fixed the tests after #36133"):
        assert read_form(text).relation == "fixes", text
    assert read_form("which pr fixed 2048 token prompts").relation is None
    assert parse_question("any new ones since?", LA, NOW).relative is Side.AFTER


def test_people_and_bots_left_out_or_asked_as_people_say_it(lookup, db):
    assert parse_question("ci prs in march not from ada-l", LA, NOW, lookup).excluded == ("ada-l",)
    assert parse_question("yesterday's bot merges excluding docs", LA, NOW, lookup).people == (Person("bots", Role.MERGER),)
    save_pr(db, make_pr(3005, "[Core] Something", author="russellb"))
    assert parse_question("stuff russell merged", LA, NOW, StoreLookup(db, REPO)).people == (Person("russellb", Role.ANY),)


def test_which_ones_older_stuff_the_whole_store_and_context_after_a_comma():
    assert parse_question("which ones aren't for nvidia gpus", LA, NOW).cues.picks_among
    not_nvidia = parse_question("which ones aren't for nvidia gpus", LA, NOW)
    assert not_nvidia.excluded_areas == (("nvidia",),) and not_nvidia.concepts == ()
    assert parse_question("any older stuff from him on sliding windows?", LA, NOW).relative is Side.BEFORE
    assert parse_question("support for older gpus", LA, NOW).relative is None
    assert parse_question("largest pr in the whole store by files changed", LA, NOW).concepts == ()
    for text in ("what did the cpu backend get in april, we run on xeons", "prs under docs/ — need to know what to rebuild"):
        assert [c.said for c in parse_question(text, LA, NOW).concepts] == [], text


def test_hardware_by_compute_capability_and_sliding_window_as_swa():
    assert "sm120" in parse_question("anything for compute capability 12.0 cards", LA, NOW).concepts[0].phrases.all
    assert "sliding window" in parse_question("the trtllm swa change", LA, NOW).concepts[-1].phrases.all


def test_consumer_blackwell_and_tail_latency_by_other_names():
    assert "sm120" in parse_question("the prebuilt wheel on 50-series geforce cards", LA, NOW).concepts[-2].phrases.all
    assert "p99" in parse_question("prs that cut tail ITL", LA, NOW).concepts[0].phrases.all


def test_turning_a_thing_on_or_off_is_how_it_is_set_not_what_it_is():
    assert [c.said for c in parse_question("how do i turn the image cache off", LA, NOW).concepts] == ["image", "cache"]
    assert "switched" in [c.said for c in parse_question("answers wrong when thinking is switched off", LA, NOW).concepts]


def test_what_eats_memory_asks_about_the_memory():
    assert "eats" not in [c.said for c in parse_question("what eats into kv cache capacity", LA, NOW).concepts]


def test_a_month_abbreviated_alone():
    assert parse_question("which feb pr touched the most files", LA, NOW).time.label == "in February 2026"
    assert parse_question("may i see the rocm prs", LA, NOW).time is None
    assert parse_question("reverts in march or april", LA, NOW).time.label.startswith("from March to April")


def test_fp4_is_said_by_its_formats():
    assert "nvfp4" in parse_question("fp4 quant changes?", LA, NOW).concepts[0].phrases.all


def test_what_prs_warn_or_admit_is_in_their_risks():
    for text in ("which changes warn outputs arent bit-identical anymore", "which prs admit accuracy was only checked on gsm8k"):
        question = parse_question(text, LA, NOW)
        assert question.about_risks and "warn" not in [c.said for c in question.concepts], text


def test_consumer_blackwell_by_its_card():
    for text in ("nvfp4 on consumer blackwell, like a 5090?", "fp4 on the geforce blackwell cards"):
        assert any("sm120" in c.phrases.all for c in parse_question(text, LA, NOW).concepts), text


def test_what_could_change_or_throw_off_is_a_risk_and_dashboards_are_metrics():
    question = parse_question("anything yesterday that could throw off our grafana alerts?", LA, NOW)
    assert question.about_risks and any("prometheus" in c.phrases.all for c in question.concepts)
    assert parse_question("which changes could change reproducible outputs", LA, NOW).about_risks


def test_a_weekday_and_part_of_the_day_before_a_date_keep_the_date():
    question = parse_question("anything late monday night apr 13, like after 10pm", LA, datetime(2026, 7, 24, 9, tzinfo=LA))
    assert question.time.label == "in the night of Mon Apr 13, after 10pm"
    assert parse_question("monday apr 13 lunchtime merges (12-1pm)?", LA, NOW).concepts == ()


def test_words_that_only_describe_the_folder_named_are_no_area():
    question = parse_question("prs that changed the tool parsers dir (vllm/entrypoints/openai/tool_parsers)", LA, NOW)
    assert question.paths == ("vllm/entrypoints/openai/tool_parsers",) and question.areas == ()
    assert parse_question("rocm changes under csrc/", LA, NOW).areas == ("rocm",)


def test_warmup_is_startup_and_what_might_mess_up_is_a_risk():
    warmup = parse_question("which changes could make warmup slower", LA, NOW)
    assert warmup.about_risks and "startup" in warmup.concepts[0].phrases.all
    messed = parse_question("what might mess up existing dashboards", LA, NOW)
    assert messed.about_risks and "mess" not in [c.said for c in messed.concepts]
    assert parse_question("biggest throughput multiplier yesterday", LA, NOW).order is Order.GAIN
