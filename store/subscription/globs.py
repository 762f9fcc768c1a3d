"""Path globs as `path:` filter terms read them, matched against a PR's changed files.

A glob matches a path from the repository's root, one folder level at a time:
`*` is any run of characters within a level (none included), `?` one character
within a level, and `**` as a whole level any number of levels (none included):
`docs/**`, `**/*.md`, `vllm/**/rocm*.py`. A glob that matches a folder a file
is in matches the file too, so `path:docs` is `path:docs/**`.

Matching walks the levels and compares each with a two-pointer wildcard match,
so no glob, however many stars it holds, costs more than its length times the
path's: there is no regex to backtrack.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

DOUBLE_STAR = "**"


def normalize_glob(text: str) -> str:
    """The glob as it is kept and printed: no leading `/` or `./`, no empty or trailing level."""
    parts = [part for part in text.strip().split("/") if part and part != "."]
    return "/".join(parts)


@dataclass(frozen=True)
class Glob:
    text: str  # normalized

    @cached_property
    def levels(self) -> tuple[str, ...]:
        return tuple(self.text.split("/"))

    def matches(self, path: str) -> bool:
        """Whether the glob matches `path` or one of the folders it is in."""
        parts = [part for part in path.split("/") if part]
        reached = {0}  # how many of the path's levels the glob's levels so far can cover
        for level in self.levels:
            if level == DOUBLE_STAR:
                reached = set(range(min(reached), len(parts) + 1))
            else:
                reached = {n + 1 for n in reached if n < len(parts) and matches_level(level, parts[n])}
            if not reached:
                return False
        return bool(reached - {0})


def matches_level(pattern: str, name: str) -> bool:
    """`*` and `?` within one level of a path; any other character stands for itself."""
    p = n = 0
    star, resume = -1, 0  # the last `*` seen, and where in `name` it last stopped matching
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p, n
            p += 1
        elif p < len(pattern) and pattern[p] in ("?", name[n]):
            p += 1
            n += 1
        elif star >= 0:  # let the last star take one more character, and try again after it
            resume += 1
            p, n = star + 1, resume
        else:
            return False
    return all(char == "*" for char in pattern[p:])
