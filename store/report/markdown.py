"""The daily report in Markdown: parsing an existing report, and writing one back identically."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from store.model import TYPES, PullRequest, Summary
from store.text.patterns import LazyPattern
from store.text.safe import has_controls

SECTIONS = (
    ("what_changed", "What changed and why"),
    ("impact", "Technical impact"),
    ("risks", "Potential risks"),
    ("insights", "Key insights"),
)
LOCAL_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

_TITLE = LazyPattern(r"^# (?P<title>\S.*)$")
_DATE = LazyPattern(r"^\*\*Report Date:\*\* (?P<date>\d{4}-\d{2}-\d{2}) (?P<label>\S+)$")
_TOTAL = LazyPattern(r"^\*\*Total Merged PRs:\*\* (?P<total>\d+)$")
_HEADING = LazyPattern(r"^## (?P<pos>\d+)\. \[(?P<title>.*)\]\((?P<url>https?://\S+/pull/(?P<number>\d+))\)$")
_REPO_URL = LazyPattern(r"^https?://[^/]+/(?P<repo>[^/]+/[^/]+)/pull/\d+$")
# The Base Information lines, each value in a group named for its field; no value runs past its line.
_FIELD_LINES = {
    "number": r"- \*\*PR Number:\*\* #(?P<number>\d+)",
    # App logins end in "[bot]" ("mergify[bot]"), brackets inside the link's text.
    "author": r"- \*\*Author:\*\* \[(?P<author>[^\[\]\n]+(?:\[bot\])?)\]\(\S+\)",
    "merged_by": r"- \*\*Merged By:\*\* \[(?P<merged_by>[^\[\]\n]+(?:\[bot\])?)\]\(\S+\)",
    "merged_time": r"- \*\*Merged time:\*\* (?P<merged_time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})",
    "type": r"- \*\*Type:\*\* `(?P<type>[A-Za-z]+)`",
    "files": r"- \*\*\[Changed Files\]\(\S+\) \((?P<files>\d+)\):\*\*",
}
# A whole field line, or changed file line, found with the line break before it:
# one search through the block costs far less than trying patterns line by line.
_FIELD_LINE = LazyPattern(r"\n(?:" + "|".join(_FIELD_LINES.values()) + r")(?=\n|\Z)")
_FILE_LINE = LazyPattern(r"\n  - `(.*)`(?=\n|\Z)")
_SECTION_HEADINGS = {f"**{label}**": key for key, label in SECTIONS}
# Refused rather than stripped: the report would no longer be the file, and such text is a trap for a terminal.
_CONTROLS = "holds control characters (escape sequences, bidi overrides); remove them and import again"

if TYPE_CHECKING:
    import jinja2


class ReportFormatError(ValueError):
    """The text is not a daily report; the message says where and what, in one line."""


@dataclass
class ParsedReport:
    repo: str | None  # None when the report lists no PRs to tell it by
    date: date
    title: str  # e.g. "vLLM Merged PR Report"
    tz_label: str  # e.g. "PST"
    prs: list[PullRequest]


def parse_report(text: str, tz: ZoneInfo) -> ParsedReport:
    """Parse a daily report; merged times are read as local times in `tz`."""
    if "\r" in text:
        text = "\n".join(line.rstrip("\r") for line in text.split("\n"))
    header, chunks = _split_chunks(text)
    if has_controls("\n".join(header)):
        raise ReportFormatError(f"the header {_CONTROLS}")
    title, report_date, tz_label, total = _parse_header(header)
    prs = [_parse_pr(chunk, tz) for chunk in chunks]
    if total != len(prs):
        raise ReportFormatError(f"header says {total} merged PRs but the report holds {len(prs)}")
    repos = {pr.repo for pr in prs}
    if len(repos) > 1:
        raise ReportFormatError(f"PRs from more than one repository: {', '.join(sorted(repos))}")
    if not any(line.strip() == "---" for line in header):
        raise ReportFormatError("the header is cut off (no closing '---'); the file looks truncated")
    return ParsedReport(repos.pop() if repos else None, report_date, title, tz_label, prs)


def _split_chunks(text: str) -> tuple[list[str], list[list[str]]]:
    """The header's lines, and each PR's lines from its '## ' heading on."""
    # Cutting the text at headings is far cheaper than testing every line for one; the
    # line break put first lets a heading on the first line be cut like the others.
    header, *parts = ("\n" + text).split("\n## ")
    lines = header[1:].split("\n")
    if not parts and not any(line.strip() for line in lines):
        raise ReportFormatError("empty file")
    return lines, [("## " + part).split("\n") for part in parts]


def _parse_header(lines: list[str]) -> tuple[str, date, str, int]:
    found: dict[str, re.Match[str]] = {}
    for line in lines:
        for name, pattern in (("title", _TITLE), ("date", _DATE), ("total", _TOTAL)):
            match = pattern.match(line)
            if match and name not in found:
                found[name] = match
    for name, what in (("title", "'# ... Report' title"), ("date", "'Report Date'"), ("total", "'Total Merged PRs'")):
        if name not in found:
            raise ReportFormatError(f"not a daily report: no {what} line in the header")
    try:
        report_date = date.fromisoformat(found["date"]["date"])
    except ValueError:
        raise ReportFormatError(f"bad report date {found['date']['date']!r}") from None
    return found["title"]["title"], report_date, found["date"]["label"], int(found["total"]["total"])


def _parse_pr(chunk: list[str], tz: ZoneInfo) -> PullRequest:
    heading = _HEADING.match(chunk[0])
    if not heading:
        raise ReportFormatError(f"malformed PR heading: {chunk[0][:80]!r}")
    where = f"PR #{heading['number']}"
    if has_controls("\n".join(chunk)):
        raise ReportFormatError(f"{where} {_CONTROLS}")
    body = _strip_blank(chunk[1:])
    if not body or body[-1] != "---":
        raise ReportFormatError(f"{where} is cut off (no closing '---'); the file looks truncated")
    body = _strip_blank(body[:-1])
    try:
        summary_at = body.index("### Summary")
    except ValueError:
        raise ReportFormatError(f"{where} has no '### Summary' section") from None
    fields, files = _parse_base(body[:summary_at], where)
    if int(fields["number"]) != int(heading["number"]):
        raise ReportFormatError(f"{where}: heading link and PR Number #{fields['number']} disagree")
    if int(fields["files"]) < len(files):
        raise ReportFormatError(f"{where}: lists {len(files)} changed files but says {fields['files']}")
    pr_type = fields["type"].lower()
    if pr_type not in TYPES:
        raise ReportFormatError(f"{where}: unknown type {fields['type']!r} (expected SUBSTANTIAL or TRIVIAL)")
    repo = _REPO_URL.match(heading["url"])
    if not repo:
        raise ReportFormatError(f"{where}: cannot tell the repository from {heading['url']!r}")
    try:
        # The field's pattern fixed its shape, which fromisoformat reads far faster than strptime.
        merged_local = datetime.fromisoformat(fields["merged_time"])
    except ValueError:
        raise ReportFormatError(f"{where}: bad merged time {fields['merged_time']!r}") from None
    return PullRequest(
        repo=repo["repo"],
        number=int(heading["number"]),
        title=heading["title"],
        url=heading["url"],
        author=fields["author"],
        merged_by=fields["merged_by"],
        merged_at=merged_local.replace(tzinfo=tz),
        type=pr_type,
        files=files,
        changed_files=int(fields["files"]),
        summary=_parse_summary(body[summary_at + 1 :], where),
    )


def _parse_base(lines: list[str], where: str) -> tuple[dict[str, str], list[str]]:
    text = "\n" + "\n".join(lines)
    fields: dict[str, str] = {}
    files_from: int | None = None
    for line in _FIELD_LINE.finditer(text):
        name = line.lastgroup
        fields[name] = line[name]
        if name == "files" and files_from is None:
            files_from = line.end()
    # A changed file counts under the Changed Files line; findall gives the paths without a match object each.
    files = _FILE_LINE.findall(text, files_from) if files_from is not None else []
    missing = [name for name in _FIELD_LINES if name not in fields]
    if missing:
        names = ", ".join(name.replace("_", " ") for name in missing)
        raise ReportFormatError(f"{where} is missing or has malformed: {names}")
    return fields, files


def _parse_summary(lines: list[str], where: str) -> Summary:
    texts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        key = _SECTION_HEADINGS.get(line.rstrip())
        if key:
            current = texts.setdefault(key, [])
        elif current is not None:
            current.append(line)
        elif line.strip():
            raise ReportFormatError(f"{where}: text before the first summary section: {line[:60]!r}")
    missing = [label for key, label in SECTIONS if key not in texts]
    if missing:
        raise ReportFormatError(f"{where}: summary lacks section(s): {', '.join(missing)}")
    sections = {key: "\n".join(_strip_blank(texts[key])) for key, _ in SECTIONS}
    return Summary(**sections, source="imported")


def _strip_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


@cache
def _template() -> jinja2.Template:
    # Imported here: parsing and most commands never render Markdown.
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("store.report", "templates"),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown out, and the format stores text as it came
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("report.md.j2")


def render_report(
    title: str, day: date, tz_label: str, prs: list[PullRequest], tz: ZoneInfo
) -> str:
    """Write the report for `prs` (already in report order) in the daily report format."""
    return _template().render(
        title=title,
        day=day.isoformat(),
        tz_label=tz_label,
        prs=prs,
        sections=SECTIONS,
        local_time=lambda moment: moment.astimezone(tz).strftime(LOCAL_TIME_FORMAT),
        profile=lambda pr, login: f"{pr.url.split('/pull/')[0].rsplit('/', 2)[0]}/{login}",
    )
