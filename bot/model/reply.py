"""Reading a model's summary of one PR, in whatever shape real models send it.

The reply is untrusted text. Accepted: a JSON object (bare, fenced or among prose), or
Markdown with the four sections under `## Label`, `### Label:`, `**Label**`, `1. Label`,
`Label:` or `**Label:** text` headings, a TYPE line anywhere in any case, the whole in a
code fence, reasoning blocks, a preamble before the first section and closing remarks
after the last. Only the model's four sections are kept, each as one paragraph.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bot.model.client import without_reasoning
from bot.model.prompt import json_field
from store.model import TYPES
from store.report.markdown import SECTIONS
from store.text.prose import is_fence

# Replies longer than this are not summaries (a model ignoring max_tokens, or looping).
MAX_REPLY_CHARS = 20_000
# A section longer than this is a model rambling, not a summary.
MAX_SECTION_CHARS = 2500


class ReplyFormatError(ValueError):
    """A reply that is not the four sections and the type; str() says what is wrong, in one line."""


@dataclass
class ParsedReply:
    type: str
    sections: dict[str, str]  # keys of store.report.markdown.SECTIONS, in order


def parse_reply(text: str) -> ParsedReply:
    """The type and the four non-empty sections; anything else is a ReplyFormatError."""
    text = without_reasoning(text)
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyFormatError(f"the reply is {len(text):,} characters long")
    if not text:
        raise ReplyFormatError("the reply holds nothing but reasoning")
    found = _json_object(text)
    kind, collected = _from_json(found) if found is not None else _from_markdown(text)
    return _checked(kind, collected)


def _checked(kind: str | None, collected: dict[str, list[str]]) -> ParsedReply:
    if kind not in TYPES:
        raise ReplyFormatError(f"expected one TYPE line, substantial or trivial (found {kind or 'none'})")
    missing = [label for key, label in SECTIONS if key not in collected]
    if missing:
        raise ReplyFormatError(f"missing section(s): {', '.join(missing)}")
    sections = {key: _flatten(collected[key]) for key, _ in SECTIONS}
    for key, label in SECTIONS:
        if not sections[key]:
            raise ReplyFormatError(f"section {label!r} is empty")
        if len(sections[key]) > MAX_SECTION_CHARS:
            raise ReplyFormatError(f"section {label!r} is {len(sections[key])} characters long")
    return ParsedReply(type=kind, sections=sections)


# ---------------------------------------------------------------- names of the sections


def _words(name: str) -> str:
    """A heading or field name compared by its words alone: "Technical_Impact" is "technical impact"."""
    return " ".join(re.findall(r"[a-z]+", name.lower().replace("&", " and ")))


# Full labels (and their JSON fields) may open a section with text on the same line;
# the short names only as a heading on a line of its own.
_FULL_NAMES = {_words(label): key for key, label in SECTIONS}
_SHORT_NAMES = {_words(key): key for key, _ in SECTIONS} | {"what changed": "what_changed"}
_FIELDS = _FULL_NAMES | _SHORT_NAMES | {_words(json_field(label)): key for key, label in SECTIONS}
_TYPE_FIELDS = {"type", "pr type", "change type"}


# ---------------------------------------------------------------- JSON


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object the reply is, or holds between its first { and its last } (past a preamble, inside
    a code fence, before closing remarks); None without one. Reasoning is the caller's to leave out."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        found = json.loads(text[start : end + 1], strict=False)  # models put raw newlines in strings
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object the reply holds, when it has a summary's fields; None without one."""
    found = json_object(text)
    if found is None:
        return None
    fields = _json_fields(found)
    return found if any(_words(name) in _FIELDS or _words(name) in _TYPE_FIELDS for name in fields) else None


def _json_fields(found: dict[str, Any]) -> dict[str, Any]:
    """The object's fields, with those of a nested object (`{"summary": {...}}`) lifted up."""
    fields = dict(found)
    for value in found.values():
        if isinstance(value, dict):
            fields.update(value)
    return fields


def _from_json(found: dict[str, Any]) -> tuple[str | None, dict[str, list[str]]]:
    kind = None
    collected: dict[str, list[str]] = {}
    for name, value in _json_fields(found).items():
        words = _words(name)
        if words in _TYPE_FIELDS and isinstance(value, str):
            kind = _type_word(value)
        elif words in _FIELDS and not isinstance(value, dict):
            items = value if isinstance(value, list) else [value]
            collected[_FIELDS[words]] = [line for item in items for line in str(item).split("\n")]
    return kind, collected


def _type_word(value: str) -> str | None:
    match = re.match(r"[\W_]*([A-Za-z]+)", value)
    return match.group(1).lower() if match else None


# ---------------------------------------------------------------- Markdown

# Markup that may open a heading or the TYPE line, one piece at a time: "### 1. **", "- **".
_OPENER = re.compile(r"(?:#{1,6}|>|[-+*\u2022](?=\s)|\d{1,2}[.)]|\*\*|__|\*)\s*")
# Between a heading's label and the text after it: colons, closing emphasis, spaces.
_CLOSER = re.compile(r"[\s*_:`]*")
_RULE = re.compile(r"[-*_=]{3,}")
_TYPE_NAME = re.compile(r"type\b", re.IGNORECASE)
_TYPE_VALUE = re.compile(r"[\s*_`'\"]*([A-Za-z]+)([\s*_`'\".]*)")
# A section's name at the start of a line, in any case, with "&" for "and".
_NAME = re.compile(
    "|".join(
        r"\s+".join("(?:and|&)" if word == "and" else word for word in name.split())
        for name in sorted(_FULL_NAMES | _SHORT_NAMES, key=len, reverse=True)
    ) + r"\b",
    re.IGNORECASE,
)
# The first words of a chat reply's sign-off, after the last section.
_CLOSING = re.compile(
    r"[\W_]*(?:let me know|i hope|hope (?:this|that)|feel free|if you (?:need|want|would|have|'d)|please let me"
    r"|happy to|i can (?:also )?(?:provide|help|expand|elaborate)|would you like|do you want|is there anything"
    r"|this summary (?:is|was|should|covers|captures)|note: this summary)",
    re.IGNORECASE,
)


