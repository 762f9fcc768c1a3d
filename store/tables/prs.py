"""Reading and writing merged PRs in the store."""
from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring_ascii
from typing import Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import from_utc_text, now_text, to_utc_text
from store.db import write_transaction
from store.model import PullRequest, Summary
from store.text.safe import mask_secrets
from store.understanding.relations import record_relations

# Row ids sort by merge time, so that a time window is one range of ids (and of
# FTS rowids) in whatever order PRs were stored: a backfill stores the newest
# days first. The low bits tell apart PRs merged in the same second.
_PER_SECOND = 1 << 20


def first_id(moment: datetime) -> int:
    """The lowest row id a PR merged at `moment` or later can have."""
    return math.ceil(moment.timestamp()) * _PER_SECOND


def _preferred_id(merged_at: datetime, number: int) -> int:
    """The row id of a PR unless another PR merged in the same second already has it."""
    return int(merged_at.timestamp()) * _PER_SECOND + number % _PER_SECOND


def _json_strings(items: list[str]) -> str:
    """What json.dumps writes for a list of strings, in a fraction of its time.

    json.dumps sets up an encoder on every call, which costs more than encoding
    a few paths, and every PR saved writes three such lists.
    """
    return "[" + ", ".join(map(encode_basestring_ascii, items)) + "]"


def pr_record(pr: PullRequest) -> dict[str, Any]:
    """The `prs` row for a PR, without id or timestamps. Its text is kept with its secrets masked: a body may
    quote a log holding a token, and a summary repeat a key the model saw."""
    summary = summary_record(pr.summary) if pr.summary else None
    return {
        "repo": pr.repo,
        "number": pr.number,
        "title": mask_secrets(pr.title),
        "url": pr.url,
        "body": mask_secrets(pr.body or ""),
        "author": pr.author,
        "merged_by": pr.merged_by,
        "merged_at": to_utc_text(pr.merged_at),
        "additions": pr.additions,
        "deletions": pr.deletions,
        "changed_files": pr.file_count,
        "files": _json_strings(pr.files),
        "labels": _json_strings(pr.labels),
        "areas": _json_strings(pr.areas),
        "type": pr.type,
        "what_changed": summary.what_changed if summary else None,
        "impact": summary.impact if summary else None,
        "risks": summary.risks if summary else None,
        "insights": summary.insights if summary else None,
        "summary_source": summary.source if summary else None,
    }


def summary_record(summary: Summary) -> Summary:
    """`summary` as the store keeps it: its sections with their secrets masked."""
    return Summary(**{key: mask_secrets(text) for key, text in summary.as_dict().items()}, source=summary.source)


def save_pr(db: Database, pr: PullRequest) -> int:
    """Insert or update one PR by (repo, number), in one transaction; returns its row id."""
    return save_prs(db, [pr])[0]


def save_prs(db: Database, prs: Iterable[PullRequest]) -> list[int]:
    """Insert or update PRs by (repo, number) in one transaction, all or none; returns their row ids.

    A PR listed twice is stored as its last listing says, as if saved one by one.
    """
    prs = list(prs)
    if not prs:
        return []
    latest = {(pr.repo, pr.number): pr for pr in prs}
    records = {key: pr_record(pr) for key, pr in latest.items()}
    columns = ["id", *next(iter(records.values())), "created_at", "updated_at"]
    now = now_text()
    with write_transaction(db):
        ids = _assign_ids(db, list(latest.values()), _stored_ids(db, list(latest)))
        # Ascending ids: FTS5 writes its pending index out whenever a rowid is lower than the last.
        rows = sorted(([ids[key], *record.values(), now, now] for key, record in records.items()), key=lambda row: row[0])
        _upsert(db, columns, rows)
        record_relations(db, latest.values())
        _merge_index(db)
    return [ids[(pr.repo, pr.number)] for pr in prs]


