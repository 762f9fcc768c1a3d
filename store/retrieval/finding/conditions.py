"""The SQL conditions a question keeps to: its time, people, paths, type, who it leaves out, and the earlier answer
it picks among. Every value is bound, never written into the SQL."""
from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from store.days import to_utc_text
from store.retrieval.reading.query import BOTS, Person, Query, Role
from store.tables.prs import first_id

# CROSS JOIN keeps FTS as the outer loop: bm25 needs the FTS cursor to drive.
FTS_JOIN = "prs_fts cross join prs on prs.id = prs_fts.rowid"


def span(question: Query) -> tuple[datetime | None, datetime | None]:
    return (question.time.start, question.time.end) if question.time else (None, None)


def time_bounds(repo: str, start: datetime | None, end: datetime | None, table: str = "") -> tuple[str, list[Any]]:
    where, args = [f"{table}repo = ?"], [repo]
    if start is not None:
        where.append(f"{table}merged_at >= ?")
        args.append(to_utc_text(start))
    if end is not None:
        where.append(f"{table}merged_at < ?")
        args.append(to_utc_text(end))
    return " and ".join(where), args


def narrowing_condition(question: Query) -> tuple[str, list[str]]:
    """The people, paths, type and people left out that a question keeps to, as one SQL condition on `prs`."""
    return _all_of(people_condition(question), kept_condition(question))


def kept_condition(question: Query) -> tuple[str, list[str]]:
    """Everything a question keeps to but time and people: paths, the type asked, the people it leaves out, and the
    earlier answer it picks among."""
    return _all_of(path_condition(question), type_condition(question), left_out_condition(question), within_condition(question))


def within_condition(question: Query) -> tuple[str, list[str]]:
    """Among the PRs a follow-up picks from ("which of those …"), and not those it asks beside ("what else …")."""
    return _all_of(
        ("prs.number in (select value from json_each(?))", [json.dumps(question.within)]) if question.within else ("", []),
        ("prs.number not in (select value from json_each(?))", [json.dumps(question.besides)]) if question.besides else ("", []),
    )


def _all_of(*conditions: tuple[str, list[str]]) -> tuple[str, list[str]]:
    parts = [part for part in conditions if part[0]]
    return " and ".join(where for where, _ in parts), [arg for _, args in parts for arg in args]


def type_condition(question: Query) -> tuple[str, list[str]]:
    return ("prs.type = ?", [question.pr_type]) if question.pr_type else ("", [])


def left_out_condition(question: Query) -> tuple[str, list[str]]:
    """Neither author nor merger is a person the question leaves out ("besides vllm-bot"), or a bot when it leaves bots
    out; only the author or the merger when it leaves them out in one role ("not from bots", "not merged by x")."""
    logins = [login for login in question.excluded if login != BOTS]
    where: list[str] = []
    args: list[str] = []
    for role, column in ((Role.AUTHOR, "lower(prs.author)"), (Role.MERGER, "lower(coalesce(prs.merged_by, ''))")):
        if question.excluded_role not in (Role.ANY, role):
            continue
        if logins:
            where.append(f"{column} not in ({', '.join('?' for _ in logins)})")
            args.extend(logins)
        if BOTS in question.excluded:
            where.append(f"not {_is_bot(column)}")
    return " and ".join(where), args


def _is_bot(column: str) -> str:
    """store.retrieval.reading.query.is_bot, in SQL, of a lowercased login column."""
    return f"({column} like '%[bot]' or {column} like '%-bot' or {column} like '%\\_bot' escape '\\' or {column} = 'bot')"


def path_condition(question: Query) -> tuple[str, list[str]]:
    """A changed file's path holds one of the paths asked about (a folder, a file, a part of either), and none
    holds a path the question leaves out."""
    return _all_of(_files_holding(question.paths, ""), _files_holding(question.excluded_paths, "not "))


def _files_holding(paths: Sequence[str], negation: str) -> tuple[str, list[str]]:
    if not paths:
        return "", []
    either = " or ".join("instr(lower(value), ?) > 0" for _ in paths)
    return f"{negation}exists (select 1 from json_each(prs.files) where {either})", list(paths)


def people_condition(question: Query) -> tuple[str, list[str]]:
    either, args = [], []
    for person in question.people:
        for _, where, person_args in person_conditions(person):
            either.append(where)
            args.extend(person_args)
    return ("(" + " or ".join(either) + ")" if either else ""), args


def person_conditions(person: Person) -> list[tuple[Role, str, list[str]]]:
    """For each role a person is asked in: the role, and the SQL condition that a PR's login in it is theirs."""
    conditions: list[tuple[Role, str, list[str]]] = []
    for role, column in ((Role.AUTHOR, "prs.author"), (Role.MERGER, "prs.merged_by")):
        if person.role not in (Role.ANY, role):
            continue
        if person.login == BOTS:
            conditions.append((role, _is_bot(f"lower(coalesce({column}, ''))"), []))
        else:
            conditions.append((role, f"{column} = ? collate nocase", [person.login]))
    return conditions


def rowid_range(column: str, start: datetime | None, end: datetime | None) -> str:
    """Bounds on FTS5 rowids for PRs merged in [start, end); ids are integers of ours, never user text."""
    lower = f" and {column} >= {first_id(start)}" if start is not None else ""
    upper = f" and {column} < {first_id(end)}" if end is not None else ""
    return lower + upper
