"""A question as typed, made plain: Slack markup undone, apostrophes restored, who asks and why set aside."""
from __future__ import annotations

import html
import re

from store.retrieval.reading.typos import time_words_fixed
from store.text.patterns import LazyPattern

# Slack sends <@U123> for mentions and <url|label> for links.
_SLACK_MENTION = LazyPattern(r"<[@#!][^>]*>")
_SLACK_LINK = LazyPattern(r"<(https?://[^>|]+)(?:\|[^>]*)?>")


# Typed fast, without the apostrophe ("dont", "wasnt", "yesterdays") or short ("yday").
_NO_APOSTROPHE = LazyPattern(
    r"\b(?P<stem>do|does|did|is|was|were|are|has|have|had|could|should|would|ca|wo)n(?P<t>t)\b"
    r"|\b(?P<day>yesterday|today|tonight|tomorrow)(?P<s>s)\b"
    r"|\b(?P<yday>yday|yest)\b",
    re.IGNORECASE,
)


def _as_typed_in_full(m: re.Match[str]) -> str:
    if m["stem"]:
        return f"{m['stem']}n't"
    return f"{m['day']}'s" if m["day"] else "yesterday"


def clean(text: str) -> str:
    """The text without Slack's markup, with its apostrophes and time words as meant."""
    text = _SLACK_MENTION.sub(" ", text)
    text = _SLACK_LINK.sub(r"\1", text)
    text = html.unescape(text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = _NO_APOSTROPHE.sub(_as_typed_in_full, text)
    return time_words_fixed(text)


# Who asks or what for, before a colon: "for my weekly update: how many …", "spec decode person here: any …".
# And the bot's own name typed as text: "@prdigest is there …" asks "is there …".
_LEAD_IN = LazyPattern(
    r"^\W{0,3}(?:(?:for\s+(?:my|our|the|a|an)\s+[^:?]{1,40}|[^:?]{1,40}\s+here|fyi|context|q|question|quick\s+(?:one|q|question)"
    r"|random\s+q(?:uestion)?|curious)\s*:|@prdigest\b[,:]?)\s+(?=\S)",
    re.IGNORECASE,
)


# Why it is asked, after the question: "which PRs touched envs.py? trying to figure out where new env vars came from".
_TRAILING_CONTEXT = LazyPattern(
    r"\?\s+(?:i'?m\s+|we'?re\s+|just\s+)?(?:trying|asking|need|needed|because|bc|for\s+(?:my|our|a|the)|context|wondering"
    # "? looking at b580s for a lab", "? updating our client notes": what the asker is doing.
    r"|[a-z]{3,}ing\s+(?:our|my|a|the|at|on|for|to|some|weird)\b)\b.*$"
    # After a comma or a dash too: "what did the cpu backend get, we run on xeons", "… — need to know what to rebuild".
    r"|(?:[,;]|\s[\u2014\u2013-])\s+(?:i'?m\s+|we'?re\s+|just\s+)?"
    r"(?:trying|asking|need(?:ed)?\s+to|because|bc|context|wondering|writing|(?:we|i)\s+(?:run|use|have|need))\b.*$",
    re.IGNORECASE,
)


def plain_question(text: str) -> str:
    """The question as asked: clean, on one line, without who asks and what for before it, or why after it."""
    return _TRAILING_CONTEXT.sub("?", _LEAD_IN.sub("", " ".join(clean(text).split()), count=1), count=1)
