"""Sentences, words and code fences: how every part of prdigest reads and writes prose."""
from __future__ import annotations

import unicodedata

from store.text.patterns import LazyPattern

# A sentence ends at . ! or ? followed by space and what can start a sentence:
# a capital, a quote, code, emphasis, a bracket or a #reference. "e.g. foo" and "v1.2" stay whole.
_SENTENCE_END = LazyPattern(r"(?<=[.!?])\s+(?=[A-Z`*_\"'(\[#])")
# Where typed sentences part: after . ! or ?, whatever follows ("changes? we use it …").
_TYPED_SENTENCE_END = LazyPattern(r"(?<=[?.!])\s+")
# The atoms names and questions are compared by, in lowercased text.
_ATOM = LazyPattern(r"[a-z0-9]+")
# An English word as written: letters first, then letters, digits, _ ' or -.
_WORD = LazyPattern(r"[A-Za-z][A-Za-z0-9_'-]*")
# A line that opens or closes a Markdown code block, with its language tag.
_FENCE = LazyPattern(r"\s*(?:`{3,}|~{3,})[\w+-]*\s*")


def sentences(text: str) -> list[str]:
    """The sentences of one paragraph of text, white space folded."""
    folded = " ".join(text.split())
    return _SENTENCE_END.split(folded) if folded else []


def typed_sentences(text: str) -> list[str]:
    """The sentences of a question as people type them, lower case after the stop included: "got removed. can i …"."""
    return _TYPED_SENTENCE_END.split(text)


def lead_and_rest(text: str) -> tuple[str, str]:
    """The first sentence of `text`, and what follows it."""
    parts = _SENTENCE_END.split(" ".join(text.split()), 1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def sentence(text: str) -> str:
    """Capitalised (unless the first word is a mixed-case name like vLLM) and ending in punctuation."""
    text = " ".join(text.split()).strip()
    if not text:
        return ""
    first = text.split(" ", 1)[0]
    if first.islower() and first[0].isalpha():
        text = text[0].upper() + text[1:]
    if text[-1] not in ".!?":
        text = text.rstrip(":;,") + "."
    return text


def atoms(text: str) -> list[str]:
    """Lowercase runs of letters and digits: "FlashInfer-v2" -> ["flashinfer", "v2"]."""
    return _ATOM.findall(text.lower())


def stem(word: str) -> str:
    """A lowercase word without one plural or verb ending, nor a last e: "caching", "caches" and "cache" are "cach"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word.rstrip("e") if len(word) > 4 else word


def holds(said: list[str], phrase: list[str]) -> bool:
    """Whether the words hold the phrase, each word also with a plural or verb ending ("metric" in "metrics")."""
    size = len(phrase)
    return bool(phrase) and any(
        all(stem(word) == stem(want) for word, want in zip(said[i : i + size], phrase)) for i in range(len(said) - size + 1)
    )


def words(text: str) -> list[str]:
    """The English words of `text`, as written."""
    return _WORD.findall(text)


def is_fence(line: str) -> bool:
    """Whether the line opens or closes a code block (``` or ~~~, with or without a language)."""
    return _FENCE.fullmatch(line) is not None


def join_words(items: list[str], last: str = "and") -> str:
    """a, b and c (or `last` before the last)"""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def plural(count: int, noun: str) -> str:
    """"1 file", "3 files"."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def typed(text: str) -> str:
    """What a person typed, in the form it is read: NFKC folds fullwidth letters, ligatures and other
    compatibility forms into the plain ones ("ｒｏｃｍ" is "rocm")."""
    return unicodedata.normalize("NFKC", text)
