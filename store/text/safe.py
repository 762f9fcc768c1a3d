"""Text made safe to print or keep: the one sanitizer every output goes through, and secrets masked.

Stored text comes from GitHub, reports, Slack and model servers, and may end
up on an operator's terminal: escape sequences could retitle the window, plant
links, ring bells or overwrite earlier lines, and bidi overrides could make a
line read in another order than it runs. Any of those services may also echo a
credential back (a key in a 401, a token in an error reply, a model repeating
what it saw), so every output masks the configured secrets by value, as well as
keys and tokens by their shape.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from store.text.patterns import LazyPattern

# C0 controls but newline and tab, DEL, C1 controls (0x9b is a one-byte CSI), and the bidi
# overrides and isolates that make text display in another order than it reads.
_UNSAFE = LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# A whole escape sequence goes, not only its ESC: "ESC]0;title BEL" would otherwise leave "]0;title" behind.
# CSI (colours, cursor moves), OSC (titles, links) and DCS/SOS/PM/APC strings, then any two-character escape.
_ESCAPE = LazyPattern(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)")
# Keys and tokens as their services issue them, and a bearer credential. Every output is masked, PR text and
# summaries included, so prose must come through: "Bearer token auth" names no credential (one holds a
# digit, one of _~+/= or an inner . or -).
_TOKENS = LazyPattern(
    r"(?P<kind>\bsk-|\bxox[a-z]-|\bxapp-|\bgh[pousr]_|\bgithub_pat_|\bBearer\s+)"
    r"(?:(?<=-|_)[A-Za-z0-9_-]+|(?<=\s)(?=[A-Za-z]*(?:[0-9_~+/=]|[.-][A-Za-z0-9]))[A-Za-z0-9._~+/=-]+)"
)
# What every text holding such a token holds: most text holds none, and these tests are much quicker than
# the pattern, which tries each of its alternatives at every word.
_TOKEN_MARKS = ("sk-", "xox", "xapp-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "Bearer")
# The user:password@ of a URL (or a long user alone: a token), read from its "://", so that the search is for
# that string; ssh://git@host names no credential. Bounded, so that crafted text is read in linear time.
_URL_CREDENTIALS = LazyPattern(r"://(?:[^/\s@:]{0,256}:[^/\s@]{0,256}|[^/\s@:]{20,256})@")
MASK = "***"
# A configured value shorter than this is not masked by value: a local server's placeholder key ("EMPTY",
# "none") guards nothing, and masking it would turn every occurrence of a common word into ***.
MIN_SECRET_CHARS = 8


class _Values:
    """The configured secrets (API keys, tokens, signing secrets) as one pattern.

    They are process-wide settings, fixed when the process starts, and every
    output (stored text, errors, log records, Slack messages, the terminal)
    already passes through this module: registered here once, they need not be
    passed down to each of those places."""

    forms: tuple[str, ...] = ()  # each value as it may be written: tested for first, as _TOKEN_MARKS are
    pattern: re.Pattern[str] = re.compile("(?!)")


def use_secrets(values: Iterable[str | None]) -> None:
    """Mask these values, whatever their shape, from now on in this process (in place of any given before).
    Each is also masked as it appears URL-encoded or inside a JSON string."""
    forms = {
        form
        for value in values
        if value and len(value) >= MIN_SECRET_CHARS
        for form in (value, quote(value, safe=""), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1])
    }
    # Longest first, so that a secret holding another is masked whole.
    _Values.forms = tuple(sorted(forms, key=lambda form: (-len(form), form)))
    _Values.pattern = re.compile("|".join(map(re.escape, _Values.forms)) or "(?!)")


def neutralize(text: str) -> str:
    """`text` as any output may show it: without the control characters and escape sequences that would let
    it drive a terminal, and with its secrets masked (mask_secrets)."""
    return mask_secrets(_UNSAFE.sub("", _ESCAPE.sub("", text)))


def has_controls(text: str) -> bool:
    """Whether `text` holds a control character or an escape sequence, which neutralize() would take out."""
    return _UNSAFE.search(text) is not None


def to_json(value: Any, **options: Any) -> str:
    """JSON as we print it: non-ASCII kept readable, but every control character escaped as \\uXXXX,
    and secrets masked.

    json.dumps escapes only C0; DEL, C1 and bidi overrides can stand only inside strings,
    where their escape is the same string."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return mask_secrets(_UNSAFE.sub(lambda match: f"\\u{ord(match[0]):04x}", text))


def mask_secrets(text: str) -> str:
    """`text` with API keys, tokens and URL credentials replaced by *** with their kind still shown (sk-***,
    http://***@host), then every configured secret (use_secrets), whatever its shape."""
    if any(mark in text for mark in _TOKEN_MARKS):
        text = _TOKENS.sub(lambda match: match["kind"] + MASK, text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(f"://{MASK}@", text)
    if _Values.forms and any(form in text for form in _Values.forms):
        text = _Values.pattern.sub(MASK, text)
    return text
