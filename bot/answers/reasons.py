"""What "why" and "what could go wrong" are answered with: the reason a PR gives for itself (a revert's, a pin's, a
default changed) and the risk a PR names, each in the PR's own words."""
from __future__ import annotations

import re

from store.model import PullRequest
from store.text.patterns import LazyPattern
from store.text.prose import atoms, sentences

# Where a sentence gives its reason or purpose: "Reverts #12 because it deadlocked …", "… due to a crash on ROCm",
# "… so that …", "… to avoid …". Not "as it" or "since it", which as often compare or date ("as it did before
# April") as give a cause.
_CAUSE = LazyPattern(
    r"\b(?:because(?:\s+of)?|due\s+to|so\s+that|in\s+order\s+to|to\s+(?:avoid|prevent))\s+(?P<reason>\S.*)$", re.IGNORECASE
)
# A sentence that only says what was reverted, or that the change changes something: no reason in it.
_RESTATES = LazyPattern(
    r"^(?:this(?:\s+(?:pr|change|commit))?\s+)?(?:reverts?|rolls?\s+back|backs?\s+out)\b[^.]*$"
    r"|^(?:the|this)\s+(?:pr|change|commit|patch)\s+(?:modifies|updates|changes|adjusts|alters|tweaks|refactors)\b",
    re.IGNORECASE,
)
# A sentence that opens by naming the PR it fixes or follows: "Fixes a regression introduced in #12, which …";
# what follows the reference is its reason, when there is any.
_NAMES_ITS_OTHER = LazyPattern(
    r"^(?:this(?:\s+(?:pr|change))?\s+)?(?:fix(?:es)?|relands?|follows?\s+up\s+on|follow[\s-]?ups?\s+(?:to|on|of))\b[^.#]{0,80}#\d+\s*(?P<rest>,\s*\S.*)?$",
    re.IGNORECASE,
)
# How an extractive summary says it found no risk: no sentence to show for one.
_NO_RISK = LazyPattern(r"\bnothing\b.*\bsignals?\b.*\brisk\b", re.IGNORECASE)
# A sentence holding this share of its PR's title words says what the title says, not why.
_TITLE_SHARE = 0.6
# Title words this short ("to", "v1") say nothing of whether a sentence restates it.
_SHORT = 2
# Two words are one with different endings when they share this many first letters and differ in length by at most
# _ENDING ("pin", "pinned"; "remove", "removes").
_STEM, _ENDING = 4, 3
# A title's tags ("[Build][CI]") say where, not what.
_TAGS = LazyPattern(r"\[[^\]]{0,40}\]")


def reason(pr: PullRequest) -> str | None:
    """The reason a PR gives, from what changed, then its impact and description, as the words that follow the
    PR's own line: its words from "because", "due to", "so that" or "to avoid" on, else ": " and the first sentence
    that says more than its title or what it reverted; None when it gives none."""
    texts = [pr.summary.what_changed, pr.summary.impact] if pr.summary else []
    found = [part.rstrip(".") for text in [*texts, pr.body or ""] for part in sentences(text)]
    for part in found:
        cause = _CAUSE.search(part)
        if cause:
            # Its own "because …" or "due to …"; a sentence that opens with it, or says it inside brackets, whole.
            inside = part.count("(", 0, cause.start()) > part.count(")", 0, cause.start())
            return f": {part}" if cause.start() == 0 or inside else f" {cause[0]}"
    for part in found:
        other = _NAMES_ITS_OTHER.match(part)
        if other and other["rest"]:
            return other["rest"]  # ", which reordered requests …"
    title = _TAGS.sub("", pr.title)
    said = next((part for part in found if not (_NAMES_ITS_OTHER.match(part) or _restates(part, title))), None)
    return f": {said}" if said else None


def _restates(part: str, title: str) -> bool:
    """Whether a sentence only says what the PR did: what it reverted, or its title again, its verb ("Pin …",
    "pinned") with most of its words. A sentence naming what the title names without its verb may say why."""
    if _RESTATES.match(part):
        return True
    verb, *rest = atoms(title) or [""]
    words = atoms(part)
    if not any(_same_word(verb, word) for word in words):
        return False
    named = [word for word in rest if len(word) > _SHORT]
    return sum(any(_same_word(one, word) for word in words) for one in named) >= _TITLE_SHARE * len(named)


def _same_word(one: str, other: str) -> bool:
    """The same word with or without an ending: "pin" and "pinned", "adds" and "added"."""
    stem = min(len(one), len(other), _STEM)
    return len(one) > _SHORT - 1 and one[:stem] == other[:stem] and abs(len(one) - len(other)) <= _ENDING


def risk_sentence(pr: PullRequest) -> str | None:
    """The first sentence of a PR's Potential risks, when it names one."""
    risks = sentences(pr.summary.risks) if pr.summary else []
    return risks[0] if risks and not _NO_RISK.search(risks[0]) else None
