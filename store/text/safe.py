"""Text made safe to print or keep: the one sanitizer every output goes through, and secrets masked.

Stored text comes from GitHub, reports, Slack and model servers, and may end
up on an operator's terminal: escape sequences could retitle the window, plant
links, ring bells or overwrite earlier lines, and bidi overrides could make a
line read in another order than it runs.
"""
from __future__ import annotations

import json
import re
from typing import Any

from store.text.patterns import LazyPattern

# C0 controls but newline and tab, DEL, C1 controls (0x9b is a one-byte CSI), and the bidi
# overrides and isolates that make text display in another order than it reads.
_UNSAFE = LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# A whole escape sequence goes, not only its ESC: "ESC]0;title BEL" would otherwise leave "]0;title" behind.
# CSI (colours, cursor moves), OSC (titles, links) and DCS/SOS/PM/APC strings, then any two-character escape.
_ESCAPE = LazyPattern(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)")
# Keys and tokens as their services issue them, a bearer token, and the user:password@ of a URL.
_SECRETS = LazyPattern(
    r"(?P<keep>\bsk-|\bxox[a-z]-|\bxapp-|\bgh[pousr]_|\bgithub_pat_)[A-Za-z0-9_-]+"
    r"|(?P<bearer>\bBearer\s+)[^\s\"',;]+"
    r"|(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s@]+@"
)
MASK = "***"


def neutralize(text: str) -> str:
    """`text` without the control characters and escape sequences that would let it drive a terminal."""
    return _UNSAFE.sub("", _ESCAPE.sub("", text))


def has_controls(text: str) -> bool:
    """Whether `text` holds anything neutralize() would take out."""
    return _UNSAFE.search(text) is not None


def to_json(value: Any, **options: Any) -> str:
    """JSON as we print it: non-ASCII kept readable, but every control character escaped as \\uXXXX.

    json.dumps escapes only C0; DEL, C1 and bidi overrides can stand only inside strings,
    where their escape is the same string."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _UNSAFE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def mask_secrets(text: str) -> str:
    """`text` with API keys, tokens and URL credentials replaced by ***, their kind still shown."""
    return _SECRETS.sub(_masked, text)


def _masked(match: re.Match[str]) -> str:
    kept = match["keep"] or match["bearer"] or match["scheme"]
    return f"{kept}{MASK}@" if match["scheme"] else f"{kept}{MASK}"
