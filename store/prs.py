"""Reading and writing merged PRs in the store."""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterable

from sqlite_utils import Database

from store.db import write_transaction
from store.days import from_utc_text, now_text, to_utc_text
from store.model import PullRequest, Summary
from store.relations import record_relations



def pr_record(pr: PullRequest) -> dict[str, Any]:
    """The `prs` row for a PR, without id or timestamps."""
    summary = pr.summary
    return {
        "repo": pr.repo,
        "number": pr.number,
        "title": pr.title,
        "url": pr.url,
        "body": pr.body or "",
        "author": pr.author,
        "merged_by": pr.merged_by,
        "merged_at": to_utc_text(pr.merged_at),
        "additions": pr.additions,
        "deletions": pr.deletions,
        "changed_files": pr.file_count,
        "files": json.dumps(pr.files),
        "labels": json.dumps(pr.labels),
        "areas": json.dumps(pr.areas),
        "type": pr.type,
        "what_changed": summary.what_changed if summary else None,
        "impact": summary.impact if summary else None,
        "risks": summary.risks if summary else None,
        "insights": summary.insights if summary else None,
        "summary_source": summary.source if summary else None,
    }


def save_pr(db: Database, pr: PullRequest) -> int:
    """Insert or update one PR by (repo, number), in one transaction; returns its row id."""
    record = pr_record(pr)
    now = now_text()
    with write_transaction(db):
        existing = db.execute(
            "select id from prs where repo = ? and number = ?", [pr.repo, pr.number]
        ).fetchone()
        if existing:
            db["prs"].update(existing[0], {**record, "updated_at": now})
            pr_id = existing[0]
        else:
            pr_id = db["prs"].insert({**record, "created_at": now, "updated_at": now}).last_pk
        record_relations(db, pr)
        return pr_id


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
    row = db.execute("select max(merged_at) from prs where repo = ?", [repo]).fetchone()
    return from_utc_text(row[0]) if row and row[0] else None


def known_repos(db: Database) -> list[str]:
    return [row[0] for row in db.execute("select distinct repo from prs order by repo")]


def save_prs(db: Database, prs: Iterable[PullRequest]) -> int:
    """Save many PRs in one transaction (all or none); returns how many."""
    count = 0
    with write_transaction(db):
        for pr in prs:
            save_pr(db, pr)
            count += 1
    return count
