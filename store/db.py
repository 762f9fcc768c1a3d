"""Opening the SQLite store: one place that sets the pragmas and applies migrations, and one way to write."""
from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from store.migrations import migrations, rename_released
from store.understanding.relations import READER_VERSION, backfill_relations

# Long enough to ride out an import or ingest transaction of another process;
# PRDIGEST_BUSY_TIMEOUT changes it.
BUSY_TIMEOUT_SECONDS = 10.0


class StoreError(Exception):
    """The store cannot be opened or used; the message is one line for a person."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than the busy timeout."""


def open_db(path: str | Path, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> sqlite_utils.Database:
    """Open (creating if needed) the store at `path`, in WAL mode, fully migrated."""
    path = Path(path)
    try:
        _create_private(path)
        # check_same_thread=False because Slack handlers run on a thread pool;
        # each caller still serialises its own use of a connection.
        conn = sqlite3.connect(str(path), timeout=busy_timeout, check_same_thread=False)
        db = sqlite_utils.Database(conn, execute_plugins=False)
        if db.journal_mode != "wal":
            db.enable_wal()
        if migrations.pending(db) or _relations_version(db) != READER_VERSION:
            # Under the write lock: processes opening a new store together migrate it once.
            with write_transaction(db):
                _bring_up_to_date(db)
    except StoreError:
        raise
    except (sqlite3.DatabaseError, OSError) as exc:
        raise StoreError(f"cannot open store {path}: {exc}") from exc
    return db


def _create_private(path: Path) -> None:
    """The store's folder (0700) and file (0600), when missing: the store holds people's questions.
    Ones that exist keep the modes their owner gave them; SQLite gives its -wal and -shm files the store's."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):  # it exists, or another process created it a moment ago
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _bring_up_to_date(db: sqlite_utils.Database) -> None:
    """Apply pending migrations, and read every PR's relations again when the reader changed since."""
    rename_released(db)
    migrations.apply(db)
    if _relations_version(db) != READER_VERSION:
        backfill_relations(db)
        # The header's user version is otherwise unused: it records which reader wrote pr_relations.
        db.execute(f"pragma user_version = {READER_VERSION:d}")


def _relations_version(db: sqlite_utils.Database) -> int:
    return int(db.execute("pragma user_version").fetchone()[0])


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """A transaction that takes the write lock at its start, or a savepoint inside one already open.

    A deferred BEGIN reads first and fails at once with "database is locked"
    when it later needs to write after another process did; BEGIN IMMEDIATE
    waits for the lock (up to the busy timeout) before reading anything.
    """
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        seconds = _busy_timeout(db)
        raise StoreBusy(
            f"the store is busy: another process held its write lock for over {seconds:g}s "
            "(PRDIGEST_BUSY_TIMEOUT sets how long to wait); try again"
        ) from None
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    db.execute("COMMIT")


def _busy_timeout(db: sqlite_utils.Database) -> float:
    return db.execute("pragma busy_timeout").fetchone()[0] / 1000
