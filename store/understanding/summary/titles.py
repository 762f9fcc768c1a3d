"""PR titles as clauses: "[Perf] Optimize X" -> "This PR optimizes X.", reverts and scoped titles included."""
from __future__ import annotations

import re

from store.model import PullRequest
from store.text.patterns import LazyPattern
from store.text.prose import sentence
from store.understanding.areas import title_tags
from store.understanding.summary.verbs import action, gerund

_FINITE = LazyPattern(r"\b(?:should|must|is|are|was|were|will|can|cannot|now|no longer|does|do|doesn't|don't)\b", re.I)
# A number after the quotes is the revert's own (a squash commit's title) or, written by hand, the reverted PR's
# (store.understanding.relations.revert_title): the sentence names only the one inside.
_REVERT_QUOTED = LazyPattern(r'^\s*revert\s*"(?P<inner>.*?)(?:\s*\((?P<ref>#\d+)\))?"\s*(?:\(#\d+\))?\s*$', re.I)
_REVERT_REF = LazyPattern(r"^\s*revert\s+(?:pr\s+)?(?P<ref>#\d+)\b(?P<rest>.*)$", re.I)
_REVERT = LazyPattern(r"^\s*revert\b", re.I)
PREFIX = LazyPattern(
    r"^\s*(?:(?:\[[^\[\]]*\][\s:]*)+|(?:feat|fix|docs|style|refactor|perf|test|build|ci|chore)(?:\([^)]*\))?!?:\s*)",
    re.I,
)
_SCOPED = LazyPattern(r"^(?P<scope>[^:]{2,40}):\s+(?P<rest>.+)$")
_DONT = LazyPattern(r"^(?:don'?t|do not|never)\s+(?P<verb>[A-Za-z]+)\b(?P<rest>.*)$", re.I)
# A bugfix title that says "fix" itself ("Double-buffer X to fix Y") is no "fixes Double-buffer …".
_FIXES = LazyPattern(r"\bfix(?:es|ed|ing)?\b", re.IGNORECASE)
# A plain capitalised word that is no name ("Cover", not "Qwen3" or "vLLM") most likely starts an
# instruction with a verb the list lacks: quoting the title reads better than gluing it into a clause.
_UNKNOWN_VERB = LazyPattern(r"^[A-Z][a-z]+ (?!of\b|for\b|in\b|on\b|and\b)[a-z]")
_KIND_BY_TAG = (
    ("perf", "performance change"), ("performance", "performance change"),
    ("doc", "documentation change"), ("feature", "feature"), ("refactor", "refactor"),
    ("model", "model change"), ("newmodel", "new model"), ("kernel", "kernel change"),
    ("ci", "CI change"), ("cibuild", "CI and build change"), ("build", "build change"), ("test", "test change"),
    ("frontend", "frontend change"), ("core", "core change"), ("hardware", "hardware support change"),
)


def is_revert(pr: PullRequest) -> bool:
    return bool(_REVERT.match(pr.title))


def _kind(title: str) -> str:
    tags = set(title_tags(title))
    return next((noun for tag, noun in _KIND_BY_TAG if tag in tags), "change")


def _revert_sentence(title: str) -> str | None:
    quoted = _REVERT_QUOTED.match(title)
    if quoted:
        inner = PREFIX.sub("", quoted["inner"]).strip() or quoted["inner"]
        ref = f" {quoted['ref']}," if quoted["ref"] else ""
        return f"This PR reverts{ref} \u201c{inner.rstrip('.')}\u201d."
    by_ref = _REVERT_REF.match(title)
    if by_ref:
        rest = by_ref["rest"].strip(" :-")
        return sentence(f"This PR reverts {by_ref['ref']}" + (f" ({rest})" if rest else ""))
    return None


def _clause(rest: str) -> str | None:
    """ "Optimize X" -> "optimizes X", "Don't crash on X" -> "stops crashing on X"; None for a noun phrase."""
    done = action(rest)
    if done and " " in done:
        return done
    dont = _DONT.match(rest)
    return f"stops {gerund(dont['verb'].lower())}{dont['rest']}" if dont else None


def title_sentence(title: str) -> str:
    """The title as a sentence: "[Perf] Optimize X" -> "This PR optimizes X."."""
    reverted = _revert_sentence(title)
    if reverted:
        return reverted
    rest = PREFIX.sub("", title).strip().rstrip(".") or title.strip().rstrip(".")
    clause = _clause(rest)
    if clause:
        return sentence(f"This PR {clause}")
    scoped = _SCOPED.match(rest)
    scoped_clause = _clause(scoped["rest"]) if scoped else None
    if scoped and scoped_clause:
        return f"For {scoped['scope']}, this PR {scoped_clause}."
    if _FINITE.search(rest):
        return sentence(rest)
    if "bugfix" in title_tags(title) and " " in rest and not _FIXES.search(rest):  # never "fixes X to fix Y"
        return sentence(f"This PR fixes {rest}")
    if " " not in rest or _UNKNOWN_VERB.match(rest):
        return f"This {_kind(title)} is titled \u201c{rest}\u201d."
    return sentence(f"This {_kind(title)} concerns {rest}")
