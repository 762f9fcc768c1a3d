"""Errors as one line for a person: what a server or library said, folded and bounded."""
from __future__ import annotations

MAX_CHARS = 300


def one_line(value: object, limit: int = MAX_CHARS) -> str:
    """`value`'s text on one line, at most `limit` characters."""
    return " ".join(str(value).split())[:limit]
