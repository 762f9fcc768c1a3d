"""A question as typed, made plain: Slack markup undone, apostrophes restored, who asks and why set aside."""
from __future__ import annotations

import html
import re

from store.retrieval.reading.typos import time_words_fixed
from store.text.patterns import LazyPattern
from store.understanding.vocabulary import cue

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


# Who asks or what for, before the question ("for my weekly update: …"), and why, after it ("…? trying to …").
_LEAD_IN, _TRAILING_CONTEXT = cue("lead_in"), cue("trailing_context")


def plain_question(text: str) -> str:
    """The question as asked: clean, on one line, without who asks and what for before it, or why after it."""
    plain = " ".join(clean(text).split())
    return _TRAILING_CONTEXT.sub("?", _LEAD_IN.sub("", plain, count=1), count=1) if plain else plain
