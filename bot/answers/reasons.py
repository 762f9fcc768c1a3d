"""What "why" and "what could go wrong" are answered with: the reason a revert gives for itself, and the risk a PR
names, each in the PR's own words."""
from __future__ import annotations

import re

from store.model import PullRequest
from store.text.patterns import LazyPattern
from store.text.prose import sentences

# Where a sentence gives its reason: "Reverts #12 because it deadlocked …", "… due to a crash on ROCm". Not "as it"
# or "since it", which as often compare or date ("as it did before April") as give a cause.
_CAUSE = LazyPattern(r"\b(?:because(?:\s+of)?|due\s+to)\s+(?P<reason>\S.*)$", re.IGNORECASE)
# A sentence that only says what was reverted: no reason in it.
_RESTATES = LazyPattern(r"^(?:this(?:\s+(?:pr|change|commit))?\s+)?(?:reverts?|rolls?\s+back|backs?\s+out)\b[^.]*$", re.IGNORECASE)
# How an extractive summary says it found no risk: no sentence to show for one.
_NO_RISK = LazyPattern(r"\bnothing\b.*\bsignals?\b.*\brisk\b", re.IGNORECASE)


def revert_reason(pr: PullRequest) -> str | None:
    """The reason a revert gives, from what changed, then its impact and description, as the words that follow the
    revert's own line: its words from "because" or "due to" on, else ": " and the first sentence
    that says more than what was reverted; None when it gives none."""
    texts = [pr.summary.what_changed, pr.summary.impact] if pr.summary else []
    found = [part.rstrip(".") for text in [*texts, pr.body or ""] for part in sentences(text)]
    for part in found:
        cause = _CAUSE.search(part)
        if cause:
            return f" {cause[0]}"  # its own "because …" or "due to …"
    said = next((part for part in found if not _RESTATES.match(part)), None)
    return f": {said}" if said else None


def risk_sentence(pr: PullRequest) -> str | None:
    """The first sentence of a PR's Potential risks, when it names one."""
    risks = sentences(pr.summary.risks) if pr.summary else []
    return risks[0] if risks and not _NO_RISK.search(risks[0]) else None
