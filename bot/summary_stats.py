"""`prdigest stats`: how the store's PRs are summarized and what the model cost, per day."""
from __future__ import annotations

from typing import Any

from bot.config import Settings
from bot.llm import unconfigured_reason
from bot.prompt import PROMPT_VERSION
from store.summaries import SummaryStats


def stats_text(stats: SummaryStats, settings: Settings) -> str:
    lines = [f"{stats.repo}: {stats.total:,} merged PRs in the store"]
    if stats.by_source:
        lines.append("Summaries: " + ", ".join(f"{count:,} {source}" for source, count in stats.by_source.items()))
    reason = unconfigured_reason(settings)
    if reason:
        lines.append(f"Model: none, new PRs get extractive summaries ({reason})")
    else:
        lines.append(
            f"Model: {settings.model} (prompt {PROMPT_VERSION}): {stats.missing:,} PRs not yet summarized, "
            f"{len(stats.waiting):,} waiting for a retry"
        )
    tz = settings.timezone.key
    lines += [f"Model calls per day ({tz}):", _row("day", "PRs", "calls", "failed", "tokens in", "tokens out")]
    for cost in stats.days:
        lines.append(_row(cost.day.isoformat(), cost.prs, cost.calls, cost.failed, cost.tokens_in, cost.tokens_out))
    prs, tokens_in, tokens_out = (sum(getattr(cost, name) for cost in stats.days) for name in ("prs", "tokens_in", "tokens_out"))
    calls, failed = sum(c.calls for c in stats.days), sum(c.failed for c in stats.days)
    lines.append(_row(f"last {len(stats.days)} days", prs, calls, failed, tokens_in, tokens_out))
    if prs:
        lines.append(f"Per summarized PR: {tokens_in // prs:,} tokens in, {tokens_out // prs:,} out")
    if stats.waiting:
        lines.append("Waiting for a retry (prdigest summarize --missing):")
        lines += [f"  #{number}  {reason}" for number, reason in stats.waiting]
    return "\n".join(lines)


def _row(day: str, *values: Any) -> str:
    cells = [f"{value:,}" if isinstance(value, int) else str(value) for value in values]
    return f"  {day:<14}" + "".join(f"{cell:>12}" for cell in cells)


def stats_json(stats: SummaryStats, settings: Settings) -> dict[str, Any]:
    return {
        "repo": stats.repo,
        "prs": stats.total,
        "by_source": stats.by_source,
        "model": None if unconfigured_reason(settings) else settings.model,
        "prompt_version": PROMPT_VERSION,
        "not_yet_summarized": stats.missing,
        "waiting_for_retry": [{"number": number, "reason": reason} for number, reason in stats.waiting],
        "days": [
            {"day": c.day.isoformat(), "prs": c.prs, "calls": c.calls, "failed": c.failed,
             "tokens_in": c.tokens_in, "tokens_out": c.tokens_out}
            for c in stats.days
        ],
    }
