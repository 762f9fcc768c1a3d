"""Errors as one line for a person: what a server or library said, folded and bounded."""
from __future__ import annotations

from store.text.safe import neutralize

MAX_CHARS = 300


def one_line(value: object, limit: int = MAX_CHARS) -> str:
    """`value`'s text on one line, at most `limit` characters, with no secret (a server may echo its key)
    and nothing that drives a terminal: every error is both stored and printed."""
    return neutralize(" ".join(str(value).split()))[:limit]
