"""The hand-written PR descriptions of tests/fixtures/pr_bodies and what a summary of them must never do.

Each fixture is a header (title, files, size, the risk signals and measurements a reader finds
in it, and a hand-written expectation of What changed), a line `---`, then the body as GitHub
gives it. The bench and the tests read them through here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from store.model import Summary

BODIES = Path(__file__).parent / "fixtures" / "pr_bodies"
FIRST_NUMBER = 50001


@dataclass(frozen=True)
class Fixture:
    name: str
    number: int
    title: str
    files: list[str]
    additions: int
    deletions: int
    signals: frozenset[str]  # risks a reader can support from the PR: revert, stated, api, settings, untested, wide, dependencies
    measured: bool  # the description has test results or numbers
    expect: str  # What changed, as a person would write it
    body: str


def _fixture(path: Path, number: int) -> Fixture:
    header, _, body = path.read_text(encoding="utf-8").partition("\n---\n")
    fields = dict(line.split(":", 1) for line in header.splitlines())
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    additions, deletions = (int(part) for part in fields["size"].split())
    return Fixture(
        name=path.stem,
        number=number,
        title=fields["title"],
        files=[item.strip() for item in fields["files"].split(",") if item.strip()],
        additions=additions,
        deletions=deletions,
        signals=frozenset(item.strip() for item in fields["signals"].split(",") if item.strip()),
        measured=fields["measured"] == "yes",
        expect=fields["expect"],
        body=body,
    )


def fixtures() -> list[Fixture]:
    return [_fixture(path, FIRST_NUMBER + i) for i, path in enumerate(sorted(BODIES.glob("*.md")))]


# What a reader must never meet in a summary, each a failure of its own kind.
FLAWS: dict[str, re.Pattern[str]] = {
    "template text": re.compile(
        r"FILL IN|Essential Elements|BEFORE SUBMITTING|\[[ xX]\]|<!--|</?details|</?summary|FIX #xxxx|Differential Revision|"
        r"ghstack|Signed-off-by|Generated with|Bugbot|\[!NOTE\]|Reviewers:|PR Checklist|Pull Request resolved",
        re.I,
    ),
    "bare URL": re.compile(r"https?://|\bwww\.", re.I),
    # "us" in lower case only and not after a number ("97 us" is microseconds).
    "first person": re.compile(r"\bI\b|\b(?:I'm|I've|[Mm]e|[Mm]y|[Ww]e|[Ww]e're|[Oo]ur)\b|(?<![\d.] )\bus\b"),
    "leftover label": re.compile(r"(?:^|[.!?] )(?:Summary|Purpose|Motivation|Test Plan|Test Results?|TL;DR|Changes|Notes?|Description|FIX(?:ES)?)\b\s*:?", re.I),
    # A sentence that ends on a word or mark that points onward, an ellipsis, or a section without an end.
    "cut-off sentence": re.compile(
        r"(?:\b(?:with|to|for|of|the|a|an|and|or|below|following|above|here|e\.g|i\.e)|[:,;])[.!?](?= |$)|\u2026|\.\.\.|[^.!?\u201d)`]$"
    ),
}


def flaws(summary: Summary) -> list[str]:
    """The kinds of flaw found in any section of the summary."""
    text = list(summary.as_dict().values())
    return [name for name, pattern in FLAWS.items() if any(pattern.search(section) for section in text)]


def has_measurement(insights: str) -> bool:
    """Key insights carries a number or a test command from the description."""
    return bool(re.search(r"\d|`[^`]+`", insights))


_WORD = re.compile(r"[a-z][a-z0-9]+")
_STOP = frozenset(["the", "and", "for", "with", "that", "this", "from", "into", "when", "which", "its", "are", "was", "were", "has", "have", "not", "only", "now", "one"])


def recall(expect: str, written: str) -> float:
    """The share of the expectation's content words (first five letters) that What changed carries."""
    wanted = {word[:5] for word in _WORD.findall(expect.lower()) if word not in _STOP and len(word) > 2}
    found = {word[:5] for word in _WORD.findall(written.lower())}
    return len(wanted & found) / len(wanted) if wanted else 1.0
