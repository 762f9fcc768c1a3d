"""What kind of file a changed path is: the signal behind trivial detection, risks and diff ordering."""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from store.text.patterns import LazyPattern

# Checked in order; the first kind whose pattern matches wins, so that
# tests/kernels/x.py is a test and requirements/docs.txt is build, not docs.
_KINDS: tuple[tuple[str, LazyPattern], ...] = tuple(
    (kind, LazyPattern(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("lock", r"(?:^|/)(?:[^/]+\.lock|package-lock\.json|pnpm-lock\.yaml)$"),
        ("meta", r"(?:^|/)(?:CODEOWNERS|\.gitignore|\.gitattributes|\.mailmap|\.dockerignore|LICENSE[^/]*|"
                 r"\.?typos\.toml|mergify\.ya?ml)$|^\.github/(?:ISSUE_TEMPLATE|PULL_REQUEST_TEMPLATE|[^/]+\.md$)"),
        ("test", r"(?:^|/)tests?/|(?:^|/)test_[^/]*$|_test\.py$|(?:^|/)conftest\.py$"),
        ("build", r"(?:^|/)requirements[^/]*(?:/|\.txt$|\.in$)|(?:^|/)(?:setup\.py|setup\.cfg|pyproject\.toml|"
                  r"CMakeLists\.txt|Dockerfile[^/]*)$|^cmake/|^docker/|\.cmake$"),
        ("docs", r"^docs?/|^examples/|\.(?:md|rst|txt|ipynb)$"),
        ("ci", r"^\.buildkite/|^\.github/|^\.circleci/|^\.gitlab-ci|(?:^|/)\.pre-commit-config\.yaml$|"
               r"^tools/pre_commit/"),
        ("bench", r"(?:^|/)benchmarks?/"),
        ("kernel", r"^csrc/|\.(?:cu|cuh|hip|cpp|cc|cxx|c|h|hpp)$|(?:^|/)(?:kernels?|ops)/|triton"),
        ("config", r"(?:^|/)envs?\.py$|(?:^|/)config/|(?:^|/)configs?\.py$|\.env$"),
        ("data", r"\.(?:json|jsonl|csv|ya?ml|toml|safetensors|bin|png|jpe?g|gif|svg)$"),
    )
)

# How much a hunk of each kind tells a reader about the change, most first.
INFORMATIVE_ORDER = ("source", "kernel", "config", "build", "bench", "ci", "test", "docs", "meta", "data", "lock")


@lru_cache(maxsize=8192)
def file_kind(path: str) -> str:
    """One of INFORMATIVE_ORDER for a repository path."""
    for kind, pattern in _KINDS:
        if pattern.search(path):
            return kind
    return "source"


def kinds(paths: Iterable[str]) -> dict[str, list[str]]:
    """Paths grouped by kind, in the order given."""
    grouped: dict[str, list[str]] = {}
    for path in paths:
        grouped.setdefault(file_kind(path), []).append(path)
    return grouped