# FTS5 adds an index segment with every write and merges segments only four of a size at a time;
# every query looks a word up in each segment, so a store written in many small batches (a poller,
# a backfill) searches ever slower. Past this many segments the index is merged into one: at 100k
# PRs that takes about half a second, once every hundred or so one-PR writes (a day of vLLM).
MAX_SEGMENTS = 12


def _merge_index(db: Database) -> None:
    segments = db.execute("select count(distinct segid) from prs_fts_idx").fetchone()[0]
    if segments > MAX_SEGMENTS:
        db.execute("insert into prs_fts (prs_fts) values ('optimize')")


def _upsert(db: Database, columns: list[str], rows: list[list[Any]]) -> None:
    """Insert `rows`, or update the stored PR of the same (repo, number), keeping its created_at.

    Many rows a statement rather than one: FTS5 writes its pending index out
    at the end of every statement that its triggers change.
    """
    updates = ", ".join(f"{name} = excluded.{name}" for name in columns if name != "created_at")
    row_marks = f"({', '.join('?' * len(columns))})"
    per_statement = db.conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(columns)
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        db.execute(
            f"insert into prs ({', '.join(columns)}) values {', '.join([row_marks] * len(chunk))} "
            f"on conflict (repo, number) do update set {updates}",
            [value for row in chunk for value in row],
        )


