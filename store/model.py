"""The merged pull request and its four-section summary, as the rest of the code sees them."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

TYPES = ("substantial", "trivial")


@dataclass(frozen=True)
class Summary:
    what_changed: str
    impact: str
    risks: str
    insights: str
    source: str  # imported | extractive | model:<name>

    def as_dict(self) -> dict[str, str]:
        return {
            "what_changed": self.what_changed,
            "impact": self.impact,
            "risks": self.risks,
            "insights": self.insights,
        }


@dataclass
class PullRequest:
    repo: str
    number: int
    title: str
    url: str
    author: str
    merged_by: str | None
    merged_at: datetime  # timezone-aware
    type: str
    files: list[str]
    changed_files: int | None = None
    labels: list[str] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    body: str = ""
    additions: int | None = None
    deletions: int | None = None
    summary: Summary | None = None

    @property
    def file_count(self) -> int:
        return self.changed_files if self.changed_files is not None else len(self.files)
