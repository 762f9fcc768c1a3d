"""Signed Slack requests already handled, kept while they are fresh: one delivered again is handled once,
after a restart too, and by every process that shares the store."""
from __future__ import annotations

from pathlib import Path

from sqlite_utils import Database

from store.db import open_db, write_transaction


def open_ledger(path: str | Path, busy_timeout: float) -> Database:
    """A connection of its own for recording signatures, one short write per request.

    Its commits reach the WAL but are not flushed to disk one by one: a crash of the
    process loses none of them, and a power cut at worst the last few, which lets
    those requests be handled once more. A flush per commit would cost every
    acknowledgement a disk write. Other connections keep their full sync.
    """
    db = open_db(path, busy_timeout)
    db.execute("pragma synchronous = normal")
    return db


def first_delivery(db: Database, signature: str, fresh_until: int, forget_before: int | None = None) -> bool:
    """Record the signature of a request that stays fresh until `fresh_until` (unix seconds); False when it was
    recorded before. With `forget_before`, the signatures no longer fresh at that time are deleted first."""
    with write_transaction(db):
        if forget_before is not None:
            db.execute("delete from signed_requests where fresh_until < ?", [forget_before])
        cursor = db.execute(
            "insert or ignore into signed_requests (signature, fresh_until) values (?, ?)", [signature, fresh_until]
        )
    return cursor.rowcount == 1
