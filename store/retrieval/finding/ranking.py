"""Ranking matches with bm25 over weighted columns, in the most recent window that holds enough of them, so a question
costs the same in a store of any size; each stage of a question's FTS expressions ranks in a band of its own."""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text
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
    whole = scope.where(stage, scope.start)
    recent = _newest_matches(scope.db, scope.where(stage, scope.start, scored=False), limit)
    if len(recent) < limit:
        return _rank(scope.db, stage, whole, [pr_id for pr_id, _ in recent], limit)
    reached = recent[-1][1]
    for days in WINDOW_DAYS:
        lower = newest - timedelta(days=days)
        if lower <= oldest:
            break  # this window already holds every PR asked about
        if lower <= reached:
            window = scope.where(stage, lower)
            return _rank(scope.db, stage, window, _match_ids(scope.db, scope.where(stage, lower, scored=False), LOCAL_CAP + 1), limit)
    return _rank(scope.db, stage, whole, _match_ids(scope.db, scope.where(stage, scope.start, scored=False), LOCAL_CAP + 1), limit)


def _newest_matches(db: Database, query: tuple[str, list[Any]], most: int) -> list[tuple[int, datetime]]:
    """The ids and merge times of the newest `most` matches, newest first."""
    where, args = query
    rows = db.execute(
        f"select prs.id, prs.merged_at from {FTS_JOIN} where {where} order by prs_fts.rowid desc limit ?", [*args, most]
    )
    return [(pr_id, from_utc_text(merged_at)) for pr_id, merged_at in rows]


def _match_ids(db: Database, query: tuple[str, list[Any]], most: int) -> list[int]:
    where, args = query
    return [row[0] for row in db.execute(f"select prs.id from {FTS_JOIN} where {where} limit ?", [*args, most])]


def _rank(db: Database, stage: Stage, query: tuple[str, list[Any]], ids: list[int], limit: int) -> list[dict[str, Any]]:
    if not ids:
        return []
    if len(ids) <= LOCAL_CAP and store_size(db) >= LOCAL_FROM:
        return _score_locally(db, stage.expression, ids, limit)
    where, args = query
    cursor = db.execute(
        f"select prs.*, -{_bm25('prs_fts')} as score from {FTS_JOIN} where {where} "
        "order by score desc, prs.merged_at desc limit ?",
        [*args, limit],
    )
    return rows_of(cursor)


def _score_locally(db: Database, expression: str, ids: list[int], limit: int) -> list[dict[str, Any]]:
    """bm25 over just these PRs, indexed in a small FTS table of this connection.

    In a big store, bm25 on the store's own index slows down with every PR
    added (each phrase's instances are read from its full doclist); indexing a
    window's few hundred matches costs the same at any size. Rarity ("idf")
    then means rare among those matches.
    """
    _index_window(db, ids)
    # Ranked on ids and merge times alone; only the PRs that come out on top are read whole.
    ranked = db.execute(
        f"select prs.id, -{_bm25('search_window')} as score "
        "from temp.search_window cross join prs on prs.id = search_window.rowid "
        "where search_window match ? order by score desc, prs.merged_at desc limit ?",
        [expression, limit],
    ).fetchall()
    cursor = db.execute("select * from prs where id in (select value from json_each(?))", [json.dumps([pr_id for pr_id, _ in ranked])])
    rows = {row["id"]: row for row in rows_of(cursor)}
    return [{**rows[pr_id], "score": score} for pr_id, score in ranked]


def _index_window(db: Database, ids: list[int]) -> None:
    """Make the connection's window table index exactly these PRs, as they read now.

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
    stale = [row[0] for row in db.execute(
        f"select kept.id from temp.search_window_rows kept left join prs on prs.id = kept.id "
        f"where kept.id not in (select value from json_each(?)) or prs.id is null or {changed}",
        [wanted],
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
