"""Building PullRequest values for tests without repeating every field."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from store.model import PullRequest

REPO = "acme/engine"


def make_pr(number: int = 1, title: str = "[Core] Add a thing", **fields: Any) -> PullRequest:
    values: dict[str, Any] = {
        "repo": REPO,
        "number": number,
        "title": title,
        "url": f"https://github.com/{REPO}/pull/{number}",
        "author": "grace-h",
        "merged_by": "linus-t",
        "merged_at": datetime(2026, 3, 7, 18, 0, tzinfo=UTC),
        "type": "substantial",
        "files": ["engine/core/scheduler.py"],
    }
    values.update(fields)
    return PullRequest(**values)
