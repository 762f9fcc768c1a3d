"""Sentences a teammate would write from an author's Markdown: links read as their labels, bare
URLs and first-person asides leave, labels like "Summary:" go, and nothing ends mid-thought.
"""
from __future__ import annotations

import re

from store.text.patterns import LazyPattern
from store.text.prose import sentence, sentences
from store.understanding.summary.verbs import action

_MD_IMAGE = LazyPattern(r"!\[[^\[\]]{0,300}\]\([^()\s]{0,1000}\)")
_MD_LINK = LazyPattern(r"\[([^\[\]]{1,300})\]\(([^()\s]{0,1000}(?:\([^()\s]{0,200}\)[^()\s]{0,200})?)\)")
_AUTOLINK = LazyPattern(r"<(https?://[^\s<>]{1,1000})>")
_GITHUB_URL = LazyPattern(r"https?://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)(?:[#?/][^\s)\]]*)?")
# A bare URL leaves with the word that pointed at it: "the discussion in <url> for context".
_URL = LazyPattern(r"(?:\b(?:in|at|from|on|see|here|via)\s+)?\(?\s?\bhttps?://[^\s<>()]{0,2000}[^\s<>().,;:!?'\"]\)?", re.I)
_MD_BOLD = LazyPattern(r"\*\*([^*\n]{1,300})\*\*|__([^_\n]{1,300})__")
_MD_ITALIC = LazyPattern(r"(?<![\w*])\*([^*\n]{1,300})\*(?![\w*])")
_MENTION = LazyPattern(r"(?<![\w`])@(?=[A-Za-z0-9])")
_EMPTY_PARENS = LazyPattern(r"\s\(\s*[,;:]?\s*\)")
# Labels authors and templates put before text: "Summary:", "TL;DR -", "FIX #123:".
_LABEL = LazyPattern(
    r"^(?:summary|purpose|motivation|description|overview|background|context|problem|solution|tl;?dr|"
    r"changes?|what|why|how|details|note|notes|update|edit|test plan|test results?|testing|results?|fix|fixes)"
    r"\s*(?::|\s-\s)\s*",
    re.IGNORECASE,
)
# "us" only in lower case and not after a number: "97 us" is microseconds.
_FIRST_PERSON = LazyPattern(r"\b(?:I|I'm|I've|I'd|I'll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|[Ww]e're|[Ww]e've|[Ww]e'll|[Ww]e'd|[Oo]ur|[Oo]urs|[Oo]urselves)\b|(?<![\d.] )\bus\b")
# "We add X" / "I fixed X" / "In this PR, we add X": the author's own words for what the PR does.
_WE_DO = LazyPattern(r"^(?:(?:in )?this (?:pr|change),? )?(?:we|i)\s+(?:now\s+)?(?P<rest>[a-z]+\b.*)$", re.I)
_THIS_PR_DOES = LazyPattern(r"^(?:this|the) (?:pr|pull request|change|patch)\s+(?:is\s+)?(?:to\s+)?(?P<rest>.+)$", re.I)
# Sentences whose point is below or elsewhere: "It fixes the issue below.", "crashes with:".
_DANGLING = LazyPattern(
    r"(?:\b(?:with|to|for|of|the|a|an|and|or|by|in|on|at|from|as|via|like|see|this|these|that|following|below|"
    r"above|here|follows|e\.g|i\.e)|:|,|;|\u2026|\.\.\.)\s*[.!?]?$",
    re.IGNORECASE,
)
_SECOND_PERSON = LazyPattern(r"^(?:please|thanks|thank you|let me know|feel free|cc\b|ping\b|/cc\b|see\b|happy to\b)", re.I)
# A sentence with its own finite verb, or a word like "still", has a subject: "Decode attention still used X".
_HAS_SUBJECT = LazyPattern(r"\b(?:is|are|was|were|can|could|will|would|should|has|have|had|does|did|do|still|already|previously)\b", re.I)
_PAST = LazyPattern(r"^[A-Za-z]+ed\b")
_NEEDS_VERB = LazyPattern(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|should|must|may|might)\b|\w(?:s|ed)\b", re.I)
# A sentence longer than this is a log line or a run-on, not something to quote whole.
MAX_SENTENCE_CHARS = 360


