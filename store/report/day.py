"""A day's report as stored: which PRs, in which order, under which header."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import range_bounds, zone_label, zone_names
from store.model import PullRequest
from store.report.markdown import render_report
from store.tables.prs import prs_merged_between


@dataclass
class DailyReport:
    repo: str
    first: date
    last: date
    tz: ZoneInfo
    title: str
    tz_label: str
    prs: list[PullRequest]

    @property
    def label(self) -> str:
        """The day, or the range, the report covers."""
        if self.first == self.last:
            return self.first.isoformat()
        return f"{self.first.isoformat()}..{self.last.isoformat()}"


def report_title(db: Database, repo: str) -> str:
    row = db.execute("select report_title from repos where name = ?", [repo]).fetchone()
    if row and row[0]:
        return row[0]
    return f"{repo.split('/')[-1]} Merged PR Report"


def load_report(
    db: Database, repo: str, first: date, tz: ZoneInfo, last: date | None = None, area: str | None = None
) -> DailyReport:
    """The PRs of `repo` merged on local days first..last (one day by default), newest first."""
    last = last or first
    start, end = range_bounds(first, last, tz)
    tz_label = (imported_tz_label(db, repo, first, tz) if first == last else None) or zone_label(tz, first, last)
    prs = prs_merged_between(db, repo, start, end, area=area)
    return DailyReport(repo, first, last, tz, report_title(db, repo), tz_label, prs)


def imported_tz_label(db: Database, repo: str, day: date, tz: ZoneInfo) -> str | None:
    """The zone name an imported report used for its day, so rendering it again says the same ("PST" in
    July, as vLLM's reports do); None when it is not a name of `tz`, whose days are then other days."""
    row = db.execute("select tz_label from reports where repo = ? and date = ?", [repo, day.isoformat()]).fetchone()
    return row[0] if row and row[0] in zone_names(tz, day.year) else None


def report_markdown(report: DailyReport) -> str:
    return render_report(report.title, report.first, report.tz_label, report.prs, report.tz)


def report_json(report: DailyReport) -> dict[str, Any]:
    return {
        "repo": report.repo,
        "date": report.label,
        "timezone": report.tz.key,
        "prs": [pr_json(pr, report.tz) for pr in report.prs],
    }


def pr_json(pr: PullRequest, tz: ZoneInfo) -> dict[str, Any]:
    return {
        "number": pr.number,
        "title": pr.title,
        "url": pr.url,
        "author": pr.author,
        "merged_by": pr.merged_by,
        "merged_at": pr.merged_at.astimezone(tz).isoformat(),
        "type": pr.type,
        "files": pr.files,
        "areas": pr.areas,
        "labels": pr.labels,
        "summary": pr.summary.as_dict() if pr.summary else None,
    }
