"""Ranking matches with bm25 over weighted columns, in the most recent window that holds enough of them, so a question
costs the same in a store of any size; each stage of a question's FTS expressions ranks in a band of its own."""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text, to_utc_text
from store.migrations import FTS_COLUMNS
from store.retrieval.finding.conditions import FTS_JOIN, narrowing_condition, rowid_range, span, time_bounds
from store.retrieval.finding.hits import rows_of
from store.retrieval.fts import area_expression, exact_expression, match_expression, membership_expression, store_size, strict_expression
from store.retrieval.reading.query import Query

# bm25 weight per FTS column. A word in the title says most about a PR; the
# risks and insights sections speculate about neighbouring code, so they count little.
WEIGHTS = {
    "title": 10.0,
    "what_changed": 4.0,
    "impact": 2.0,
    "risks": 0.5,
    "insights": 0.5,
    "files": 3.0,
    "author": 5.0,
    "areas": 6.0,
}


def _bm25(table: str) -> str:
    return f"bm25({table}, " + ", ".join(str(WEIGHTS[column]) for column in FTS_COLUMNS) + ")"


# In stores of LOCAL_FROM PRs or more, up to LOCAL_CAP matches of a window are ranked in a small
# FTS table of their own, at a cost that no longer grows with the store (see _score_locally).
# Measured: from about 5,000 PRs (four months of vLLM) this is the cheaper way.
LOCAL_FROM = 5_000
LOCAL_CAP = 2000
# How far back (days from the newest PR asked about) text search looks before it widens to everything.
WINDOW_DAYS = (3, 7, 30, 180, 730)



@dataclass(frozen=True)
class Stage:
    expression: str
    required: str | None  # a second FTS query every row must also match
    band: int  # 2: every concept in the asker's own words, 1: every concept, 0: some


def stages(question: Query) -> list[Stage]:
    """Every concept (and area) as asked, then with synonyms, then the area (or any word) to fill up."""
    exact, strict, loose = exact_expression(question), strict_expression(question), match_expression(question)
    assert strict is not None and loose is not None
    area = area_expression(question) if question.areas else None
    # First: PRs classified in the area (in one of each group of areas named together) that also say what was asked.
    several = len(question.areas_together()) > 1
    stages = [Stage(exact or strict, membership_expression(question), 2)] if exact or several else []
    if strict != exact:
        stages.append(Stage(strict, None, 1))
    if loose not in (strict, exact):
        stages.append(Stage(loose, area, 0))
    return stages


class Scope:
    """The time range and people a question keeps to."""

    def __init__(self, db: Database, repo: str, question: Query) -> None:
        self.db, self.repo, self.question = db, repo, question
        self.start, self.end = span(question)
        self.indexed = False  # whether this question's matches were put in the window table yet

    @cached_property
    def edges(self) -> tuple[datetime, datetime] | None:
        """When the first and the last PR asked about merged; None when none did (read once, for every stage)."""
        bounds, args = time_bounds(self.repo, self.start, self.end)
        # Two statements: SQLite reads min() or max() straight off the index only when it is alone.
        first, last = (
            self.db.execute(f"select {edge}(merged_at) from prs where {bounds}", args).fetchone()[0] for edge in ("min", "max")
        )
        return (from_utc_text(first), from_utc_text(last)) if first else None

    def where(self, stage: Stage, lower: datetime | None, scored: bool = True) -> tuple[str, list[Any]]:
        """The WHERE clause of a stage from `lower` on; for matches that are not `scored`, one FTS5 query.

        Row ids sort by merge time, so FTS5 reads only the window's stretch of
        each doclist, however many PRs are older or newer.
        """
        expression = stage.expression
        if stage.required and not scored:
            # Both in one query: the rows of the stage's own query that also match the required one, found by FTS5
            # walking both doclists together, rather than every row the required query matches listed first.
            expression = f"({stage.expression}) AND ({stage.required})"
        where, args = [f"prs_fts match ?{rowid_range('prs_fts.rowid', lower, self.end)}"], [expression]
        if stage.required and scored:
            # "+prs.id": a plain rowid IN would be pushed into FTS5 as one lookup (and one bm25 setup) per id.
            where.append(f"+prs.id in (select rowid from prs_fts where prs_fts match ?{rowid_range('rowid', lower, self.end)})")
            args.append(stage.required)
        bounds, bound_args = time_bounds(self.repo, lower, self.end, "prs.")
        where.append(bounds)
        args.extend(bound_args)
        narrowing, narrowing_args = narrowing_condition(self.question)
        if narrowing:
            where.append(narrowing)
            args.extend(narrowing_args)
        return " and ".join(where), args


