"""What a question's own words say beyond its fields: how it leans on an earlier question of its thread ("and on
ROCm?", "which of those …"), how it asks about PRs it names ("why was #N reverted?"), and what it joins as
alternatives ("whisper or audio"). Read once, with the rest of the question."""
from __future__ import annotations

import re

from store.retrieval.reading.form import FIX_WORDS, RELATION_WORDS
from store.retrieval.reading.query import Cues, Relation
from store.text.patterns import LazyPattern

# Openings and words that lean on an earlier question.
_OPENINGS = r"^\W*(?:and|also|plus|or|then|what\s+about|how\s+about|same\s+(?:for|on|in|with))\b"
_CONTINUES = LazyPattern(_OPENINGS)
_LEANS_BACK = LazyPattern(_OPENINGS + r"|\b(?:it|its|those|them|these|they|this\s+one|that\s+one|the\s+same|there)\b")


# The PRs an earlier answer gave, pointed at: "it", "that one", "any of those".
# "that" only as a pronoun ("was that reverted?", "any of that"), not as a relative ("anything that touched ROCm").
_POINTS_BACK = LazyPattern(
    r"\b(?:it|those|them|these|they|this\s+one|that\s+one)\b|\bof\s+that\b"
    r"|^\W*(?:was|were|is|are|did|does|has|had)\s+that\b"
)
_THOSE = r"(?:those|them|these|that)"
# "who merged the moe one?": one of them, named by what it is about.
_NARROWS = LazyPattern(
    rf"\b(?:of|among)\s+{_THOSE}\b|^\W*(?:just|only)\s+the\b|^\W*(?:which|what)\s+ones?\b|\bwhich\s+one\s+of\b"
    r"|\bthe\s+(?!other\b|same\b|last\b|first\b|next\b|new\b|old\b|right\b|only\b)[\w-]+(?:\s+[\w-]+)?\s+one\b"
)
# Of those, the questions whose subject is the earlier PRs themselves: "which of those was the fix?", "any of
# those a revert?" (not "what reverted any of those?", which asks for other PRs).
_PICKS_AMONG = LazyPattern(
    rf"^\W*(?:(?:which|what)(?:\s+one)?\s+of\s+{_THOSE}|(?:which|what)\s+ones?|(?:(?:is|are|was|were)\s+)?any\s+of\s+{_THOSE})\b"
)
_PEOPLE_BACK = LazyPattern(r"\b(?:they|he|she|him|her|hers|their|his)\b")
# "who wrote the original?" after a revert or a follow-up: the PR it undid or followed.
_ORIGINAL = LazyPattern(r"\boriginal\b", re.IGNORECASE)
# "it", "that one": one PR, the first the earlier answer gave, and what it relates to.
_ONE = LazyPattern(r"\b(?:it|this\s+one|that\s+one)\b", re.IGNORECASE)
_ELSE = LazyPattern(r"\b(?:else|other|others)\b", re.IGNORECASE)

# "what does #N do?": #N answers; what relates to it is told, as context ("tell me about #N" is its story).
_ABOUT_NAMED = LazyPattern(
    r"^\W*(?:what\s+(?:does|did|is|was)\s+|what'?s\s+|(?:summary|details|tl;?dr)\s+(?:of|for)\s+)?(?:#|pr\s*#?)?\d{2,7}\b"
    r"(?:\s+(?:summary|details|tl;?dr|do|does|change|changes)\b|\W*$)",
    re.IGNORECASE,
)
# "why was #N reverted?": about both sides of the relation, the named PR's story.
_EXPLAINS = LazyPattern(r"^\W*(?:why|how|what\s+happened|tell|explain|summari[sz]e|what'?s\s+the\s+(?:story|deal))\b", re.IGNORECASE)
_WHO_MERGED = LazyPattern(r"\bwho\s{1,3}merged\b")
# Where a question joins two things as alternatives: "whisper or audio", "eagle, mtp", "h100/h200".
_JOINT = LazyPattern(r",|/|\bor\b")
# At most this much space on either side of a joint.
_JOINT_SPACE = 3
_DIGITS = LazyPattern(r"\d+")


def cues_of(text: str) -> Cues:
    """The cues of a question's text (Slack markup already removed)."""
    lowered = text.lower()
    return Cues(
        continues=bool(_CONTINUES.search(lowered)),
        leans_back=bool(_LEANS_BACK.search(lowered)),
        points_back=bool(_POINTS_BACK.search(lowered)),
        narrows=bool(_NARROWS.search(lowered)),
        picks_among=bool(_PICKS_AMONG.search(lowered)),
        people_back=bool(_PEOPLE_BACK.search(lowered)),
        original=bool(_ORIGINAL.search(text)),
        one_back=bool(_ONE.search(text)),
        besides_shown=bool(_ELSE.search(text)),
        explains=bool(_EXPLAINS.search(text)),
        about_named=bool(_ABOUT_NAMED.search(text)),
        named_before=_named_before(lowered),
        names_mergers=bool(_WHO_MERGED.search(lowered)),
        joints=_joints(lowered),
    )


def _named_before(lowered: str) -> dict[Relation, frozenset[int]]:
    """For each relation the text says, the numbers it says before that ("#N reverted what?"); of a regression fix,
    before the word that says the fixing ("what did #N fix?")."""
    first_at: dict[str, int] = {}
    for found in _DIGITS.finditer(lowered):
        first_at.setdefault(found[0], found.start())
    named: dict[Relation, frozenset[int]] = {}
    for relation in Relation:
        said = (FIX_WORDS if relation is Relation.FIXES else RELATION_WORDS[relation]).search(lowered)
        before = frozenset(int(digits) for digits, at in first_at.items() if said and at < said.start() and digits == str(int(digits)))
        if before:
            named[relation] = before
    return named


def _joints(lowered: str) -> tuple[tuple[str, str], ...]:
    """Each joint with the words before and after it, the space around it taken off (when there is little)."""
    joints = []
    for joint in _JOINT.finditer(lowered):
        before, after = lowered[: joint.start()], lowered[joint.end() :]
        trimmed_before, trimmed_after = before.rstrip(), after.lstrip()
        if len(before) - len(trimmed_before) <= _JOINT_SPACE and len(after) - len(trimmed_after) <= _JOINT_SPACE:
            joints.append((trimmed_before, trimmed_after))
    return tuple(joints)
