"""Importing daily report files into the store."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.areas import classify
from store.db import write_transaction
from store.days import now_text
from store.model import PullRequest
from store.prs import get_prs, save_prs
from store.report_markdown import ParsedReport, ReportFormatError, parse_report


# How long files share one write transaction. Most of a lone file's commit was
# FTS5 writing out and merging a new index segment, and rewriting the index pages
# its 40 random keys touch; files that commit together pay that once. Short enough
# that `serve` waiting for the write lock meanwhile does not notice.
BATCH_SECONDS = 0.25


class ReportImportError(ValueError):
    """A file could not be imported; str() is one line naming the file and the problem."""


@dataclass
class Imported:
    path: Path
    repo: str
    date: str
    count: int


def read_report(path: Path, tz: ZoneInfo) -> ParsedReport:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReportImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        raise ReportImportError(f"{path}: binary file, not a daily report")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportImportError(f"{path}: not UTF-8 text, not a daily report") from None
    try:
        return parse_report(text, tz)
    except ReportFormatError as exc:
        raise ReportImportError(f"{path}: {exc}") from None


def store_report(db: Database, report: ParsedReport, source: str) -> None:
    """Write a parsed report in one transaction: every PR, or none."""
    now = now_text()
    with write_transaction(db):
        stored = get_prs(db, report.repo, [pr.number for pr in report.prs]) if report.repo else {}
        for pr in report.prs:
            keep_fetched_fields(pr, stored.get(pr.number))
            pr.areas = classify(pr.title, pr.files, pr.labels, pr.repo)
        save_prs(db, report.prs)
        # Plain SQL upserts: the library's look the schema up again on every call, a dozen statements each.
        db.execute(
            "insert into repos (name, report_title, updated_at) values (?, ?, ?) on conflict (name) "
            "do update set report_title = excluded.report_title, updated_at = excluded.updated_at",
            [report.repo, report.title, now],
        )
        db.execute(
            "insert into reports (repo, date, tz_label, source, imported_at) values (?, ?, ?, ?, ?) "
            "on conflict (repo, date) do update set tz_label = excluded.tz_label, source = excluded.source, "
            "imported_at = excluded.imported_at",
            [report.repo, report.date.isoformat(), report.tz_label, source, now],
        )


def keep_fetched_fields(pr: PullRequest, stored: PullRequest | None) -> None:
    """A report carries no body, labels or diff size: keep what ingest fetched for them."""
    if stored is None:
        return
    pr.body = pr.body or stored.body
    pr.labels = pr.labels or stored.labels
    pr.additions = pr.additions if pr.additions is not None else stored.additions
    pr.deletions = pr.deletions if pr.deletions is not None else stored.deletions


def import_file(db: Database, path: Path, tz: ZoneInfo, default_repo: str) -> Imported:
    """Import one report; a report that lists no PRs is taken to be about `default_repo`."""
    report = read_report(path, tz)
    report.repo = report.repo or default_repo
    store_report(db, report, source=path.name)
    return Imported(path, report.repo, report.date.isoformat(), len(report.prs))


def import_files(
    db: Database, paths: Iterable[Path], tz: ZoneInfo, default_repo: str
) -> Iterator[Imported | ReportImportError]:
    """Import reports in order, yielding each file's outcome once the transaction that stored it committed.

    Each file is still stored whole or not at all: a file that is not a report
    changes nothing, and a failure to write rolls back only files not yet yielded.
    """
    remaining = iter(paths)
    while batch := _import_batch(db, remaining, tz, default_repo):
        yield from batch


def _import_batch(
    db: Database, paths: Iterator[Path], tz: ZoneInfo, default_repo: str
) -> list[Imported | ReportImportError]:
    """Import files from `paths` in one transaction, until it has run BATCH_SECONDS or `paths` ends."""
    outcomes: list[Imported | ReportImportError] = []
    with write_transaction(db):
        deadline = time.monotonic() + BATCH_SECONDS
        for path in paths:
            try:
                outcomes.append(import_file(db, path, tz, default_repo))
            except ReportImportError as exc:
                outcomes.append(exc)
            if time.monotonic() >= deadline:
                break
    return outcomes