def windowed(scope: Scope, stage: Stage, limit: int) -> list[dict[str, Any]]:
    """Top rows of a stage, from the narrowest recent window that holds `limit` of its matches.

    Ranking is what costs, not matching. The windows are three days, a week, a
    month, half a year and two years back from the newest PR asked about, then
    the whole range asked, and only the first window holding `limit` matches is
    ranked. Which one that is, the `limit`-th newest match says: FTS5 walks its
    doclists newest first and stops there. FTS5 reads only a window's stretch
    of rowids, so a question costs the same in a store of 100,000 PRs as in
    one of 1,000, whatever order they were stored in, and recent PRs win among equals.
    """
    edges = scope.edges
    if edges is None:
        return []
    oldest, newest = edges
    # One walk, newest first: its first `limit` matches choose the window, and the rest of the window's
    # matches are the ones that follow, so no doclist is read twice.
    where, args = scope.where(stage, scope.start, scored=False)
    cursor = scope.db.execute(
        f"select prs.id, prs.merged_at from {FTS_JOIN} where {where} order by prs_fts.rowid desc", args
    )
    try:
        recent = cursor.fetchmany(limit)
        if len(recent) < limit:
            return _rank(scope, stage, scope.where(stage, scope.start), [pr_id for pr_id, _ in recent], limit)
        lower = _window(oldest, newest, from_utc_text(recent[-1][1]))
        ids = _until(cursor, recent, None if lower is None else to_utc_text(lower))
    finally:
        cursor.close()  # an unfinished walk would keep the store's read snapshot open
    return _rank(scope, stage, scope.where(stage, scope.start if lower is None else lower), ids, limit)


def _window(oldest: datetime, newest: datetime, reached: datetime) -> datetime | None:
    """Where the narrowest window that reaches back to `reached` starts; None for the whole range asked."""
    for days in WINDOW_DAYS:
        lower = newest - timedelta(days=days)
        if lower <= oldest:
            return None  # this window already holds every PR asked about
        if lower <= reached:
            return lower
    return None


def _until(cursor: sqlite3.Cursor, rows: list[tuple[int, str]], since: str | None) -> list[int]:
    """The ids of the walk's matches merged at `since` or later (every one when None), up to LOCAL_CAP + 1: the `rows`
    read already, then the walk's next ones. Row ids sort by merge time, so the walk leaves the window for good."""
    ids: list[int] = []
    while rows:
        for pr_id, merged_at in rows:
            if since is not None and merged_at < since:
                return ids
            ids.append(pr_id)
        if len(ids) > LOCAL_CAP:
            return ids[: LOCAL_CAP + 1]
        # Read on in batches as large as what was read so far: a few rows past the window's edge, not a cap's worth.
        rows = cursor.fetchmany(min(len(ids), LOCAL_CAP + 1 - len(ids)))
    return ids


def _rank(scope: Scope, stage: Stage, query: tuple[str, list[Any]], ids: list[int], limit: int) -> list[dict[str, Any]]:
    db = scope.db
    if not ids:
        return []
    if len(ids) <= LOCAL_CAP and store_size(db) >= LOCAL_FROM:
        fresh, scope.indexed = not scope.indexed, True
        return _score_locally(db, stage.expression, ids, limit, fresh)
    where, args = query
    cursor = db.execute(
        f"select prs.*, -{_bm25('prs_fts')} as score from {FTS_JOIN} where {where} "
        "order by score desc, prs.merged_at desc limit ?",
        [*args, limit],
    )
    return rows_of(cursor)