def _stored_ids(db: Database, keys: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The row ids of the PRs already stored among `keys`, in one query per repository."""
    numbers: dict[str, list[int]] = {}
    for repo, number in keys:
        numbers.setdefault(repo, []).append(number)
    return {
        (repo, number): row_id
        for repo, wanted in numbers.items()
        for number, row_id in db.execute(
            "select number, id from prs where repo = ? and number in (select value from json_each(?))",
            [repo, json.dumps(wanted)],
        )
    }


def _assign_ids(db: Database, prs: list[PullRequest], stored: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Each PR's row id: the stored one while its merge second holds, else the preferred one, or the next free."""
    ids: dict[tuple[str, int], int] = {}
    wanted: dict[tuple[str, int], int] = {}
    for pr in prs:
        key, current = (pr.repo, pr.number), stored.get((pr.repo, pr.number))
        second = int(pr.merged_at.timestamp())
        if current is not None and current // _PER_SECOND == second:
            ids[key] = current
        else:
            wanted[key] = _preferred_id(pr.merged_at, pr.number)
    if not wanted:
        return ids
    # Ids stay taken by their PRs until the end of the batch, even by a PR moving to another second.
    taken = {
        row[0]
        for row in db.execute("select id from prs where id in (select value from json_each(?))", [json.dumps(list(wanted.values()))])
    }
    taken.update(ids.values())
    checked = set(wanted.values())

    def in_use(candidate: int) -> bool:
        if candidate in taken:
            return True
        return candidate not in checked and db.execute("select 1 from prs where id = ?", [candidate]).fetchone() is not None

    for key, candidate in wanted.items():
        ids[key] = _next_free(candidate, in_use)
        taken.add(ids[key])
    return ids


def _next_free(candidate: int, in_use: Callable[[int], bool]) -> int:
    """`candidate`, or the next id of the same second that is not in use."""
    while in_use(candidate):
        base, slot = divmod(candidate, _PER_SECOND)
        candidate = base * _PER_SECOND + (slot + 1) % _PER_SECOND
    return candidate


def pr_from_row(row: dict[str, Any]) -> PullRequest:
    summary = None
    if row.get("summary_source"):
        summary = Summary(
            what_changed=row["what_changed"] or "",
            impact=row["impact"] or "",
            risks=row["risks"] or "",
            insights=row["insights"] or "",
            source=row["summary_source"],
        )
    return PullRequest(
        repo=row["repo"],
        number=row["number"],
        title=row["title"],
        url=row["url"],
        author=row["author"] or "",
        merged_by=row["merged_by"],
        merged_at=from_utc_text(row["merged_at"]),
        type=row["type"],
        files=json.loads(row["files"] or "[]"),
        changed_files=row["changed_files"],
        labels=json.loads(row["labels"] or "[]"),
        areas=json.loads(row["areas"] or "[]"),
        body=row["body"] or "",
        additions=row["additions"],
        deletions=row["deletions"],
        summary=summary,
    )


def get_pr(db: Database, repo: str, number: int) -> PullRequest | None:
    rows = list(db["prs"].rows_where("repo = ? and number = ?", [repo, number]))
    return pr_from_row(rows[0]) if rows else None


def get_prs(db: Database, repo: str, numbers: list[int]) -> dict[int, PullRequest]:
    """The stored PRs of `repo` among `numbers`, by number, in one query."""
    # Plain SQL: the library's rows_where first asks whether the table exists, which costs more than
    # this query when, as on a first import, none of the PRs is stored.
    cursor = db.execute(
        "select * from prs where repo = ? and number in (select value from json_each(?))", [repo, json.dumps(numbers)]
    )
    columns = [column[0] for column in cursor.description]
    return {row["number"]: pr_from_row(row) for row in (dict(zip(columns, values)) for values in cursor)}


def prs_merged_between(
    db: Database, repo: str, start: datetime, end: datetime, area: str | None = None
) -> list[PullRequest]:
    """PRs merged in [start, end), newest merge first, optionally only those in `area`."""
    where = "repo = ? and merged_at >= ? and merged_at < ?"
    args: list[Any] = [repo, to_utc_text(start), to_utc_text(end)]
    if area:
        where += " and exists (select 1 from json_each(prs.areas) where value = ?)"
        args.append(area)
    rows = db["prs"].rows_where(where, args, order_by="merged_at desc, number desc")
    return [pr_from_row(row) for row in rows]


def latest_merge(db: Database, repo: str) -> datetime | None:
    return _merge_time(db, repo, "max")


def earliest_merge(db: Database, repo: str) -> datetime | None:
    return _merge_time(db, repo, "min")


def _merge_time(db: Database, repo: str, which: str) -> datetime | None:
    row = db.execute(f"select {which}(merged_at) from prs where repo = ?", [repo]).fetchone()
    return from_utc_text(row[0]) if row and row[0] else None


@dataclass(frozen=True)
class Held:
    """What the store holds of one repository: how many PRs, merged from `first` to `last`."""

    repo: str
    prs: int
    first: datetime
    last: datetime

    def describe(self, tz: ZoneInfo) -> str:
        """"acme/engine: 4 PRs merged 2026-03-07 to 2026-03-08", in the local days of `tz`."""
        first, last = self.first.astimezone(tz).date(), self.last.astimezone(tz).date()
        span = f"on {first}" if first == last else f"from {first} to {last}"
        return f"{self.repo}: {self.prs:,} PR{'' if self.prs == 1 else 's'} merged {span}"


def held(db: Database, repo: str) -> Held | None:
    """The PRs of `repo` in the store, counted by the (repo, number) index and bounded by (repo, merged_at)."""
    count, first, last = db.execute(
        "select count(*), min(merged_at), max(merged_at) from prs where repo = ?", [repo]
    ).fetchone()
    return Held(repo, count, from_utc_text(first), from_utc_text(last)) if count else None


def holdings(db: Database) -> list[Held]:
    """Every repository the store holds PRs of, most PRs first."""
    found = [item for item in (held(db, repo) for repo in known_repos(db)) if item]
    return sorted(found, key=lambda item: (-item.prs, item.repo))


def known_repos(db: Database) -> list[str]:
    """The repositories the store holds PRs of, each found by one index seek (a plain DISTINCT reads every row)."""
    rows = db.execute(
        "with recursive found(repo) as (select min(repo) from prs"
        " union all select (select min(repo) from prs where repo > found.repo) from found where found.repo is not null)"
        " select repo from found where repo is not null"
    )
    return [row[0] for row in rows]
