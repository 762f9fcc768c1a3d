"""PRs listed by time and people only, newest first, or nearest to a time asked when the time was relaxed away."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from store.days import from_utc_text, to_utc_text
from store.retrieval.finding.conditions import kept_condition, person_conditions, span, time_bounds
from store.retrieval.finding.hits import Hit, rows_of
from store.retrieval.reading.query import Query, Role
from store.retrieval.reading.when import TimeRange
from store.tables.prs import pr_from_row

# Listings count their PRs up to this many; a bot that says "1000+" needs no exact figure.
COUNT_CAP = 1000



@dataclass(frozen=True)
class _Arm:
    """One index-friendly slice of a listing: a person's authored or merged PRs, or every PR."""

    where: str
    args: tuple[Any, ...]
    rank: int  # 0 before 1: a person's own PRs before those they only merged


def _arms(question: Query) -> list[_Arm]:
    if not question.people:
        return [_Arm("", (), 0)]
    # What a person asked about in any role wrote comes before what they merged.
    return [
        _Arm(f" and {where}", tuple(args), int(role is Role.MERGER and person.role is Role.ANY))
        for person in question.people
        for role, where, args in person_conditions(person)
    ]


def listing(
    db: Database, repo: str, question: Query, limit: int, near: TimeRange | None
) -> tuple[list[Hit], int | None]:
    """PRs by time and people only: newest first, or nearest to `near` when the time was relaxed away."""
    if not question.has_filters and near is None:
        return [], 0
    bounds, bound_args = time_bounds(repo, *span(question))
    kept, kept_args = kept_condition(question)
    if kept:
        bounds, bound_args = f"{bounds} and {kept}", [*bound_args, *kept_args]
    arms = [(f"{bounds}{arm.where}", [*bound_args, *arm.args], arm.rank) for arm in _arms(question)]
    total = _count(db, [(where, args) for where, args, _ in arms])
    if not total:
        return [], 0
    found: list[tuple[Any, dict[str, Any]]] = []
    for where, args, rank in arms:
        if near is None:
            cursor = db.execute(f"select * from prs where {where} order by merged_at desc, number desc limit ?", [*args, limit])
            found.extend(((rank, -from_utc_text(row["merged_at"]).timestamp(), -row["number"]), row) for row in rows_of(cursor))
            continue
        for edge, bound, direction in ((near.start, "<", "desc"), (near.end, ">=", "asc")):
            if edge is None:
                continue
            cursor = db.execute(
                f"select * from prs where {where} and merged_at {bound} ? order by merged_at {direction} limit ?",
                [*args, to_utc_text(edge), limit],
            )
            found.extend((abs((from_utc_text(row["merged_at"]) - edge).total_seconds()), row) for row in rows_of(cursor))
    found.sort(key=lambda item: item[0])
    hits: dict[int, Hit] = {}
    for _, row in found:
        hits.setdefault(row["id"], Hit(pr_from_row(row), 0.0))
    return list(hits.values())[:limit], total


def _count(db: Database, arms: list[tuple[str, list[Any]]]) -> int:
    """How many PRs the arms hold together, up to COUNT_CAP; each arm is counted on its own index first."""
    counts = [
        db.execute(f"select count(*) from (select 1 from prs where {where} limit ?)", [*args, COUNT_CAP]).fetchone()[0]
        for where, args in arms
    ]
    if len(arms) == 1 or max(counts) >= COUNT_CAP:
        return max(counts)
    # Arms overlap (a PR its own author merged): count the union, at most len(arms) * COUNT_CAP rows.
    union = " union ".join(f"select id from prs where {where}" for where, _ in arms)
    return db.execute(f"select count(*) from ({union})", [a for _, args in arms for a in args]).fetchone()[0]
