"""Signed Slack requests already handled, kept while they are fresh: one delivered again is handled once,
after a restart too, and by every process that shares the store."""
from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from store.db import StoreBusy, StoreError, open_db

# Signatures no longer fresh are deleted this often, so the table holds a few minutes of requests at most.
FORGET_EVERY = 60


class SignatureLedger:
    """The signatures, on a connection of its own that the request threads take turns at.

    Each write is one statement, its own transaction: SQLite takes the write lock
    for it at once, as BEGIN IMMEDIATE would, and a thread holds its turn for that
    one statement only (three, with BEGIN and COMMIT, each waiting for the
    interpreter again, made the turns queue up under a burst).

    Commits reach the WAL but are not flushed to disk one by one: a crash of the
    process loses none of them, a power cut at worst the last few, which lets those
    requests be handled once more. A flush per commit would cost every
    acknowledgement a disk write. The store's other connections keep their full sync.
    """

    def __init__(self, path: str | Path, wait: float) -> None:
        """`wait`: the longest a request waits for its turn, and then for another process's write to end."""
        self.db = open_db(path, wait)
        self.db.execute("pragma synchronous = normal")
        self.db.conn.isolation_level = None
        self.wait = wait
        self._lock = threading.Lock()
        self._forget_at = 0.0

    def first_delivery(self, signature: str, fresh_until: int) -> bool:
        """Record the signature of a request that stays fresh until `fresh_until` (unix seconds); False when it
        was recorded before. StoreError (StoreBusy when it waited too long) when it cannot be recorded."""
        if not self._lock.acquire(timeout=self.wait):
            raise StoreBusy(f"other requests held the store for over {self.wait:g}s")
        try:
            now = time.time()
            if now >= self._forget_at:
                self._forget_at = now + FORGET_EVERY
                self.db.execute("delete from signed_requests where fresh_until < ?", [int(now)])
            cursor = self.db.execute(
                "insert or ignore into signed_requests (signature, fresh_until) values (?, ?)", [signature, fresh_until]
            )
            return cursor.rowcount == 1
        except sqlite3.Error as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(f"the store is busy: another process held its write lock for over {self.wait:g}s") from None
            raise StoreError(f"cannot record a signed request in the store: {exc}") from None
        finally:
            self._lock.release()
