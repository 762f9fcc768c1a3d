"""The ledger of model calls (`model_calls`): what each call to a model cost, whatever it was for."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction
from store.text.errors import one_line


@dataclass
class ModelCall:
    outcome: str  # ok | unparsed | error
    tokens_in: int
    tokens_out: int  # reasoning included, as the APIs count completion tokens
    seconds: float
    error: str | None = None
    reasoning_tokens: int = 0


def record_calls(
    db: Database,
    calls: Iterable[ModelCall],
    *,
    model: str,
    purpose: str,
    prompt: str | None = None,
    repo: str | None = None,
    number: int | None = None,
) -> None:
    """Add calls to the ledger. `purpose` says what they were for (summary, answer); `number` is the PR, if one."""
    now = now_text()
    with write_transaction(db):
        db.table("model_calls").insert_all(
            {
                "at": now, "purpose": purpose, "model": model, "prompt_version": prompt, "repo": repo,
                "number": number, "outcome": call.outcome, "error": call.error and one_line(call.error, limit=2000), "tokens_in": call.tokens_in,
                "tokens_out": call.tokens_out, "reasoning_tokens": call.reasoning_tokens,
                "seconds": round(call.seconds, 3),
            }
            for call in calls
        )
