"""Model summaries in the store: which PRs need one, writing one whole, and marking a retry."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from store.days import from_utc_text, local_day, now_text, range_bounds, to_utc_text
from store.db import write_transaction
from store.model import PullRequest, Summary
from store.tables.model_calls import ModelCall, record_calls
from store.tables.prs import pr_from_row, summary_record
from store.text.errors import one_line

# A PR needs a model summary when it has none of its own kind for this model and
# prompt version, or the last attempt failed. Imported summaries were written by a
# model with the whole diff at hand; they are kept unless a summary is forced.
_NEEDS = (
    "(summary_source is null or summary_source = 'extractive' or summary_retry is not null"
    " or (summary_source like 'model:%' and (summary_source != :source or coalesce(summary_prompt, '') != :prompt)))"
)


def model_source(model: str) -> str:
    return f"model:{model}"


def prs_needing_summary(
    db: Database, repo: str, model: str, prompt: str, start: datetime | None = None, end: datetime | None = None
) -> list[PullRequest]:
    """PRs of `repo` (merged in [start, end) if given) without a current model summary, oldest first."""
    where = f"repo = :repo and {_NEEDS}"
    args: dict[str, Any] = {"repo": repo, "source": model_source(model), "prompt": prompt}
    if start and end:
        where += " and merged_at >= :start and merged_at < :end"
        args.update(start=to_utc_text(start), end=to_utc_text(end))
    return [pr_from_row(row) for row in db["prs"].rows_where(where, args, order_by="merged_at, number")]


def summary_need(db: Database, pr: PullRequest, model: str, prompt: str, max_failures: int) -> str:
    """"needed" when `pr` lacks a current model summary; "given up" when it also failed
    `max_failures` times since its last good one (only a forced run tries again); else "current"."""
    row = db.execute(
        f"select {_NEEDS}, coalesce(summary_failures, 0) from prs where repo = :repo and number = :number",
        {"repo": pr.repo, "number": pr.number, "source": model_source(model), "prompt": prompt},
    ).fetchone()
    if row is None or not row[0]:
        return "current"
    return "given up" if row[1] >= max_failures else "needed"


def save_model_summary(
    db: Database, pr: PullRequest, pr_type: str, summary: Summary, prompt: str, calls: list[ModelCall]
) -> None:
    """Store a complete model summary and its calls in one transaction; clears any retry mark and failure count.
    The summary is kept with its secrets masked: a model may repeat a key or token it saw."""
    now = now_text()
    summary = summary_record(summary)
    with write_transaction(db):
        db.execute(
            "update prs set type = ?, what_changed = ?, impact = ?, risks = ?, insights = ?, summary_source = ?,"
            " summary_prompt = ?, summarized_at = ?, summary_retry = null, summary_failures = null, updated_at = ?"
            " where repo = ? and number = ?",
            [pr_type, summary.what_changed, summary.impact, summary.risks, summary.insights, summary.source,
             prompt, now, now, pr.repo, pr.number],
        )
        record_calls(
            db, calls, model=summary.source.removeprefix("model:"), purpose="summary", prompt=prompt,
            repo=pr.repo, number=pr.number,
        )


def mark_for_retry(
    db: Database, pr: PullRequest, reason: str, model: str, prompt: str, calls: list[ModelCall],
    fallback: Summary, counts: bool = True,
) -> None:
    """Keep the PR's summary (or store `fallback` when it has none), note why, and record the calls.

    `counts` is False for failures of the server rather than of this PR (down, overloaded,
    rate-limited): those do not bring the PR closer to the failure cap.
    """
    now = now_text()
    fallback = summary_record(fallback)
    with write_transaction(db):
        db.execute(
            "update prs set what_changed = ?, impact = ?, risks = ?, insights = ?, summary_source = ?,"
            " updated_at = ? where repo = ? and number = ? and summary_source is null",
            [fallback.what_changed, fallback.impact, fallback.risks, fallback.insights, fallback.source,
             now, pr.repo, pr.number],
        )
        db.execute(
            "update prs set summary_retry = ?, summary_failures = coalesce(summary_failures, 0) + ?"
            " where repo = ? and number = ?",
            [one_line(reason, limit=2000), int(counts), pr.repo, pr.number],
        )
        record_calls(db, calls, model=model, purpose="summary", prompt=prompt, repo=pr.repo, number=pr.number)


# ---------------------------------------------------------------- stats


@dataclass
class DayCost:
    day: date
    calls: int = 0
    failed: int = 0
    prs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0


@dataclass
class Waiting:
    """A PR whose last model attempt failed."""

    number: int
    reason: str
    failures: int  # attempts that failed for this PR itself, since its last good summary


@dataclass
class SummaryStats:
    repo: str
    total: int
    by_source: dict[str, int]
    waiting: list[Waiting]
    missing: int | None  # PRs without a current model summary, not counting those waiting; None without a model
    days: list[DayCost] = field(default_factory=list)  # summary calls
    answers: list[DayCost] = field(default_factory=list)  # answer calls (questions asked with a model)


def summary_stats(
    db: Database, repo: str, tz: ZoneInfo, last_day: date, days: int, model: str | None, prompt: str
) -> SummaryStats:
    total = db.execute("select count(*) from prs where repo = ?", [repo]).fetchone()[0]
    by_source = dict(
        db.execute(
            "select coalesce(summary_source, 'none'), count(*) from prs where repo = ? group by 1 order by 2 desc",
            [repo],
        ).fetchall()
    )
    waiting = [
        Waiting(number, reason, failures or 0)
        for number, reason, failures in db.execute(
            "select number, summary_retry, summary_failures from prs where repo = ? and summary_retry is not null"
            " order by merged_at",
            [repo],
        )
    ]
    missing = None
    if model:
        missing = db.execute(
            f"select count(*) from prs where repo = :repo and summary_retry is null and {_NEEDS}",
            {"repo": repo, "source": model_source(model), "prompt": prompt},
        ).fetchone()[0]
    return SummaryStats(
        repo, total, by_source, waiting, missing,
        _day_costs(db, repo, tz, last_day, days, "summary"), _day_costs(db, repo, tz, last_day, days, "answer"),
    )


def _day_costs(db: Database, repo: str, tz: ZoneInfo, last_day: date, days: int, purpose: str) -> list[DayCost]:
    first_day = last_day - timedelta(days=days - 1)
    start, end = range_bounds(first_day, last_day, tz)
    costs = {first_day + timedelta(days=i): DayCost(first_day + timedelta(days=i)) for i in range(days)}
    prs: dict[date, set[int]] = {day: set() for day in costs}
    rows = db.execute(
        "select at, outcome, tokens_in, tokens_out, reasoning_tokens, number from model_calls"
        " where at >= ? and at < ? and (repo = ? or repo is null) and purpose = ?",
        [to_utc_text(start), to_utc_text(end), repo, purpose],
    )
    for at, outcome, tokens_in, tokens_out, reasoning_tokens, number in rows:
        day = local_day(from_utc_text(at), tz)
        cost = costs[day]
        cost.calls += 1
        cost.failed += outcome != "ok"
        cost.tokens_in += tokens_in or 0
        cost.tokens_out += tokens_out or 0
        cost.reasoning_tokens += reasoning_tokens or 0
        if number is not None:
            prs[day].add(number)
    for day, numbers in prs.items():
        costs[day].prs = len(numbers)
    return list(costs.values())
