"""How releases read: the PR a commit's message names, and the order of version tags.

The number in the message is the key to a PR, not the commit's SHA: a fix
cherry-picked onto a release branch is a new commit with the same message.
"""
from __future__ import annotations

from store.text.patterns import LazyPattern

# A squash merge ends its first line with "(#12345)". A cherry-pick merged through a PR of its own
# adds that PR's: "Title (#12) (#34)" names both. A revert of one, "Revert "Title (#12)" (#34)",
# names the reverting PR alone, since only the trailing run counts.
_TRAILING = LazyPattern(r"(?:\s*\(#\d{1,9}\))+\s*$")
_NUMBER = LazyPattern(r"#(\d{1,9})")
_MERGE = LazyPattern(r"^Merge pull request #(\d{1,9}) from \S")
# "v0.11.0", "0.10.1.1", "v0.11.0rc2", "v0.6.4.post1", "release-1.2": numbers, then a pre- or post-release mark.
_VERSION = LazyPattern(r"^\D*?(\d+(?:\.\d+)*)[.-]?(?:(a|alpha|b|beta|rc|c|dev|pre|post)[.-]?(\d*))?$")
# Pre-releases sort before the final release of their numbers, post-releases after it.
_STAGE = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "pre": -1, "c": -1, "rc": -1, "post": 1}


def commit_prs(message: str) -> list[int]:
    """The PR numbers a commit's message names in its first line, the way merges write them."""
    first = message.split("\n", 1)[0].strip()
    merge = _MERGE.match(first)
    if merge:
        return [int(merge.group(1))]
    trailing = _TRAILING.search(first)
    return [int(number) for number in _NUMBER.findall(trailing.group(0))] if trailing else []


def version_key(tag: str) -> tuple[tuple[int, ...], int, int] | None:
    """A key that sorts version tags as versions (v0.9.2 < v0.10.0rc1 < v0.10.0 < v0.10.0.post1); None when
    the tag is no version ("nightly")."""
    found = _VERSION.match(tag.strip().lower())
    if not found:
        return None
    numbers = tuple(int(part) for part in found.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:  # 1.2 and 1.2.0 are one version
        numbers = numbers[:-1]
    stage = _STAGE[found.group(2)] if found.group(2) else 0
    return numbers, stage, int(found.group(3) or 0)

