"""Making untrusted text (PR titles, bodies, model output, user words) safe for Slack mrkdwn."""
from __future__ import annotations

import re

from store.text.prose import lead_and_rest
from store.text.safe import neutralize

_SAFE_URL = re.compile(r"^https?://[^\s<>|\"']+$")
# Plain-text broadcast words; defused as well in case a client auto-parses them.
_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
# What a cut must keep whole: a link or mention (<url|label>, <url>, <@U123>) and an entity (&amp;).
_ATOM = re.compile(r"<[^<>\n]*>|&(?:amp|lt|gt);")


def escape(text: str) -> str:
    """Untrusted text made inert for Slack: through the one sanitizer (no control characters or escape
    sequences, no secrets), Slack's control characters escaped (& first) and broadcast words defused."""
    text = neutralize(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@\u200b" + m.group(1), text)


def link(url: str, label: str) -> str:
    """A mrkdwn link; an unexpected URL degrades to the escaped label alone."""
    label = escape(label).replace("|", "\u2758")
    if not _SAFE_URL.match(url or ""):
        return label
    return f"<{url}|{label}>"


def truncate(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ending in an ellipsis when cut. A cut never falls inside one of
    our links or entities (untrusted text has its < > & escaped, so each one in the text is ours)."""
    if len(text) <= limit:
        return text
    cut = max(limit - 1, 0)
    for atom in _ATOM.finditer(text):
        if atom.start() >= cut:
            break
        if atom.end() > cut:
            cut = atom.start()
            break
    return text[:cut].rstrip() + "\u2026"


def first_sentence(text: str, limit: int = 280) -> str:
    """The first sentence of the first paragraph, at most `limit` characters."""
    paragraph = (text or "").strip().split("\n", 1)[0].strip()
    return truncate(lead_and_rest(paragraph)[0], limit)
