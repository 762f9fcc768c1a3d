from datetime import UTC, datetime

from pr_factory import make_pr

from bot.messages.blocks import primary_area


def _pr(title: str, areas: list[str]):
    return make_pr(1, title, areas=areas, merged_at=datetime(2026, 3, 8, tzinfo=UTC))


def test_a_pr_is_grouped_under_the_area_its_title_names():
    assert primary_area(_pr("[Model Runner V2] Drop a method", ["speculative-decoding", "model-runner-v2"])) == "model-runner-v2"
    assert primary_area(_pr("[AMD][CI] Fix a flaky test", ["rocm", "ci"])) == "rocm"


def test_broad_areas_yield_to_specific_ones():
    assert primary_area(_pr("[Refactor] Simplify dummy inputs", ["docs", "multimodal"])) == "multimodal"
    assert primary_area(_pr("[CI] Pin a version", ["ci"])) == "ci"
    assert primary_area(_pr("Tidy up", [])) == "other"


def test_the_home_tab_keeps_to_slacks_block_limit_and_always_ends_with_the_help():
    from datetime import date
    from zoneinfo import ZoneInfo

    from bot.messages.blocks import MAX_HOME_BLOCKS, home_blocks
    from store.report.day import DailyReport

    day = date(2026, 3, 8)
    prs = [_pr(f"[Core] Change {n} " + "word " * 600, ["core"]) for n in range(3)]  # several sections a report
    reports = [DailyReport(f"acme/repo{n}", day, day, ZoneInfo("UTC"), f"Repo{n} Merged PR Report", "UTC", prs)
               for n in range(80)]
    blocks = home_blocks(reports, "how to use it")
    assert len(blocks) <= MAX_HOME_BLOCKS and blocks[-1]["text"]["text"] == "how to use it"
    assert blocks[0]["text"]["text"].startswith("*Repo0: merged PRs for 2026-03-08")