def _score_locally(db: Database, expression: str, ids: list[int], limit: int, fresh: bool = True) -> list[dict[str, Any]]:
    """bm25 over these PRs, indexed in a small FTS table of this connection: `fresh` for the first stage of a question,
    and for its later stages beside what its earlier ones indexed.

    In a big store, bm25 on the store's own index slows down with every PR
    added (each phrase's instances are read from its full doclist); indexing a
    window's few hundred matches costs the same at any size. Rarity ("idf")
    then means rare among the question's matches: its later, wider stages add
    to the table rather than index it again.
    """
    _index_window(db, ids, fresh)
    # Ranked on ids and merge times alone; only the PRs that come out on top are read whole.
    ranked = db.execute(
        f"select prs.id, -{_bm25('search_window')} as score "
        "from temp.search_window cross join prs on prs.id = search_window.rowid "
        "where search_window match ? and prs.id in (select value from json_each(?)) "
        "order by score desc, prs.merged_at desc limit ?",
        [expression, json.dumps(ids), limit],
    ).fetchall()
    cursor = db.execute("select * from prs where id in (select value from json_each(?))", [json.dumps([pr_id for pr_id, _ in ranked])])
    rows = {row["id"]: row for row in rows_of(cursor)}
    return [{**rows[pr_id], "score": score} for pr_id, score in ranked]


def _index_window(db: Database, ids: list[int], fresh: bool = True) -> None:
    """Make the connection's window table index these PRs, as they read now: exactly these when `fresh`, else beside
    those it holds.

    Tokenizing is what indexing costs, and a question's stages, and the
    questions after it, mostly rank the same recent PRs: only the PRs that
    leave the window or changed since are taken out (by the text they were
    indexed with, kept beside the index), and only those new to it are added,
    unless that would tokenize more PRs than indexing them afresh.
    """
    columns = ", ".join(FTS_COLUMNS)
    db.execute(f"create temp table if not exists search_window_rows (id integer primary key, {columns})")
    db.execute(
        f"create virtual table if not exists temp.search_window using fts5({columns}, tokenize='porter', "
        "content='search_window_rows', content_rowid='id')"
    )
    wanted = json.dumps(ids)
    changed = " or ".join(f"kept.{column} is not prs.{column}" for column in FTS_COLUMNS)
    gone = "kept.id not in (select value from json_each(?))" if fresh else "0"
    stale = [row[0] for row in db.execute(
        f"select kept.id from temp.search_window_rows kept left join prs on prs.id = kept.id "
        f"where {gone} or prs.id is null or {changed}",
        [wanted] if fresh else [],
    )]
    kept = db.execute("select count(*) from temp.search_window_rows").fetchone()[0] - len(stale)
    # Committed at once: an open transaction would pin this connection's view of the store.
    with db.atomic():
        if len(stale) >= kept:  # taking them out would cost as much as indexing the kept ones again
            db.execute("insert into temp.search_window (search_window) values ('delete-all')")
            db.execute("delete from temp.search_window_rows")
        elif stale:
            gone = json.dumps(stale)
            db.execute(
                f"insert into temp.search_window (search_window, rowid, {columns}) "
                f"select 'delete', id, {columns} from temp.search_window_rows where id in (select value from json_each(?))",
                [gone],
            )
            db.execute("delete from temp.search_window_rows where id in (select value from json_each(?))", [gone])
        new = json.dumps([row[0] for row in db.execute(
            "select value from json_each(?) where value not in (select id from temp.search_window_rows)", [wanted]
        )])
        db.execute(
            f"insert into temp.search_window_rows (id, {columns}) "
            f"select id, {columns} from prs where id in (select value from json_each(?))",
            [new],
        )
        db.execute(
            f"insert into temp.search_window (rowid, {columns}) "
            f"select id, {columns} from temp.search_window_rows where id in (select value from json_each(?))",
            [new],
        )


# CROSS JOIN keeps FTS as the outer loop: bm25 needs the FTS cursor to drive.
