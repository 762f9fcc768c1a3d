"""What a question's own words say beyond its fields: how it leans on an earlier question of its thread ("and on
ROCm?", "which of those …"), how it asks about PRs it names ("why was #N reverted?"), and what it joins as
alternatives ("whisper or audio"). Read once, with the rest of the question; the words are cues of the lexicon."""
from __future__ import annotations

from store.retrieval.reading.form import FIX_WORDS, RELATION_WORDS
from store.retrieval.reading.query import Cues, Relation
from store.text.patterns import LazyPattern
from store.understanding.relations import RELAND_WORD
from store.understanding.vocabulary import cue

_CONTINUES, _LEANS_BACK, _POINTS_BACK, _NARROWS = cue("continues"), cue("leans_back"), cue("points_back"), cue("narrows")
_PICKS_AMONG, _PEOPLE_BACK, _ORIGINAL, _ONE = cue("picks_among"), cue("people_back"), cue("original"), cue("one_back")
_ELSE, _ABOUT_NAMED, _EXPLAINS, _WHO_MERGED = cue("besides_shown"), cue("about_named"), cue("explains"), cue("who_merged")
_WHY, _DEFAULT, _UPGRADING = cue("asks_why"), cue("asks_default"), cue("upgrading")
_DEFAULT_OFF = cue("asks_default_off")
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
        asks_why=bool(_WHY.search(text)),
        asks_default=bool(_DEFAULT.search(text)),
        asks_default_off=bool(_DEFAULT_OFF.search(lowered)),
        upgrading=bool(_UPGRADING.search(lowered)),
        reland=bool(RELAND_WORD.search(lowered)),
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
    if not first_at:
        return named  # no number, nothing named before anything
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
