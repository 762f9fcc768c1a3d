"""`prdigest stats`: how the store's PRs are summarized and what the model cost, per day."""
from __future__ import annotations

from typing import Any

from bot.config import Settings
from bot.model.client import unconfigured_reason
from bot.model.prompt import PROMPT_VERSION
from store.tables.summaries import SummaryStats, Waiting
from store.text.prose import plural


def stats_text(stats: SummaryStats, settings: Settings) -> str:
    retrying, given_up = _split(stats.waiting, settings)
    lines = []
    if stats.by_source:  # what the store holds is said above, for every repository
        lines.append(f"Summaries of {stats.repo}: " + ", ".join(f"{count:,} {source}" for source, count in stats.by_source.items()))
    reason = unconfigured_reason(settings)
    if reason:
        lines.append(f"Model: none, new PRs get extractive summaries ({reason})")
    else:
        lines.append(
            f"Model: {settings.model} (prompt {PROMPT_VERSION}): {stats.missing:,} PRs not yet summarized, "
            f"{len(retrying):,} waiting for a retry, {len(given_up):,} given up"
        )
    tz = settings.timezone.key
    totals = {name: sum(getattr(cost, name) for cost in stats.days) for name in _COLUMNS}
    if totals["calls"]:
        lines += [f"Model calls per day ({tz}):", _row("day", "PRs", "calls", "failed", "tokens in", "tokens out", "reasoning")]
        for cost in stats.days:
            lines.append(_row(cost.day.isoformat(), *(getattr(cost, name) for name in _COLUMNS)))
        lines.append(_row(f"last {len(stats.days)} days", *totals.values()))
    else:  # a table of zeros says less than one line
        lines.append(f"Model calls: none in the last {plural(len(stats.days), 'day')}.")
    if totals["prs"]:
        prs = totals["prs"]
        lines.append(f"Per summarized PR: {totals['tokens_in'] // prs:,} tokens in, {totals['tokens_out'] // prs:,} out")
    if any(cost.calls for cost in stats.answers):
        lines += [f"Answers with the model per day ({tz}):", _row("day", "calls", "failed", "tokens in", "tokens out", "reasoning")]
        for cost in stats.answers:
            lines.append(_row(cost.day.isoformat(), *(getattr(cost, name) for name in _COLUMNS[1:])))
        lines.append(_row(f"last {len(stats.answers)} days", *(sum(getattr(c, name) for c in stats.answers) for name in _COLUMNS[1:])))
    else:
        lines.append(f"Answers with the model: none in the last {plural(len(stats.answers), 'day')}.")
    if retrying:
        lines.append("Waiting for a retry (prdigest summarize --missing):")
        lines += [f"  #{pr.number}  {pr.reason}" for pr in retrying]
    if given_up:
        lines.append(
            f"Given up after {settings.summary_max_failures} failures (prdigest summarize --pr N --force), last error:"
        )
        lines += [f"  #{pr.number}  {pr.reason}" for pr in given_up]
    return "\n".join(lines)


# DayCost's figures, in the order of the table's columns.
_COLUMNS = ("prs", "calls", "failed", "tokens_in", "tokens_out", "reasoning_tokens")


def _split(waiting: list[Waiting], settings: Settings) -> tuple[list[Waiting], list[Waiting]]:
    """The PRs `--missing` will retry, and those that failed too often for it to."""
    cap = settings.summary_max_failures
    return [pr for pr in waiting if pr.failures < cap], [pr for pr in waiting if pr.failures >= cap]


def _row(day: str, *values: Any) -> str:
    cells = [f"{value:,}" if isinstance(value, int) else str(value) for value in values]
    return f"  {day:<14}" + "".join(f"{cell:>12}" for cell in cells)


def stats_json(stats: SummaryStats, settings: Settings) -> dict[str, Any]:
    retrying, given_up = _split(stats.waiting, settings)
    return {
        "repo": stats.repo,
        "prs": stats.total,
        "by_source": stats.by_source,
        "model": None if unconfigured_reason(settings) else settings.model,
        "prompt_version": PROMPT_VERSION,
        "not_yet_summarized": stats.missing,
        "waiting_for_retry": [{"number": pr.number, "reason": pr.reason} for pr in retrying],
        "given_up": [{"number": pr.number, "failures": pr.failures, "last_error": pr.reason} for pr in given_up],
        "days": [{"day": c.day.isoformat(), **{name: getattr(c, name) for name in _COLUMNS}} for c in stats.days],
        "answers": [{"day": c.day.isoformat(), **{name: getattr(c, name) for name in _COLUMNS[1:]}} for c in stats.answers],
    }
