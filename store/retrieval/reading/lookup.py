"""What the question reader may ask the store."""
from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Lookup(Protocol):
    """What the parser may ask the store: is this word a person, is this number a PR, did any PR merge then."""

    def login(self, name: str) -> str | None: ...

    def full_name(self, first: str, last: str) -> str | None: ...

    def is_pr(self, number: int) -> bool: ...

    def is_path(self, fragment: str) -> bool: ...

    def says(self, word: str) -> bool: ...

    def merged_between(self, start: datetime, end: datetime) -> bool: ...
