"""What search finds: each PR with its relevance, and how relevance is scored."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from store.model import PullRequest
from store.understanding.relations import Link

# Scores are relevance in [0, 1]: PRs named in the question, then PRs related to
# them, then text matches (bm25 squashed below those), then plain listings.
NAMED_SCORE = 1.0
RELATED_SCORE = {"reverts": 0.95, "fixes": 0.9, "follows": 0.85, "mentions": 0.8}
TEXT_CEILING = 0.75
_TEXT_HALF = 5.0  # the bm25 value that maps to the middle of its band


@dataclass
class Hit:
    pr: PullRequest
    score: float
    link: Link | None = None  # how it relates to a PR named in the question
    coverage: float | None = None  # for a question of words: how much of what was asked the PR says, 0 to 1
    said: tuple[float, ...] = ()  # for a question of words: how strongly it says each topic (concepts, then areas)


def squash(raw: float, band: int) -> float:
    """bm25 mapped below named and related PRs, each stage's matches in a band above the next stage's."""
    width = TEXT_CEILING / 3
    return round(band * width + (width * raw / (raw + _TEXT_HALF) if raw > 0 else 0.0), 4)


def rows_of(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]
