"""What a question asks of a change's effect: what it risks, what it made better, what it removed."""
from __future__ import annotations

import re

from store.text.patterns import LazyPattern

# Words that ask about risks rather than name a topic; "could"/"might" before a verb ask too, and the verb stays.
_RISK_WORDS = LazyPattern(
    r"\b(?:(?:as\s+)?(?:a\s+)?risks?|risky|riskiest|go(?:es)?\s+wrong|downsides?|drawbacks?|side[\s-]?effects?|caveats?"
    r"|(?:known\s+)?limitations?|concerns?|dangers?|dangerous|call(?:s|ed)?\s+out"
    # "warn that", "admit": a PR's own words about what could go wrong ("admit-short-prompts" is no admission).
    r"|(?:warn(?:s|ed|ing)?|admit(?:s|ted)?)(?![\w-])(?:\s+(?:about|of|that)\b)?)\b"
)
# "which changes could break X", "changes that make outputs nondeterministic": what a change may bring about.
_RISK_VERBS = LazyPattern(
    r"\b(?:could|might|may)\s+(?=(?:break|slow|hurt|regress|affect|end\s+up|stop|fail|degrade|reject|reduce|lower|change|alter|throw|mess)\b)"
    # Verbs that only bring about what follows ("could raise memory use"): what follows is the risk.
    r"|\b(?:could|might|may)\s+(?:increase|cause|make|lead\s+to|start|raise|require|add|introduce|leave|take)\b"
    r"|(?:(?<=\bchanges\s)|(?<=\bmerges\s))(?:that\s+)?(?:make|cause)\b"
    # "anything that makes startup slower", but not "the change that makes decode nodes stop waiting" (what it does).
    r"|(?<!\bchange\s)(?<!\bpr\s)(?<!\bone\s)(?<!\bfix\s)(?<!\bcommit\s)(?<!\bpatch\s)(?<!\bpull\s)(?<!\brequest\s)"
    r"\b(?:that|which)\s+(?:makes?|causes?)\b"
    # "need more host RAM", "eat extra GPU memory": a cost, which PRs state among their risks.
    r"|\b(?:needs?|eats?|uses?|takes?(?:\s+up)?|costs?|consumes?|requires?)\s+(?=(?:more|extra|additional)\b(?!\s+than\b))"
)
# "the known risks of the new X flag": X is what the PRs are about, and their risks are what is shown.
_RISKS_OF = LazyPattern(
    r"\b(?:(?:known|main|potential|possible)\s+)?(?:risks?|downsides?|drawbacks?|caveats?|side[\s-]?effects?|limitations?|dangers?)"
    r"\s+(?:of|with|from|in)\s+(?=(?:the|this|that|these|those|its|their)\b|#\d)"
)


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


# "which PR dropped --x?": the removing, not a topic.
_REMOVAL_WORDS = LazyPattern(r"(?<![\w-])(?:dropped|removed|deleted|killed|got\s+rid\s+of|ripped\s+out|took\s+out)(?![\w-])")
# "where did --x (originally) come from?": asks which PR brought it in; the words say nothing of it.
_ORIGIN_WORDS = LazyPattern(r"\b(?:originally\s+)?(?:come|came|comes)\s+from\b")
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
