from datetime import UTC, date, datetime

import pytest
from conftest import FIXTURES, LA, seed_reports

from store.report.day import load_report, report_markdown
from store.report.markdown import ReportFormatError, parse_report
from store.sources.importer import import_file


def _round_trip(db, path):
    imported = import_file(db, path, LA, "acme/engine")
    day = date.fromisoformat(imported.date)
    return report_markdown(load_report(db, imported.repo, day, LA))


def _same_lines(a: str, b: str) -> bool:
    return [line.rstrip() for line in a.split("\n")] == [line.rstrip() for line in b.split("\n")]


def test_parse_fields_of_a_report():
    report = parse_report((FIXTURES / "report-2026-03-08.md").read_text(), LA)
    assert (report.repo, report.date, report.title, report.tz_label) == (
        "acme/engine", date(2026, 3, 8), "Acme Merged PR Report", "PST")
    first = report.prs[0]
    assert first.number == 4102
    assert first.title == "[ROCm][Bugfix] Fix <!channel> [sic] paged attention on MI300"
    assert first.author == "ada-l" and first.merged_by == "merge-bot"
    assert first.type == "substantial"
    assert first.files[0] == "csrc/rocm/attention.cu" and first.changed_files == 3
    # 23:59:59 on the day clocks sprang forward is PDT, seven hours behind UTC
    assert first.merged_at.astimezone(UTC) == datetime(2026, 3, 9, 6, 59, 59, tzinfo=UTC)
    assert first.summary.risks.splitlines()[1] == "- Block size 8 is not covered by the new test."
    assert report.prs[1].type == "trivial"


@pytest.mark.parametrize("name", ["report-2026-03-07.md", "report-2026-03-08.md"])
def test_fixture_round_trip_is_exact(db, name):
    original = (FIXTURES / name).read_text()
    assert _round_trip(db, FIXTURES / name) == original


def test_seed_reports_round_trip(db):
    for path in seed_reports():
        rendered = _round_trip(db, path)
        assert _same_lines(rendered, path.read_text()), path.name


def _broken(text: str) -> list[tuple[str, str]]:
    """Ways a report goes wrong, each with a word its error message must contain."""
    first_pr_end = text.index("\n---\n\n## 2.")
    return [
        ("", "empty"),
        ("hello\nworld\n", "not a daily report"),
        (text[: first_pr_end - 40], "truncated"),
        (text.replace("- **Author:** [ada-l](https://github.com/ada-l)\n", ""), "author"),
        (text.replace("**Total Merged PRs:** 3", "**Total Merged PRs:** 4"), "holds 3"),
        (text.replace("`TRIVIAL`", "`HUGE`"), "unknown type"),
        (text.replace("**Technical impact**  \nDocumentation only.\n\n", ""), "Technical impact"),
        (text.replace("- **Merged time:** 2026-03-08 03:10:00", "- **Merged time:** 2026-13-08 03:10:00"), "merged time"),
    ]


def test_malformed_reports_raise_one_line_errors():
    text = (FIXTURES / "report-2026-03-08.md").read_text()
    for broken, word in _broken(text):
        with pytest.raises(ReportFormatError) as info:
            parse_report(broken, LA)
        message = str(info.value)
        assert "\n" not in message and word in message, (word, message)


EMPTY_DAY = "# Acme Merged PR Report\n\n**Report Date:** 2026-03-01 PST\n\n**Total Merged PRs:** 0\n\n---\n\n"


def test_a_day_without_prs_round_trips(run_cli, tmp_path):
    path = tmp_path / "report-2026-03-01.md"
    path.write_text(EMPTY_DAY)
    assert run_cli("import", "--repo", "acme/engine", str(path)).code == 0
    assert run_cli("report", "--repo", "acme/engine", "--date", "2026-03-01").out == EMPTY_DAY


def test_a_header_cut_off_is_truncated():
    with pytest.raises(ReportFormatError, match="truncated"):
        parse_report(EMPTY_DAY[: EMPTY_DAY.index("---")], LA)


def test_an_app_login_round_trips(db, tmp_path):
    # GitHub apps merge as "mergify[bot]": the brackets sit inside the link's text.
    text = (FIXTURES / "report-2026-03-08.md").read_text().replace(
        "- **Merged By:** [merge-bot](https://github.com/merge-bot)", "- **Merged By:** [mergify[bot]](https://github.com/apps/mergify)", 1)
    assert "mergify[bot]" in text
    assert parse_report(text, LA).prs[0].merged_by == "mergify[bot]"
    path = tmp_path / "report-2026-03-08.md"
    path.write_text(text)
    assert "[mergify[bot]](" in _round_trip(db, path)
