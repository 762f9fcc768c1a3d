"""Example daily reports written for prdigest, shipped with it: a store to try commands and questions on.

Their PRs are made up, under vllm-project/vllm's name so that every command works on them as it would
on the real ones. Loading them beside real PRs of that repository would mix the two, so it is refused.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.db import StoreError
from store.sources.importer import Imported, ReportImportError, import_files, read_report
from store.text.prose import plural

SAMPLE_DIR = Path(__file__).parent / "sample_reports"
SAMPLE_REPO = "vllm-project/vllm"


class SampleRefused(StoreError):
    """The store holds PRs that the sample's would mix with; the message says what to do instead."""


def sample_reports() -> list[Path]:
    """The shipped example reports, oldest day first."""
    return sorted(SAMPLE_DIR.glob("report-*.md"))


def load_sample(db: Database, tz: ZoneInfo) -> Iterator[Imported]:
    """Import the example reports, each as `prdigest import` would; loading them again updates them.

    SampleRefused, before anything is written, when the store holds other PRs of the sample's repository."""
    reports = sample_reports()
    numbers = [pr.number for path in reports for pr in read_report(path, tz).prs]
    (others,) = db.execute(
        "select count(*) from prs where repo = ? and number not in (select value from json_each(?))",
        [SAMPLE_REPO, json.dumps(numbers)],
    ).fetchone()
    if others:
        raise SampleRefused(
            f"the store {_path(db)} holds {plural(others, 'PR')} of {SAMPLE_REPO}, and the example PRs would mix with "
            "them: load the examples into a store of their own, with --db PATH"
        )
    for done in import_files(db, reports, tz, SAMPLE_REPO):
        if isinstance(done, ReportImportError):  # the files ship with prdigest: one that does not read is a broken install
            raise StoreError(f"an example report does not read: {done}")
        yield done


def _path(db: Database) -> str:
    return db.execute("pragma database_list").fetchone()[2]