def inline(text: str) -> str:
    """Markdown inline syntax reduced to the words a reader sees: links become their labels,
    issue links "#123", and other bare URLs leave the prose."""
    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(_link_label, text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _GITHUB_URL.sub(lambda m: f"#{m.group(2)}", text)
    text = _URL.sub("", text)
    text = _MD_BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    text = _MD_ITALIC.sub(r"\1", text)
    text = _MENTION.sub("", text)
    text = _EMPTY_PARENS.sub("", text)
    return " ".join(text.split()).replace(" ,", ",").replace(" .", ".")


def _link_label(match: re.Match[str]) -> str:
    label, target = match.group(1), match.group(2)
    github = _GITHUB_URL.fullmatch(target)
    if label.startswith(("http://", "https://")):
        return f"#{github.group(2)}" if github else ""
    return label


def unlabel(text: str) -> str:
    """The text without a leading label: "Summary: Adds X" -> "Adds X"."""
    return _LABEL.sub("", text, count=1).strip()


def lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower():
        return text[0].lower() + text[1:]
    return text


def as_statement(text: str, actor: str = "") -> str | None:
    """One sentence as a teammate says it, or None when it cannot be said so.

    "Add X." -> "This PR adds X."; "We now skip X." -> "This PR skips X."; with an actor,
    "Started a server" -> "The author started a server". An aside in the first person ("I think
    it should go"), a cut-off sentence or one addressed to the reader -> None.
    """
    text = unlabel(text.strip())
    if not text or len(text) > MAX_SENTENCE_CHARS or _SECOND_PERSON.match(text):
        return None
    we_do = _WE_DO.match(text)
    if we_do:
        done = action(we_do["rest"])
        text = f"This PR {done}" if done else text
    elif actor and _PAST.match(text) and action(text):
        text = f"{actor} {lower_first(text)}"
    elif not _THIS_PR_DOES.match(text) and _imperative(text):
        text = f"This PR {action(text)}"
    text = sentence(text)
    if _FIRST_PERSON.search(text) or _DANGLING.search(text) or _fragment(text):
        return None
    return text


# Below this many words a sentence needs a visible verb, or it is a heading-like fragment ("Qwen3 crash.").
FRAGMENT_WORDS = 6


def _fragment(text: str) -> bool:
    rest = text.split(" ", 1)
    return len(rest) < 2 or (len(text.split()) < FRAGMENT_WORDS and not _NEEDS_VERB.search(rest[1]))


_NOUN_USE = frozenset({"for", "of", "to", "is", "was", "in", "on", "with", "that", "which"})


def _imperative(text: str) -> bool:
    """Whether the sentence is an instruction ("Add X", "Fixed X") rather than a statement whose subject
    happens to look like a verb ("Fix for the crash", "Streaming requests hit", "Logged prompts can be")."""
    words = text.split(" ", 2)
    if len(words) < 3 or words[1].lower() in _NOUN_USE or words[0].lower().endswith("ing"):
        return False
    return action(text) is not None and not _HAS_SUBJECT.search(text)


def statements(paragraph: str, actor: str = "") -> list[str]:
    """The sentences of a paragraph a teammate would keep, each whole."""
    kept = []
    for part in sentences(paragraph):
        said = as_statement(part, actor)
        if said:
            kept.append(said)
    return kept


def fit(parts: list[str], limit: int) -> str:
    """Whole sentences, in order, up to `limit` characters; never a cut one."""
    kept: list[str] = []
    size = 0
    for part in parts:
        if kept and size + 1 + len(part) > limit:
            break
        if len(part) <= limit:
            kept.append(part)
            size += len(part) + 1
    return " ".join(kept)
