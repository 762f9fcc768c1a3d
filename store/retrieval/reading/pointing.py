"""The words with which a question leans on an earlier one of its thread: "and on ROCm?", "which of those …"."""
from __future__ import annotations

from store.text.patterns import LazyPattern

# Openings and words that lean on an earlier question.
_OPENINGS = r"^\W*(?:and|also|plus|or|then|what\s+about|how\s+about|same\s+(?:for|on|in|with))\b"
_CONTINUES = LazyPattern(_OPENINGS)
LEANS_BACK = LazyPattern(_OPENINGS + r"|\b(?:it|its|those|them|these|they|this\s+one|that\s+one|the\s+same|there)\b")


# The PRs an earlier answer gave, pointed at: "it", "that one", "any of those".
# "that" only as a pronoun ("was that reverted?", "any of that"), not as a relative ("anything that touched ROCm").
POINTS_BACK = LazyPattern(
    r"\b(?:it|those|them|these|they|this\s+one|that\s+one)\b|\bof\s+that\b"
    r"|^\W*(?:was|were|is|are|did|does|has|had)\s+that\b"
)
_THOSE = r"(?:those|them|these|that)"
# "who merged the moe one?": one of them, named by what it is about.
NARROWS = LazyPattern(
    rf"\b(?:of|among)\s+{_THOSE}\b|^\W*(?:just|only)\s+the\b|^\W*(?:which|what)\s+ones?\b|\bwhich\s+one\s+of\b"
    r"|\bthe\s+(?!other\b|same\b|last\b|first\b|next\b|new\b|old\b|right\b|only\b)[\w-]+(?:\s+[\w-]+)?\s+one\b"
)
# Of those, the questions whose subject is the earlier PRs themselves: "which of those was the fix?", "any of
# those a revert?" (not "what reverted any of those?", which asks for other PRs).
PICKS_AMONG = LazyPattern(
    rf"^\W*(?:(?:which|what)(?:\s+one)?\s+of\s+{_THOSE}|(?:which|what)\s+ones?|(?:(?:is|are|was|were)\s+)?any\s+of\s+{_THOSE})\b"
)
PEOPLE_BACK = LazyPattern(r"\b(?:they|he|she|him|her|hers|their|his)\b")


def continues(text: str) -> bool:
    """Whether a question opens by carrying on from the one before: "and on apr 9?", "what about ROCm?"."""
    return bool(_CONTINUES.search(text.lower()))
