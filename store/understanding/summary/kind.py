"""Trivial or substantial, decided from what changed; the size only breaks ties.

Kernels, model code, public APIs and defaults are substantial. Documentation, typos, CI
configuration and test-only changes are trivial. A revert is always substantial: it undoes
something that was judged worth merging.
"""
from __future__ import annotations

import re

from store.model import PullRequest
from store.text.patterns import LazyPattern
from store.text.prose import plural
from store.understanding.areas import title_tags
from store.understanding.paths import kinds
from store.understanding.summary.titles import is_revert

_COSMETIC = LazyPattern(
    r"\b(?:typos?|spelling|misspell\w*|grammar|wording|nits?|cosmetic|whitespace|formatting|"
    r"type hints?|typing|annotations?|docstrings?|comments?|lint\w*)\b",
    re.I,
)
_MINOR = LazyPattern(r"\[minor\]|\b(?:redundant|unused|dead code|clean ?up|cleanups)\b", re.I)
# Words that make a small change matter: something was broken, slow, unsafe or a default moves.
_MATTERS = LazyPattern(r"\b(?:fix\w*|bug\w*|revert|security|cve|perf\w*|crash\w*|leak|regression|defaults?)\b", re.I)
# Files whose change is product behaviour, whatever the size.
_PRODUCT = frozenset({"source", "kernel", "config", "build"})
# CI files beside tests mark a CI fix, which the reports judge as substantial work.
_TEST_ONLY = frozenset({"test", "docs", "meta"})
# Below these sizes a support-only or cosmetic change reads as trivial; above, it is work worth reading about.
TEST_ONLY_LINES = 200
SMALL_LINES = 100
TINY_LINES = 2


def _lines(pr: PullRequest) -> int | None:
    if pr.additions is None or pr.deletions is None:
        return None
    return pr.additions + pr.deletions


def _small(pr: PullRequest, lines: int, files: int) -> bool:
    """Within `lines` changed lines, or `files` files where the size is unknown (imported reports)."""
    size = _lines(pr)
    return size <= lines if size is not None else pr.file_count <= files


def _support_only(pr: PullRequest, changed: set[str]) -> str | None:
    if not pr.files:
        return None
    if changed <= {"docs", "meta"}:
        return "it only changes documentation" if "docs" in changed else "it only changes repository metadata"
    if changed <= {"ci", "meta"}:
        return "it only changes CI configuration"
    if "test" in changed and changed <= _TEST_ONLY and _small(pr, TEST_ONLY_LINES, 4):
        return "it only changes tests"
    if "doc" in title_tags(pr.title) and not changed & {"source", "kernel", "build"}:
        return "it only changes documentation"
    return None


def _cosmetic(pr: PullRequest, changed: set[str]) -> str | None:
    if _MINOR.search(pr.title) and _small(pr, SMALL_LINES, 4) and not changed & {"kernel", "build"}:
        return "it is a minor clean-up"
    if _COSMETIC.search(pr.title) and _small(pr, SMALL_LINES, 3):
        return "it only touches typos, wording or type hints"
    return None


def _tiny(pr: PullRequest, changed: set[str]) -> str | None:
    lines = _lines(pr)
    if lines is not None and lines <= TINY_LINES and not changed & (_PRODUCT - {"source"}) and not _MATTERS.search(pr.title):
        return f"its diff is {plural(lines, 'line')}"
    return None


def trivial_reason(pr: PullRequest) -> str | None:
    """Why a PR is trivial ("it only changes documentation"), or None when it is substantial."""
    if is_revert(pr):
        return None
    changed = set(kinds(pr.files))
    return _support_only(pr, changed) or _cosmetic(pr, changed) or _tiny(pr, changed)


def classify_type(pr: PullRequest) -> str:
    """ "trivial" for docs, metadata, CI, tests-only, typo and tiny changes; otherwise "substantial"."""
    return "trivial" if trivial_reason(pr) else "substantial"
