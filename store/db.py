"""Opening the SQLite store: one place that sets the pragmas and applies migrations, and one way to write."""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

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


class StoreMissing(StoreError):
    """A command that only reads was pointed at a store that does not exist (a mistyped --db, say)."""


class StoreReadOnly(StoreError):
    """The store may be read but not written: the message names it."""


class StoreFull(StoreError):
    """The disk holding the store has no room for what was written: the message names the store."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            f"the disk holding the store {path} is full: free some space on it, "
            "or choose another store with --db"
        )


def open_db(path: str | Path, busy_timeout: float = BUSY_TIMEOUT_SECONDS, create: bool = True) -> sqlite_utils.Database:
    """Open the store at `path`, in WAL mode, fully migrated; created when missing if `create`.

    A store whose file or folder prdigest may not write is opened read-only: it
    can be read, and every write is refused with StoreReadOnly naming it.
    """
    path = Path(path)
    try:
        if not path.exists():
            if not create:
                raise StoreMissing(
                    f"there is no store at {path}: check --db and PRDIGEST_DB, "
                    "or fill one with `prdigest import …` or `prdigest ingest …`"
                )
            _create_private(path)
        if not _writable(path):
            return _open_read_only(path, busy_timeout)
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
        if _disk_full(exc, path.parent):
            raise StoreFull(path) from exc
        raise StoreError(f"cannot open store {path}: {exc}") from exc
    return db


# SQLite says "disk I/O error" when a full disk leaves no room for the WAL's -shm file; with this little
# room left on the disk, that is what happened.
_NEARLY_FULL_BYTES = 64 * 1024


def _disk_full(exc: BaseException, folder: Path) -> bool:
    """Whether `exc` says that the disk holding `folder` has no room left."""
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOSPC
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return False
    if code & 0xFF == sqlite3.SQLITE_FULL:
        return True
    try:
        return code & 0xFF == sqlite3.SQLITE_IOERR and shutil.disk_usage(folder).free < _NEARLY_FULL_BYTES
    except OSError:
        return False


class ReadOnlyDatabase(sqlite_utils.Database):
    """A store opened read-only; `path` names it when a write is refused."""

    path: Path


def _writable(path: Path) -> bool:
    """Whether prdigest may write the store's file and its folder (SQLite writes -wal and -shm beside it).

    A file or folder with no write permission for anyone counts as read-only even
    for root, who could write it: its owner made it so."""
    return all(os.access(place, os.W_OK) and place.stat().st_mode & 0o222 for place in (path, path.parent))


def _open_read_only(path: Path, busy_timeout: float) -> ReadOnlyDatabase:
    """The store opened for reading only; a store that needs migrating cannot be read by this version."""
    uri = f"file:{quote(str(path.resolve()))}"
    try:
        conn = _readable(sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=busy_timeout, check_same_thread=False))
    except sqlite3.OperationalError:
        # Readers of a WAL store need its -shm file; where SQLite may not create it, only immutable reads remain.
        conn = _readable(sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False))
    db = ReadOnlyDatabase(conn, execute_plugins=False)
    db.path = path
    if migrations.pending(db):
        raise StoreReadOnly(
            f"the store at {path} is read-only: it was made by an older prdigest and must be upgraded "
            "once by a command that may write to it"
        )
    return db


def _readable(conn: sqlite3.Connection) -> sqlite3.Connection:
    """`conn`, once a first read went through (SQLite opens files lazily); closed if it did not."""
    try:
        conn.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


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
    if isinstance(db, ReadOnlyDatabase):
        raise StoreReadOnly(
            f"the store at {db.path} is read-only: this needs to write to it; "
            "make the file and its folder writable, or choose another store with --db"
        )
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
        db.execute("COMMIT")
    except BaseException as exc:
        db.rollback()
        if isinstance(exc, sqlite3.Error):
            path = _file_of(db)
            if _disk_full(exc, path.parent):
                raise StoreFull(path) from exc
        raise


@dataclass(frozen=True)
class Copy:
    """A backup as written: its size in bytes, and how many PRs it holds."""

    size: int
    prs: int


def back_up(db: sqlite_utils.Database, target: Path) -> Copy:
    """A consistent copy of the store at `target`, made while other processes write to it.

    SQLite's online backup copies every page in one step, inside one read transaction: in WAL mode writers
    go on meanwhile, and the copy is the store as of one moment. The copy is written beside `target` (0600,
    as the store), checked with integrity_check, made a journal-mode-delete file that needs no -wal beside
    it, and only then renamed over `target`; a failure leaves `target` as it was.
    """
    source = _file_of(db)
    if target.resolve() == source.resolve():
        raise StoreError(f"{target} is the store itself: give the backup another path")
    if not target.parent.is_dir():
        raise StoreError(f"cannot back up to {target}: the folder {target.parent} does not exist")
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        copy = sqlite3.connect(str(partial))
        try:
            db.conn.backup(copy)  # pages=-1: the whole store in one step
            copy.execute("pragma journal_mode = delete")
            problems = [row[0] for row in copy.execute("pragma integrity_check")]
            prs = copy.execute("select count(*) from prs").fetchone()[0]
        finally:
            copy.close()
        if problems != ["ok"]:
            raise StoreError(f"the copy of {source} failed integrity_check: {'; '.join(problems[:3])}")
        with open(partial, "rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
    except (sqlite3.Error, OSError) as exc:
        if _disk_full(exc, target.parent):
            raise StoreError(f"the disk holding {target} is full: free some space on it, or back up elsewhere") from exc
        raise StoreError(f"cannot back up {source} to {target}: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return Copy(target.stat().st_size, prs)


def _file_of(db: sqlite_utils.Database) -> Path:
    """The file of the store `db` is connected to."""
    return Path(db.execute("pragma database_list").fetchone()[2])


def _busy_timeout(db: sqlite_utils.Database) -> float:
    return db.execute("pragma busy_timeout").fetchone()[0] / 1000
