"""FTS5 query text built from what people typed: every phrase quoted, so user words never reach FTS unquoted."""
from __future__ import annotations

from collections.abc import Iterable

from sqlite_utils import Database


def quoted(text: str) -> str:
    """A phrase as an FTS5 string."""
    return '"' + text.replace('"', '""') + '"'


def any_of(phrases: Iterable[str]) -> str:
    """Any of the phrases, as one FTS5 expression."""
    return "(" + " OR ".join(quoted(p) for p in dict.fromkeys(phrases)) + ")"


def store_size(db: Database) -> int:
    """How many PRs the FTS index holds, read from its "averages" record (row 1 of its data) instead of counted."""
    row = db.execute("select block from prs_fts_data where id = 1").fetchone()
    return _varint(row[0]) if row and row[0] else 0


def _varint(data: bytes) -> int:
    """The SQLite varint at the start of `data`: 7 bits a byte, high bit set on all but the last; a 9th byte is whole."""
    value = 0
    for position, byte in enumerate(data[:9]):
        if position == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value
