"""Importing daily report files into the store."""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import now_text
from store.db import StoreError, write_transaction
from store.model import PullRequest
from store.report.markdown import ParsedReport, ReportFormatError, parse_report
from store.tables.prs import get_prs, save_prs
from store.text.prose import plural
from store.understanding.areas import classify

# How many PRs' files share one write transaction (about twenty days of vLLM).
# Most of a lone file's commit was FTS5 writing out and merging a new index
# segment, and rewriting the index pages its 40 random keys touch; files that
# commit together pay that once. Files are read before the transaction begins,
# so the write lock is held only for storing, about 0.2 s a group.
GROUP_PRS = 800
GITHUB = "github.com"


class ReportImportError(ValueError):
    """A file could not be imported; str() is one line naming the file and the problem."""


@dataclass
class Imported:
    path: Path
    repo: str
    date: str
    count: int
    updated: bool = False  # the store held a report of that day already: this file replaced it

    def describe(self) -> str:
        """The line `prdigest import` prints for it."""
        return f"{'updated' if self.updated else 'imported'} {plural(self.count, 'PR')} of {self.repo} for {self.date} from {self.path}"


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


def store_report(db: Database, report: ParsedReport, source: str) -> bool:
    """Write a parsed report in one transaction: every PR, or none. True when it replaced a stored report of its day."""
    now = now_text()
    with write_transaction(db):
        replaced = db.execute(
            "select 1 from reports where repo = ? and date = ?", [report.repo, report.date.isoformat()]
        ).fetchone() is not None
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
    return replaced


def keep_fetched_fields(pr: PullRequest, stored: PullRequest | None) -> None:
    """A report carries no body, labels or diff size: keep what ingest fetched for them."""
    if stored is None:
        return
    pr.body = pr.body or stored.body
    pr.labels = pr.labels or stored.labels
    pr.additions = pr.additions if pr.additions is not None else stored.additions
    pr.deletions = pr.deletions if pr.deletions is not None else stored.deletions


def import_file(db: Database, path: Path, tz: ZoneInfo, default_repo: str, github_host: str = GITHUB) -> Imported:
    """Import one report; a report that lists no PRs is taken to be about `default_repo`."""
    return _store_group(db, [_read(path, tz, default_repo, github_host)])[0]


def import_files(
    db: Database, paths: Iterable[Path], tz: ZoneInfo, default_repo: str, github_host: str = GITHUB
) -> Iterator[Imported | ReportImportError]:
    """Import reports in order, yielding a file that is not a report as it is read, and a stored file once
    the transaction that stored it committed (called outside a transaction, as the CLI does).

    Each file is stored whole or not at all. A failure to write stops the import
    with a StoreError naming the file; files not yet yielded were not stored.
    """
    group: list[tuple[Path, ParsedReport]] = []
    for path in paths:
        try:
            group.append(_read(path, tz, default_repo, github_host))
        except ReportImportError as exc:
            yield exc
            continue
        if sum(len(report.prs) for _, report in group) >= GROUP_PRS:
            yield from _store_group(db, group)
            group = []
    if group:
        yield from _store_group(db, group)


def _read(path: Path, tz: ZoneInfo, default_repo: str, github_host: str) -> tuple[Path, ParsedReport]:
    report = read_report(path, tz)
    for pr in report.prs:
        # Every stored URL is shown as a link; one to another host would send readers there.
        if urlsplit(pr.url).hostname != github_host:
            raise ReportImportError(f"{path}: PR #{pr.number} links to {urlsplit(pr.url).hostname}, "
                                    f"not the configured GitHub ({github_host})")
    report.repo = report.repo or default_repo
    return path, report


def web_host(api_url: str) -> str:
    """The host PR links point at: HOST for GitHub Enterprise's https://HOST/api/v3, else github.com
    (api.github.com, or a proxy or stand-in of it)."""
    parts = urlsplit(api_url)
    return (parts.hostname or GITHUB) if parts.path.rstrip("/").endswith("/api/v3") else GITHUB


def _store_group(db: Database, group: list[tuple[Path, ParsedReport]]) -> list[Imported]:
    """Store parsed reports in one transaction: all of them, or none."""
    replaced = []
    with write_transaction(db):
        for path, report in group:
            try:
                replaced.append(store_report(db, report, source=path.name))
            except sqlite3.Error as exc:
                raise StoreError(f"{path}: cannot store it: {exc}") from exc
    imported = []
    for (path, report), updated in zip(group, replaced):
        assert report.repo is not None, "_read gives every report a repository"
        imported.append(Imported(path, report.repo, report.date.isoformat(), len(report.prs), updated))
    return imported
