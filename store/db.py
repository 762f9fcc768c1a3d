"""Opening the SQLite store: one place that sets the pragmas and applies migrations."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils

from store.schema import migrations

# Long enough to ride out an ingest transaction from another process, short
# enough that a Slack request still answers inside its window.
BUSY_TIMEOUT_SECONDS = 5.0


class StoreError(Exception):
    """The store cannot be opened or used; the message is one line for a person."""


def open_db(path: str | Path) -> sqlite_utils.Database:
    """Open (creating if needed) the store at `path`, in WAL mode, fully migrated."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # check_same_thread=False because Slack handlers run on a thread pool;
        # each caller still serialises its own use of a connection.
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False)
        db = sqlite_utils.Database(conn, execute_plugins=False)
        if db.journal_mode != "wal":
            db.enable_wal()
        migrations.apply(db)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise StoreError(f"cannot open store {path}: {exc}") from exc
    return db
