"""Which model servers take a JSON schema for the reply (`response_format` json_schema), per (base URL, model).

Remembered so that a server which refuses it costs one refused call, not one per PR.
A refusal is checked again after a while: servers get upgraded.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlite_utils import Database

from store.days import now_text, to_utc_text
from store.db import write_transaction

RECHECK_AFTER = timedelta(days=7)


def json_schema_support(db: Database, base_url: str, model: str, now: datetime | None = None) -> bool | None:
    """True when the server took a schema, False when it refused one recently, None when not known."""
    row = db.execute(
        "select accepted, checked_at from structured_output where base_url = ? and model = ?", [base_url, model]
    ).fetchone()
    if row is None:
        return None
    accepted, checked_at = row
    if not accepted and checked_at < to_utc_text((now or datetime.now(UTC)) - RECHECK_AFTER):
        return None
    return bool(accepted)


def remember_json_schema(db: Database, base_url: str, model: str, accepted: bool, note: str | None = None) -> None:
    """Record what the server did with a schema; `note` is its refusal, in one line."""
    with write_transaction(db):
        db.table("structured_output").upsert(
            {"base_url": base_url, "model": model, "accepted": int(accepted), "note": note, "checked_at": now_text()},
            pk=("base_url", "model"),
        )
