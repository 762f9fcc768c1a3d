"""Our Slack mrkdwn as terminal text: the one renderer for `shell`, `ask` and `run --format text`.

Styling rule: bold and italic are ANSI only when the stream is a TTY, TERM is set and is not
"dumb", and NO_COLOR is unset or empty (no-color.org). OSC 8 hyperlinks follow the same TTY and
TERM rule; NO_COLOR leaves them on, since they add no color. The URL is always printed after
the link's label, so a terminal that ignores OSC 8 still shows where the link goes.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

from store.text.patterns import LazyPattern
from store.text.safe import neutralize

# What stays whole while emphasis is read: code spans, and Slack's <URL|label>, <URL> and <@U123>.
_ATOM = LazyPattern(r"`[^`\n]*`|<([^<>|\s]+)(?:\|([^<>]*))?>")
# An OSC 8 target must be printable ASCII; anything else is only printed, never linked.
_LINKABLE = LazyPattern(r"^https?://[\x21-\x7e]+$")
# Slack's emphasis: markers at word boundaries around text that starts and ends non-blank;
# a marker inside a word ("a_b") is text.
_BOLD = LazyPattern(r"(?<![\w*])\*(?=\S)((?:[^*\n]|\*(?=\w))*?\S)\*(?![\w*])")
_ITALIC = LazyPattern(r"(?<![\w_])_(?=\S)((?:[^_\n]|_(?=\w))*?\S)_(?![\w_])")
# Stands in for an atom while emphasis is read: NUL never survives neutralize(), so no text can forge one.
_SLOT = LazyPattern("\x00(\\d+)\x00")

ESC = "\x1b"
BOLD, NOT_BOLD = f"{ESC}[1m", f"{ESC}[22m"
ITALIC, NOT_ITALIC = f"{ESC}[3m", f"{ESC}[23m"
DIM, NOT_DIM = f"{ESC}[2m", f"{ESC}[22m"


@dataclass(frozen=True)
class Style:
    """What the output stream can show beyond plain text."""

    emphasis: bool = False  # ANSI bold and italic
    hyperlinks: bool = False  # OSC 8

    @classmethod
    def for_stream(cls, stream: IO[str], environ: Mapping[str, str] = os.environ) -> Style:
        term = environ.get("TERM", "")
        capable = stream.isatty() and term not in ("", "dumb")
        return cls(emphasis=capable and not environ.get("NO_COLOR"), hyperlinks=capable)


PLAIN = Style()


def render(mrkdwn: str, style: Style = PLAIN) -> str:
    """Our mrkdwn as terminal text. Control characters go before any escape of our own is added."""
    atoms: list[str] = []

    def hold(match: re.Match[str]) -> str:
        atoms.append(_atom(match, style))
        return f"\x00{len(atoms) - 1}\x00"

    text = _ATOM.sub(hold, neutralize(mrkdwn))
    bold, italic = ((BOLD, NOT_BOLD), (ITALIC, NOT_ITALIC)) if style.emphasis else (("", ""), ("", ""))
    text = _BOLD.sub(lambda m: f"{bold[0]}{m[1]}{bold[1]}", text)
    text = _ITALIC.sub(lambda m: f"{italic[0]}{m[1]}{italic[1]}", text)
    return _SLOT.sub(lambda m: atoms[int(m[1])], unescape(text))


def dim(text: str, style: Style = PLAIN) -> str:
    """Plain text (not mrkdwn) shown faint beside an answer, where the stream takes emphasis."""
    text = neutralize(text)
    return f"{DIM}{text}{NOT_DIM}" if style.emphasis else text


def _atom(match: re.Match[str], style: Style) -> str:
    target, label = match[1], match[2]
    if target is None:  # a code span keeps its backticks, as people type commands in a terminal
        return unescape(match[0])
    if target.startswith("@"):
        return target
    label = unescape(label or "")
    if not label or label == target:
        return target
    if style.hyperlinks and _LINKABLE.match(target):
        label = f"{ESC}]8;;{target}{ESC}\\{label}{ESC}]8;;{ESC}\\"
    return f"{label} <{target}>"


def unescape(text: str) -> str:
    """Slack's three entities as characters; &amp; last, so "&amp;lt;" stays the text "&lt;"."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
