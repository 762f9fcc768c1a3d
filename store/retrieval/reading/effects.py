"""What a question asks of a change's effect: what it risks, what it made better, what it removed."""
from __future__ import annotations

import re

from store.text.patterns import LazyPattern
from store.understanding.vocabulary import cue

# Words that ask about risks rather than name a topic, "could …" before what a change may bring about, and "the risks
# of": what the PRs then are about.
_RISK_WORDS, _RISK_VERBS, _RISKS_OF = cue("risk_words"), cue("risk_verbs"), cue("risks_of")


def take_risk_words(text: str) -> tuple[str, bool]:
    """The question without its words about risk, and whether it asks what PRs risk (not what some PR's risks are)."""
    text = _RISKS_OF.sub(" ", text)
    rest, said = _RISK_WORDS.subn(" ", text)
    rest, asked = _RISK_VERBS.subn(" ", rest)
    return rest, bool(said or asked)


# Words that say a change made something better ("improve TTFT", "bring TTFT down"): PRs say it in their own
# words ("TTFT falls by 30%"), so only what got better is a topic.
# Not inside a name: "all-reduce", "reduce-scatter" and "lowering" passes are topics.
_EFFECT_WORDS = LazyPattern(
    r"(?<![\w-])(?:improv(?:e|es|ed|ing|ements?)|cut(?:s|ting)?|reduc(?:e|es|ed|tions?)|lower(?:s|ed)?|boost(?:s|ed|ing)?"
    r"|(?:bring|brings|brought|get|got)\s+(?:(?P<kept>\w+)\s+)?down|speed(?:s|ed)?\s+up|gains?|wins?|better)(?![\w-])"
)


# "which PR dropped --x?", "where did --x come from?": the removing and the coming, not topics.
_REMOVAL_WORDS, _ORIGIN_WORDS = cue("removal_words"), cue("origin_words")
# "reverted within hours", "merged and reverted the same day": when, between the two sides of a relation.
_SOON_AFTER = cue("soon_after")
# "how do I turn the image cache off?": how a thing is set, not what it is ("when thinking is switched off" is).
_SWITCHED = LazyPattern(
    r"\b(?P<how>how\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)\s+|how\s+to\s+)(?:turn|switch|flip)\b"
    r"(?=(?:\s+[\w-]+){0,6}\s+(?:back\s+)?(?:on|off)\b)",
    re.IGNORECASE,
)


def take_effects(text: str) -> tuple[str, bool, bool]:
    """The question without its words about what a change did; whether it asks for a gain ("what cut TTFT?"), and
    whether for a removal ("which PR dropped --x?")."""
    improves = bool(_EFFECT_WORDS.search(text))
    removes = bool(_REMOVAL_WORDS.search(text))
    text = _ORIGIN_WORDS.sub(" ", _REMOVAL_WORDS.sub(" ", text))
    text = _EFFECT_WORDS.sub(lambda m: f" {m['kept'] or ''} ", text)
    return _SWITCHED.sub(lambda m: m["how"], text), improves, removes


def take_soon_after(text: str) -> tuple[str, bool]:
    """The question without its words saying two sides of a relation merged close together, and whether it says so."""
    rest, said = _SOON_AFTER.subn(" ", text)
    return rest, bool(said)