def _from_markdown(text: str) -> tuple[str | None, dict[str, list[str]]]:
    sections = _MarkdownSections()
    for line in text.split("\n"):
        sections.read(line)
    return sections.result()


class _MarkdownSections:
    """The TYPE and the sections of a Markdown reply, read line by line."""

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.collected: dict[str, list[str]] = {}
        self.current: list[str] | None = None
        self.type_heading = False  # the last marker was "## Type" alone: its value is on the next line

    def read(self, line: str) -> None:
        bare = line.strip()
        if is_fence(bare) or self._type_value(bare) or self._type(line):
            return
        heading = _heading(line)
        if heading:
            self._open(*heading)
        elif self.current is not None:
            self.current.append(line)
        # Before the first section: a preamble ("Here is the summary:"), never kept.

    def _type_value(self, bare: str) -> bool:
        """Whether the line is the value of a "## Type" heading alone on the line before."""
        if not (self.type_heading and bare):
            return False
        self.type_heading = False
        value = _TYPE_VALUE.fullmatch(bare)
        if value:
            self.kinds.add(value.group(1).lower())
        return bool(value)

    def _type(self, line: str) -> bool:
        """Whether the line is a TYPE line, or a type heading alone."""
        typed = _type_line(line)
        if typed is None:
            return False
        self.type_heading = not typed
        self.kinds.update([typed] if typed else [])
        return True

    def _open(self, key: str, rest: str) -> None:
        if key in self.collected:
            raise ReplyFormatError(f"section {dict(SECTIONS)[key]!r} appears twice")
        self.current = self.collected[key] = [rest]

    def result(self) -> tuple[str | None, dict[str, list[str]]]:
        if len(self.kinds) > 1:
            raise ReplyFormatError(f"expected one TYPE line, substantial or trivial (found {', '.join(sorted(self.kinds))})")
        if self.current is not None:
            self.current[:] = _without_closing(self.current)
        return (self.kinds.pop() if self.kinds else None), self.collected


def _type_line(line: str) -> str | None:
    """The type a TYPE line gives (lower case, maybe not a valid one), "" for a type heading alone, else None."""
    marker = _marker(line, _TYPE_NAME)
    if marker is None:
        return None
    _, closer, rest = marker
    if not rest:
        return ""
    value = _TYPE_VALUE.match(rest) if ":" in closer else None
    if value is None:
        return None
    word = value.group(1).lower()
    # "Type: substantial (adds a new API)" is a TYPE line; "Type: hints are..." is section text.
    return word if word in TYPES or value.end() == len(rest) else None


def _heading(line: str) -> tuple[str, str] | None:
    """(section key, text after the heading on the same line) when `line` opens a section."""
    marker = _marker(line, _NAME)
    if marker is None:
        return None
    name, closer, rest = marker
    words = _words(name)
    if not rest:
        return (_FULL_NAMES | _SHORT_NAMES)[words], ""
    # Text on the heading's line only after a full label closed by a colon or bold: "**Key insights:** ...".
    if words in _FULL_NAMES and (":" in closer or "**" in closer or "__" in closer):
        return _FULL_NAMES[words], rest
    return None


def _marker(line: str, name: re.Pattern[str]) -> tuple[str, str, str] | None:
    """(name, closer, rest) when `line` past its markup starts with `name`:
    "**Type:** trivial" gives ("Type", ":** ", "trivial")."""
    text = _without_openers(line)
    found = name.match(text)
    if not found:
        return None
    after = text[found.end() :]
    closing = _CLOSER.match(after)
    assert closing is not None, "_CLOSER matches the empty string too"
    closer = closing.group(0)
    return found.group(0), closer, after[len(closer) :].strip()


def _without_openers(line: str) -> str:
    text = line.strip()
    for _ in range(4):  # "> ### 1. **Label**" has four
        opener = _OPENER.match(text)
        if not opener:
            break
        text = text[opener.end() :]
    return text


def _without_closing(lines: list[str]) -> list[str]:
    """The last section without what a chat reply adds after it: a rule and a note, or a sign-off."""
    for index in range(len(lines) - 1, 0, -1):
        if _RULE.fullmatch(lines[index].strip()):
            lines = lines[:index]
            break
    kept = [line for line in lines if line.strip()]
    while len(kept) > 1 and _CLOSING.match(kept[-1]):
        kept.pop()
    return kept


_LINE_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+\u2022]\s+|\d+[.)]\s+|>\s*)")


def _flatten(lines: list[str]) -> str:
    """A section as one paragraph, like the reports' own: list markers, headings and rules dropped.

    One paragraph also keeps a line such as "## x" or "---" from splitting the
    Markdown report the section is written into.
    """
    kept = [_LINE_MARKUP.sub("", line).strip() for line in lines if not _RULE.fullmatch(line.strip())]
    return " ".join(" ".join(line for line in kept if line).split())
