"""Regexes compiled on first use.

A command imports most modules and then runs few of their patterns, so
compiling every pattern at import was much of the time a command took to start.
"""
from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """Stands for `re.compile(source, flags)`, compiled when a method or attribute is first used."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Reached once per name: the compiled pattern's attribute then sits on this object.
        value = getattr(re.compile(self._source, self._flags), name)
        setattr(self, name, value)
        return value
