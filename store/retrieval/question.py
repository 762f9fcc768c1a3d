"""What a question about merged PRs asks for: when, by whom, in which areas, which PRs, and about what.

The parser is deliberately forgiving: whatever it does not recognise as a time,
person, area or PR reference stays free text, and search decides what matches.
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from store.model import TYPES
from store.retrieval.form import SUPERLATIVE, read_form
from store.retrieval.when import TimeRange, read_time
from store.text.patterns import LazyPattern
from store.text.prose import atoms, stem
from store.understanding import vocabulary
from store.understanding.areas import aliases as area_aliases
from store.understanding.areas import resolve_area


class Lookup(Protocol):
    """What the parser may ask the store: is this word a person, is this number a PR, did any PR merge then."""

    def login(self, name: str) -> str | None: ...

    def full_name(self, first: str, last: str) -> str | None: ...

    def is_pr(self, number: int) -> bool: ...

    def is_path(self, fragment: str) -> bool: ...

    def says(self, word: str) -> bool: ...

    def merged_between(self, start: datetime, end: datetime) -> bool: ...


@dataclass(frozen=True)
class Person:
    login: str
    role: str  # "any" (author or merger), "author", "merger"


@dataclass(frozen=True)
class Concept:
    """Something the question is about: the words as asked, what means the same, and related phrases."""

    said: str
    phrases: Phrases


@dataclass
class Question:
    text: str
    time: TimeRange | None = None
    people: list[Person] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    # The words that named an area ("scheduler" for core), their synonyms and the
    # area's name: a PR that says them counts as being about the area.
    area_phrases: list[str] = field(default_factory=list)
    # Of those, the words as asked and what means the same: PRs saying these come first.
    area_same: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    pr_type: str | None = None  # "trivial" or "substantial" when the question names one
    # "first" or "last": the one PR that merged first or last of those asked about; "largest" (most files changed) or
    # "gain" (the largest improvement stated): the one PR that is most of it.
    order: str | None = None
    tally: str | None = None  # "author", "merger" or "area": who or what has the most PRs, whose PRs come first
    linked: tuple[str, ...] = ()  # "what got reverted?", "was X relanded?": the kinds of link whose other side is asked
    paths: list[str] = field(default_factory=list)  # lowercase parts of changed files' paths ("vllm/config/", "envs.py")
    about_risks: bool = False  # "what could go wrong", "risks of": answered from what PRs say among their risks
    improves: bool = False  # "what cut TTFT?", "made ITL better": asks for PRs that state a gain in what it names
    removes: bool = False  # "which PR dropped --x?": asks for what took a thing out, not what it is
    # Areas named as alternatives ("speech / audio", "LoRA on TPU or XPU"): a PR is in one area of each group.
    # Empty, or not of the areas asked (they were dropped): a PR is in all of them.
    area_groups: list[tuple[str, ...]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # logins left out ("besides the bot"); "bots" for every bot
    # "not about CI", "isn't ROCm CI", "not CI or docs": a PR in every area of one of these groups is left out.
    excluded_areas: list[tuple[str, ...]] = field(default_factory=list)
    # "that isn't tool calling", "apart from the metrics one": a PR whose title or first sentence says these is left out.
    excluded_words: list[Concept] = field(default_factory=list)
    # "didn't touch anything under tests/": a PR that changed a file whose path holds one of these is left out.
    excluded_paths: list[str] = field(default_factory=list)
    unknown: list[Concept] = field(default_factory=list)  # words asked that no PR says: they count against every PR
    # "which of those …" in a thread: the earlier answer's PRs, the only ones this question may cite.
    within: list[int] = field(default_factory=list)
    # "anything newer?" ("after") or "his earlier work?" ("before"): the earlier question's time, from its other side.
    relative: str | None = None
    besides: list[int] = field(default_factory=list)  # "what else did they land?": what the earlier answer cited

    @property
    def has_filters(self) -> bool:
        return bool(self.time or self.people or self.areas or self.paths or self.within)

    def in_areas(self, areas: list[str]) -> bool:
        """Whether a PR of these areas is in the question's: all named together, one of those named as alternatives."""
        return all(set(group) & set(areas) for group in self.areas_together())

    def areas_together(self) -> list[tuple[str, ...]]:
        """The groups a PR must be in one area of each: alternatives in one group, areas named together apart."""
        if sorted({area for group in self.area_groups for area in group}) == sorted(self.areas):
            return self.area_groups
        return [(area,) for area in self.areas]

    @property
    def has_filters_besides_areas(self) -> bool:
        return bool(self.time or self.people or self.paths or self.within)

    @property
    def leaves_out(self) -> bool:
        return bool(self.excluded or self.excluded_areas or self.excluded_words or self.excluded_paths or self.besides)

    @property
    def has_topic(self) -> bool:
        return bool(self.areas or self.concepts or self.numbers)

    @property
    def is_empty(self) -> bool:
        return not (self.has_filters or self.has_topic or self.leaves_out)

    @property
    def elliptical(self) -> bool:
        """Whether the question leans on an earlier one: it says nothing of its own, opens with "and" or
        "what about", or points back ("who wrote it?"). Any other question stands alone."""
        says_something = self.has_topic or self.time or self.people or self.paths
        return not says_something or bool(_LEANS_BACK.search(self.text.lower()))

    @property
    def continues(self) -> bool:
        return continues(self.text)

    @property
    def points_back(self) -> bool:
        """Whether the question is about PRs an earlier answer gave ("was any of that reverted?", "did it come
        back?", "were they reverted?"), and names nothing of its own to ask it of."""
        names_its_own = self.numbers or self.paths or self.areas or self.people
        return not names_its_own and bool(_POINTS_BACK.search(self.text.lower()))

    @property
    def narrows(self) -> bool:
        """Whether the question picks among what an earlier answer gave: "which of those touched ROCm?"."""
        return bool(_NARROWS.search(self.text.lower()))

    @property
    def picks_among(self) -> bool:
        """Whether the question asks which of the earlier answer's PRs answer it, they being its subject."""
        return bool(_PICKS_AMONG.search(self.text.lower()))

    @property
    def points_at_people(self) -> bool:
        """Whether the question is about the people an earlier answer named: "what else did they land?"."""
        return not self.people and bool(_PEOPLE_BACK.search(self.text.lower()))

    def following(self, earlier: Question) -> Question:
        """This question as a follow-up in a thread: what it leaves unsaid, the earlier one supplies.

        "and on ROCm?" after "what changed in the scheduler this week?" keeps the
        week and swaps the topic; "and by njhill?" keeps both. A question that
        leaves out only the time keeps the thread's ("anything on ROCm?"); one that
        says its own time takes nothing more unless it leans back ("how many PRs
        merged on Feb 28?" after a question about a leak is about every PR).
        """
        merged = replace(self)
        if merged.time is None and earlier.time:
            if self.relative == "after" and earlier.time.end:
                merged.time = TimeRange(earlier.time.end, None, "since then")
            elif self.relative == "before" and earlier.time.start:
                merged.time = TimeRange(None, earlier.time.start, "before then")
        if merged.time is None:
            merged.time = earlier.time
        if not self.elliptical:
            return merged
        if merged.pr_type is None:
            merged.pr_type = earlier.pr_type
        if not self.leaves_out:
            # "not counting the bot, who merged the most yesterday?" then "and on apr 9?": still not counting it.
            merged.excluded, merged.excluded_areas = list(earlier.excluded), list(earlier.excluded_areas)
            merged.excluded_words, merged.excluded_paths = list(earlier.excluded_words), list(earlier.excluded_paths)
        if merged.order is None:
            merged.order = earlier.order
        if merged.tally is None:
            merged.tally = earlier.tally
        if not merged.people:
            merged.people = list(earlier.people)
        if not merged.has_topic and not merged.paths:
            merged.paths = list(earlier.paths)
            merged.areas = list(earlier.areas)
            merged.area_groups = list(earlier.area_groups)
            merged.area_phrases = list(earlier.area_phrases)
            merged.area_same = list(earlier.area_same)
            merged.concepts = list(earlier.concepts)
            merged.numbers = list(earlier.numbers)
        return merged

    def noun(self, count: int = 0, many: bool = False) -> str:
        """What the question counts, for `count` of them or `many`: "PR", "trivial PRs"."""
        return f"{self.pr_type + ' ' if self.pr_type else ''}{'PR' if count == 1 and not many else 'PRs'}"

    def describe(self) -> str:
        """The filters and topic in words, for framing an answer: 'merged on Fri Feb 13 in ci about "fixes"'.

        Whether the PRs are trivial or substantial is said by `noun`."""
        roles = {person.role for person in self.people}
        logins = " or ".join(person.login for person in self.people)
        single_role = len(roles) == 1
        verb = {"author": "authored", "merger": "merged"}.get(next(iter(roles), ""), "authored or merged")
        parts = [f"{verb} by {logins}" if single_role else "merged"]
        if self.time:
            parts.append(self.time.label)
        if self.within:
            parts.append(f"among those {len(self.within)}")
        if self.besides:
            parts.append(f"besides those {len(self.besides)}")
        if self.people and not single_role:
            parts.append(_describe_people(self.people))
        groups = self.areas_together()
        if groups:
            alternatives = [" or ".join(group) for group in groups]
            if len(groups) > 1:
                alternatives = [f"({names})" if len(group) > 1 else names for names, group in zip(alternatives, groups)]
            parts.append("in " + " and ".join(alternatives))
        if self.paths:
            parts.append("touching " + " or ".join(f"`{path}`" for path in self.paths))
        if self.concepts:
            parts.append("about " + ", ".join(f'"{concept.said}"' for concept in self.concepts))
        bots = BOTS in self.excluded
        left_out = [
            *([BOTS] if bots else []),
            *(login for login in self.excluded if login != BOTS and not (bots and is_bot(login))),
            *(" ".join(group) for group in self.excluded_areas),
            *(f'"{concept.said}"' for concept in self.excluded_words),
            *(f"what touches `{path}`" for path in self.excluded_paths),
        ]
        if left_out:
            parts.append("leaving out " + ", ".join(left_out))
        return " ".join(parts)


# Openings and words that lean on an earlier question.
_OPENINGS = r"^\W*(?:and|also|plus|or|then|what\s+about|how\s+about|same\s+(?:for|on|in|with))\b"
_CONTINUES = LazyPattern(_OPENINGS)
_LEANS_BACK = LazyPattern(_OPENINGS + r"|\b(?:it|its|those|them|these|they|this\s+one|that\s+one|the\s+same|there)\b")


# The PRs an earlier answer gave, pointed at: "it", "that one", "any of those".
# "that" only as a pronoun ("was that reverted?", "any of that"), not as a relative ("anything that touched ROCm").
_POINTS_BACK = LazyPattern(
    r"\b(?:it|those|them|these|they|this\s+one|that\s+one)\b|\bof\s+that\b"
    r"|^\W*(?:was|were|is|are|did|does|has|had)\s+that\b"
)
_THOSE = r"(?:those|them|these|that)"
# "who merged the moe one?": one of them, named by what it is about.
_NARROWS = LazyPattern(
    rf"\b(?:of|among)\s+{_THOSE}\b|^\W*(?:just|only)\s+the\b|^\W*(?:which|what)\s+ones?\b|\bwhich\s+one\s+of\b"
    r"|\bthe\s+(?!other\b|same\b|last\b|first\b|next\b|new\b|old\b|right\b|only\b)[\w-]+(?:\s+[\w-]+)?\s+one\b"
)
# Of those, the questions whose subject is the earlier PRs themselves: "which of those was the fix?", "any of
# those a revert?" (not "what reverted any of those?", which asks for other PRs).
_PICKS_AMONG = LazyPattern(
    rf"^\W*(?:(?:which|what)(?:\s+one)?\s+of\s+{_THOSE}|(?:which|what)\s+ones?|(?:(?:is|are|was|were)\s+)?any\s+of\s+{_THOSE})\b"
)
_PEOPLE_BACK = LazyPattern(r"\b(?:they|he|she|him|her|hers|their|his)\b")


def continues(text: str) -> bool:
    """Whether a question opens by carrying on from the one before: "and on apr 9?", "what about ROCm?"."""
    return bool(_CONTINUES.search(text.lower()))


def _describe_people(people: list[Person]) -> str:
    by_role = {"any": "by", "author": "authored by", "merger": "merged by"}
    return " or ".join(f"{by_role[person.role]} {person.login}" for person in people)


# ---------------------------------------------------------------- vocabulary

_STOPWORDS = frozenset(
    ["a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "anything", "are", "around", "as", "at", "be", "been", "before", "being", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "during", "each", "else", "ever", "every", "few", "for", "from", "get", "gets", "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "know", "let", "lets", "like", "me", "more", "most", "much", "my", "need", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "please", "same", "she", "should", "show", "so", "some", "something", "such", "tell", "than", "that", "thats", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "very", "was", "we", "were", "what", "whats", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "yet", "you", "your", "yours", "give", "find", "list", "see", "look", "looking", "want", "wanted", "hi", "hey", "hello", "thanks", "thank", "ok", "okay", "everything", "whatever", "related", "specific", "based", "family", "area", "areas", "busiest", "top", "human", "humans", "maintainer", "maintainers", "folder", "folders", "dir", "dirs", "directory", "directories", "pls", "plz", "mention", "mentions", "mentioned", "claim", "claims", "quote", "quotes", "actual", "actually", "terms", "person", "data", "counts", "bits", "explicitly", "class", "ish", "boxes", "marked", "labeled", "labelled", "tagged", "flagged", "either", "isn", "aren", "wasn", "weren", "don", "doesn", "didn", "hasn", "haven", "still", "anymore", "back", "reports", "across", "bring", "brings", "brought", "box", "love", "etc", "lunch", "ones", "bot", "prdigest", "pr", "prs", "pull", "pulls", "request", "requests", "merged", "merge", "merges", "merging", "land", "landed", "lands", "change", "changed", "changes", "happen", "happened", "happening", "new", "recent", "recently", "latest", "lately", "go", "going", "went", "made", "make", "anybody", "anyone", "someone", "team", "people", "thing", "things", "stuff", "work", "worked", "one", "today", "yesterday", "week", "month", "day", "days", "morning", "afternoon", "evening", "night", "tonight", "working", "ship", "shipped", "shipping", "busy", "many", "total", "add", "adds", "added", "adding", "touch", "touches", "touched", "touching", "update", "updates", "updated", "updating", "modify", "modifies", "modified", "edit", "edits", "edited", "editing", "changing", "author", "authored", "wrote", "write", "written", "opened", "far", "works", "himself", "herself", "themselves", "itself", "myself", "ourselves", "yourself", "card", "cards", "prolific", "say", "time", "together", "combined", "intersection", "interplay", "combining", "mess", "lunchtime", "gotten", "eat", "eats", "eating", "blow", "blows", "gave", "gives", "giving", "interact", "interacts", "interacting", "interaction", "interactions", "hardware", "late", "early", "burst", "whose", "thurs", "tues", "weds", "thu", "tue", "wed", "brand", "overall", "reported", "claimed", "original", "among", "amongst", "wat", "asking", "asked", "folks", "wondering", "re", "ve", "ll", "older", "youre", "youve", "theyre", "theyve", "weve", "ive", "im", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "hasnt", "havent", "cant", "wont", "shouldnt", "wouldnt", "couldnt", "whos", "wheres", "hows", "theres", "heres"]
)

def misspelt_filler(word: str) -> bool:
    """Whether `word` is a common question word typed with one slip ("waht", "whcih", "chnages", "workin")."""
    return len(word) >= 4 and word not in _STOPWORDS and any(_one_slip(word, filler) for filler in _OFTEN_MISTYPED)


# The question words people type fast; a word one slip from these is taken as one of them. Short words and
# rarer fillers are left out: one slip from "who" or "made" is too many real words ("mode", "wasm").
_OFTEN_MISTYPED = (
    "what", "which", "when", "where", "anything", "anyone", "anybody", "something", "someone", "change", "changes",
    "changed", "merged", "landed", "working", "happened", "between", "please", "about", "there", "these", "those",
    "yesterday", "today", "recent", "recently", "lately", "related", "thanks", "work", "worked", "things",
    "everything",
)


def _one_slip(typed: str, meant: str) -> bool:
    """One letter added, dropped, changed, or two neighbours swapped."""
    if abs(len(typed) - len(meant)) > 1 or typed[0] != meant[0]:
        return False
    if len(typed) == len(meant):
        diff = [i for i, (a, b) in enumerate(zip(typed, meant)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and typed[diff[0]] == meant[diff[1]] and typed[diff[1]] == meant[diff[0]])
    short, long_ = sorted((typed, meant), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


# Longer text is cut: each word may cost a lookup, and a question is short.
MAX_QUESTION_CHARS = 600
MAX_CONCEPTS = 12

_WORD = LazyPattern(r"[a-z0-9]+(?:[-_./+][a-z0-9]+)*")


def _subwords(text: str) -> tuple[str, ...]:
    return tuple(atoms(text))


def _subwords_of(words: list[str]) -> tuple[str, ...]:
    """The subwords of several words, as one phrase: what the synonyms are keyed by."""
    return tuple(sub for word in words for sub in _subwords(word))


@dataclass(frozen=True)
class _SynonymGroup:
    terms: tuple[tuple[str, ...], ...]
    narrower: tuple[tuple[str, ...], ...]
    # Work said of the whole family ("Intel GPUs") is work for each member ("Battlemage"), not broader than it.
    family: bool = False

    def expand(self, said: tuple[str, ...]) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
        """What means the same as `said`, and what is only related (narrower, or the wider terms)."""
        if said in self.terms:
            return self.terms, self.narrower
        return (said,), self.terms


@cache
def _synonym_specs() -> list[dict[str, Any]]:
    """The groups of synonyms.toml and of vLLM's vocabulary."""
    # Imported here: only a question with words in it reads the synonyms.
    import tomllib
    from importlib import resources

    text = resources.files("store.retrieval").joinpath("synonyms.toml").read_text(encoding="utf-8")
    return list(tomllib.loads(text)["group"]) + vocabulary.groups()


@cache
def _synonyms() -> dict[tuple[str, ...], list[_SynonymGroup]]:
    """Every term and narrower term, as its subwords, to the groups that hold it."""
    index: dict[tuple[str, ...], list[_SynonymGroup]] = {}
    for spec in _synonym_specs():
        group = _SynonymGroup(
            terms=tuple(_subwords(term) for term in spec["terms"]),
            narrower=tuple(_subwords(term) for term in spec.get("narrower", [])),
            family=bool(spec.get("family", False)),
        )
        for term in group.terms + group.narrower:
            index.setdefault(term, []).append(group)
    return index


@cache
def _longest_synonym() -> int:
    return max(len(term) for term in _synonyms())


@dataclass(frozen=True)
class Phrases:
    same: tuple[str, ...]  # the words as asked first, then what means the same
    all: tuple[str, ...]  # `same`, then related terms
    wider: tuple[str, ...] = ()  # of the related terms, those broader than what was asked


def synonyms_of(words: tuple[str, ...]) -> Phrases:
    """The phrases to search for `words` (subwords)."""
    same = [words]
    related: list[tuple[str, ...]] = []
    wider: list[tuple[str, ...]] = []
    kin: list[tuple[str, ...]] = []
    for group in _synonyms().get(words, []):
        equal, other = group.expand(words)
        same.extend(equal)
        related.extend(other)
        if words not in group.terms:  # asked for a narrower term: the group's terms are broader, or its family's
            (kin if group.family else wider).extend(other)
    wider = [phrase for phrase in wider if phrase not in kin]
    # A phrase that holds the words asked ("extra gpu memory" for "memory") finds nothing they do not: left out,
    # it costs no lookup in the index.
    same = [phrase for phrase in same if phrase == words or not _holds_words(phrase, words)]
    related = [phrase for phrase in related if not _holds_words(phrase, words)]
    same_text = tuple(dict.fromkeys(" ".join(phrase) for phrase in same))
    all_text = tuple(dict.fromkeys(same_text + tuple(" ".join(phrase) for phrase in related)))
    return Phrases(same_text, all_text, tuple(dict.fromkeys(" ".join(phrase) for phrase in wider if phrase in related)))


def _holds_words(phrase: tuple[str, ...], words: tuple[str, ...]) -> bool:
    size = len(words)
    return any(phrase[i : i + size] == words for i in range(len(phrase) - size + 1))


# ---------------------------------------------------------------- paths

# A path as people write one: with a slash ("vllm/config/", "tests/v1/core"), a file with an extension
# ("envs.py", "CMakeLists.txt"), or a dot folder (".buildkite").
_EXTENSIONS = "py|pyi|cu|cuh|cpp|cc|c|h|hpp|txt|toml|yaml|yml|json|md|rst|sh|cmake|in|cfg|ini|jinja|j2|dockerfile"
_PATH = LazyPattern(
    rf"(?<![\w/.@-])(\.?[a-z0-9_][\w.-]*(?:/[\w.-]+)+/?|\.?[a-z0-9_][\w.-]+/(?![\w])|[a-z0-9_][\w-]*(?:\.[\w-]+)*\.(?:{_EXTENSIONS})|\.[a-z][\w-]+)(?![\w/])"
)


# "owner/name": a repository's name as much as a folder; a path only where a changed file has it.
_TWO_PARTS = LazyPattern(r"[\w-]+/[\w-]+")


# "didn't touch anything under tests/", "without touching any test files": files a PR must not have changed.
_UNTOUCHED = LazyPattern(
    r"\b(?:(?:did|does|do)n'?t|(?:did|does|do)\s+not|never|without|not)\s+(?:touch(?:ing)?|chang(?:e|ing)|modify(?:ing)?|edit(?:ing)?)"
    r"\s+(?:any(?:thing)?\s+)?(?:(?:under|in)\s+)?(?:the\s+)?(?P<what>[\w./-]+)(?:\s+files?)?",
    re.IGNORECASE,
)
# Words for the folders people most often mean.
_FOLDER_WORDS = {"test": "tests/", "tests": "tests/", "doc": "docs/", "docs": "docs/", "documentation": "docs/"}


def _take_untouched(text: str, excluded_paths: list[str]) -> str:
    def leave_out(m: re.Match[str]) -> str:
        what = m["what"].lower()
        path = _FOLDER_WORDS.get(what) or (what if _PATH.fullmatch(what) else None)
        if path is None:
            return m[0]
        if path not in excluded_paths:
            excluded_paths.append(path)
        return " "

    return _UNTOUCHED.sub(leave_out, text)


def _take_paths(text: str, paths: list[str], lookup: Lookup | None) -> str:
    """The paths the question names, taken out of its words."""

    def take(found: re.Match[str]) -> str:
        path = found[1].lower()
        if _TWO_PARTS.fullmatch(path) and not (lookup and lookup.is_path(path)):
            return found[0]
        if "/" not in path and not path.startswith(".") and lookup is not None and not lookup.is_path(path):
            return found[0]  # "llama.cpp", "vllm.ai": a name with a dot that no changed file has is a word
        if path not in paths:
            paths.append(path)
        return " "

    return _PATH.sub(take, text)


# ---------------------------------------------------------------- what could go wrong

# Words that ask about risks rather than name a topic; "could"/"might" before a verb ask too, and the verb stays.
_RISK_WORDS = LazyPattern(
    r"\b(?:(?:as\s+)?(?:a\s+)?risks?|risky|riskiest|go(?:es)?\s+wrong|downsides?|drawbacks?|side[\s-]?effects?|caveats?"
    r"|(?:known\s+)?limitations?|concerns?|dangers?|dangerous|call(?:s|ed)?\s+out"
    # "warn that", "admit": a PR's own words about what could go wrong ("admit-short-prompts" is no admission).
    r"|(?:warn(?:s|ed|ing)?|admit(?:s|ted)?)(?![\w-])(?:\s+(?:about|of|that)\b)?)\b"
)
# "which changes could break X", "changes that make outputs nondeterministic": what a change may bring about.
_RISK_VERBS = LazyPattern(
    r"\b(?:could|might|may)\s+(?=(?:break|slow|hurt|regress|affect|end\s+up|stop|fail|degrade|reject|reduce|lower|change|alter|throw|mess)\b)"
    # Verbs that only bring about what follows ("could raise memory use"): what follows is the risk.
    r"|\b(?:could|might|may)\s+(?:increase|cause|make|lead\s+to|start|raise|require|add|introduce|leave|take)\b"
    r"|(?:(?<=\bchanges\s)|(?<=\bmerges\s))(?:that\s+)?(?:make|cause)\b"
    # "anything that makes startup slower", but not "the change that makes decode nodes stop waiting" (what it does).
    r"|(?<!\bchange\s)(?<!\bpr\s)(?<!\bone\s)(?<!\bfix\s)(?<!\bcommit\s)(?<!\bpatch\s)(?<!\bpull\s)(?<!\brequest\s)"
    r"\b(?:that|which)\s+(?:makes?|causes?)\b"
    # "need more host RAM", "eat extra GPU memory": a cost, which PRs state among their risks.
    r"|\b(?:needs?|eats?|uses?|takes?(?:\s+up)?|costs?|consumes?|requires?)\s+(?=(?:more|extra|additional)\b(?!\s+than\b))"
)
# "the known risks of the new X flag": X is what the PRs are about, and their risks are what is shown.
_RISKS_OF = LazyPattern(
    r"\b(?:(?:known|main|potential|possible)\s+)?(?:risks?|downsides?|drawbacks?|caveats?|side[\s-]?effects?|limitations?|dangers?)"
    r"\s+(?:of|with|from|in)\s+(?=(?:the|this|that|these|those|its|their)\b|#\d)"
)


def _take_risk_words(text: str) -> tuple[str, bool]:
    """The question without its words about risk, and whether it asks what PRs risk (not what some PR's risks are)."""
    text = _RISKS_OF.sub(" ", text)
    rest, said = _RISK_WORDS.subn(" ", text)
    rest, asked = _RISK_VERBS.subn(" ", rest)
    return rest, bool(said or asked)


# Words that say a change made something better ("improve TTFT", "bring TTFT down"): PRs say it in their own
# words ("TTFT falls by 30%"), so only what got better is a topic.
# Not inside a name: "all-reduce", "reduce-scatter" and "lowering" passes are topics.
_EFFECT_WORDS = LazyPattern(
    r"(?<![\w-])(?:improv(?:e|es|ed|ing|ements?)|cut(?:s|ting)?|reduc(?:e|es|ed|tions?)|lower(?:s|ed)?|boost(?:s|ed|ing)?"
    r"|(?:bring|brings|brought|get|got)\s+(?:(?P<kept>\w+)\s+)?down|speed(?:s|ed)?\s+up|gains?|wins?|better)(?![\w-])"
)


# "which PR dropped --x?": the removing, not a topic.
_REMOVAL_WORDS = LazyPattern(r"(?<![\w-])(?:dropped|removed|deleted|killed|got\s+rid\s+of|ripped\s+out|took\s+out)(?![\w-])")
# "where did --x (originally) come from?": asks which PR brought it in; the words say nothing of it.
_ORIGIN_WORDS = LazyPattern(r"\b(?:originally\s+)?(?:come|came|comes)\s+from\b")
# "how do I turn the image cache off?": how a thing is set, not what it is ("when thinking is switched off" is).
_SWITCHED = LazyPattern(
    r"\b(?P<how>how\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)\s+|how\s+to\s+)(?:turn|switch|flip)\b"
    r"(?=(?:\s+[\w-]+){0,6}\s+(?:back\s+)?(?:on|off)\b)",
    re.IGNORECASE,
)


# ---------------------------------------------------------------- order within a range

_ORDER = LazyPattern(
    r"\b(?:the\s+)?(?:very\s+)?(?P<order>earliest|first|last|latest|final|most\s+recent|newest|oldest)(?:\s+[\w.-]+){0,3}?\s+"
    r"(?:pr|prs|merge|merges|merged|thing|one|change|commit|pull\s+request|to\s+(?:merge|land))\b"
    r"|\b(?:merged|landed|went\s+in)\s+(?P<after>first|last)\b"
    # "which of those is the newest?": the word ends the question.
    r"|\b(?:is|was)\s+(?:the\s+)?(?P<end>earliest|first|last|latest|most\s+recent|newest|oldest)(?=\W*$)"
)
# "anything newer?", "what merged since then?": later than what the thread asked about; "his earlier work?": before.
_RELATIVE = LazyPattern(
    r"\b(?:(?P<after>newer|later|more\s+recent(?:ly)?|since\s+then|since(?=\W*$)|after\s+that|afterwards?)"
    r"|(?P<before>earlier|before\s+(?:that|then)|previously|prior|older(?=\s+(?:stuff|ones?|prs?|work|changes?|things))))\b"
)


def _take_relative(text: str) -> tuple[str, str | None]:
    found = _RELATIVE.search(text)
    if found is None:
        return text, None
    return _RELATIVE.sub(" ", text), "after" if found["after"] else "before"
# "count of PRs", "the number of merges": how the count is asked, not what is counted.
_COUNTING = LazyPattern(r"\b(?:the\s+)?(?:total\s+)?(?:count|number|tally)\s+of\b")
_ORDERS = {"earliest": "first", "first": "first", "oldest": "first"}


_BY_FILES = LazyPattern(r"\b(?:by\s+)?(?:the\s+)?(?:changed[\s-]+)?files?(?:[\s-]+(?:changed|touched|list|count))?\b")
# What a PR says it gained: "2.3x faster", "40% lower TTFT". The metrics are what gained; the rest only say it did.
_GAIN_MEASURES = r"speed[\s-]?ups?|faster|improvements?|gains?|wins?|reductions?|savings?|drops?|cuts?|multipliers?"
_GAIN_WORDS = LazyPattern(rf"\b(?:{_GAIN_MEASURES}|throughput|ttft|tpot|latency)\b")
_GAIN_MEASURE = LazyPattern(rf"\b(?:{_GAIN_MEASURES})\b")


def _take_top(text: str) -> tuple[str, str | None]:
    """The measure a superlative asks for (its words removed): "largest" (changed files; the size of a change,
    also what "the most important X change" is read by) or "gain" (the largest improvement a PR states)."""
    found = SUPERLATIVE.search(text)
    if found is None:
        return text, None
    rest = text[: found.start()] + " " + text[found.end() :]
    by_files = _BY_FILES.search(rest)
    if by_files:
        return rest[: by_files.start()] + " " + rest[by_files.end() :], "largest"
    if _GAIN_WORDS.search(rest):
        return _GAIN_MEASURE.sub(" ", rest), "gain"  # "the biggest decode speedup": of decode, by the gain stated
    return rest, "largest"


def _take_order(text: str) -> tuple[str, str | None]:
    """"the earliest merge", "the very last PR": which end of the range is asked for (its word removed)."""
    found = _ORDER.search(text)
    if found is None:
        return text, None
    word = next(name for name in ("order", "after", "end") if found[name])
    said = found[word].split()[0]
    return text[: found.start(word)] + " " + text[found.end(word) :], _ORDERS.get(said, "last")


# ---------------------------------------------------------------- PR references and people

_PR_LINK = LazyPattern(r"https?://(?:www\.)?github\.com/[\w.-]+/[\w.-]+/pull/(\d{1,9})(?!\d)[^\s>|]*", re.IGNORECASE)
_PR_REF = LazyPattern(r"(?<![\w/&])(?:#|\b(?:pr|pull\s+request|pull)\s*#?\s*)(\d{1,7})\b", re.IGNORECASE)
_LOGIN = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}(?:\[bot\])?"
# The bot's own names, as people address it in plain text.
_OWN_NAMES = frozenset({"prdigest", "bot"})
_AT_LOGIN = LazyPattern(rf"(?<![\w.@])@({_LOGIN})", re.IGNORECASE)
_ROLE_LOGIN = LazyPattern(
    rf"\b(?P<role>merged\s+by|authored\s+by|written\s+by|opened\s+by|created\s+by|submitted\s+by|sent\s+by|by|from)\s+@?(?P<login>{_LOGIN})(?:'s)?\b",
    re.IGNORECASE,
)
# "PRs by X" are the PRs X wrote; "merged by X" are those X merged.
_ROLES = {"merged": "merger", "by": "author", "from": "author"}
# Slack sends <@U123> for mentions and <url|label> for links.
_SLACK_MENTION = LazyPattern(r"<[@#!][^>]*>")
_SLACK_LINK = LazyPattern(r"<(https?://[^>|]+)(?:\|[^>]*)?>")
_BARE_NUMBER = LazyPattern(r"^\d{2,7}$")


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


# Time words typed with one slip ("yesteday", "feburary", "thrusday") still name the time, and the long words of
# areas and vLLM's vocabulary their topic ("strucutred output", "decodng"). Short month names are one slip from
# too many words ("marsh", "aptil").
_TIME_WORDS = (
    "yesterday", "today", "january", "february", "august", "september", "october", "november", "december",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
)
_LONG_WORD = LazyPattern(r"(?<![\w/.-])[a-z]{4,16}(?![\w/.-])", re.IGNORECASE)
# Shorter words are one slip from too many others ("cache", "catch").
_TOPIC_WORD_MIN = 6


@cache
def _topic_words() -> tuple[str, ...]:
    """The long words of area names and of every synonym group, in order (the first near one wins, every time)."""
    names = [*area_aliases(), *(term for spec in _synonym_specs() for key in ("terms", "narrower") for term in spec.get(key, []))]
    return tuple(sorted({word for name in names for word in re.findall(r"[a-z]+", name.lower()) if len(word) >= _TOPIC_WORD_MIN}))


@cache
def _is_topic_word() -> frozenset[str]:
    return frozenset(_topic_words())


@cache
def _topic_words_by_letter() -> dict[str, tuple[str, ...]]:
    """The topic words by first letter: one slip keeps the first letter, so only those are compared."""
    by_letter: dict[str, list[str]] = {}
    for word in _topic_words():
        by_letter.setdefault(word[0], []).append(word)
    return {letter: tuple(words) for letter, words in by_letter.items()}


def _time_word(m: re.Match[str]) -> str:
    word = m[0].lower()
    # "mondays" is no slip: the plural is read as it is.
    return next((time for time in _TIME_WORDS if word not in (time, f"{time}s") and _one_slip(word, time)), m[0])


def _topic_typos_fixed(text: str, lookup: Lookup) -> str:
    """Long words no PR says, one slip from a word of an area's name or vLLM's vocabulary, as that word."""

    def as_meant(m: re.Match[str]) -> str:
        word = m[0].lower()
        if len(word) < _TOPIC_WORD_MIN or word in _STOPWORDS or word in _is_topic_word():
            return m[0]
        meant = next((topic for topic in _topic_words_by_letter().get(word[0], ()) if _one_slip(word, topic)), None)
        return meant if meant and not lookup.says(word) else m[0]

    return _LONG_WORD.sub(as_meant, text)


def _clean(text: str) -> str:
    text = _SLACK_MENTION.sub(" ", text)
    text = _SLACK_LINK.sub(r"\1", text)
    text = html.unescape(text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = _NO_APOSTROPHE.sub(_as_typed_in_full, text)
    return _LONG_WORD.sub(_time_word, text)


def _take_numbers(text: str, numbers: list[int]) -> str:
    def keep(m: re.Match[str]) -> str:
        number = int(m.group(1))
        if number not in numbers:
            numbers.append(number)
        return " "

    return _PR_REF.sub(keep, _PR_LINK.sub(keep, text))


def pr_numbers(text: str) -> list[int]:
    """The PRs a question names by number or link, in order."""
    numbers: list[int] = []
    _take_numbers(_clean(text), numbers)
    return numbers


# The words that leave something out, for people ("besides the bot") and areas or topics ("that isn't CI").
_LEAVING_OUT = (
    r"besides|except(?:\s+for)?|excluding|other\s+than|not\s+counting|apart\s+from|aside\s+from|ignoring|minus|leave\s+out|leaving(?:\s+out)?"
    r"|without|unrelated\s+to|(?:had|has|have)\s+nothing\s+to\s+do\s+with|not|isn'?t|aren'?t|wasn'?t|weren'?t|non|skip(?:ping)?"
)
# One more person in a list: ", raj", "or the bot".
_AND_ANOTHER = rf"(?:\s*,\s*|\s+(?:or|nor|and)\s+)(?:by\s+)?(?:the\s+)?@?(?P<other>{_LOGIN})(?:'s)?\b"
_ANOTHER = LazyPattern(_AND_ANOTHER, re.IGNORECASE)
_EXCEPT = LazyPattern(
    rf"\b(?:{_LEAVING_OUT})\s+(?:(?:merged|authored|written|opened|made|sent)\s+)?(?:(?:by|from)\s+)?(?:the\s+)?@?(?P<login>{_LOGIN})(?:'s)?\b"
    # "not merged by mthornbury or the bot", "not by vllm-bot, raj or evelyn": the others are left out too.
    rf"(?P<more>(?:{_AND_ANOTHER}){{0,4}})"
    # "feb 13 merges that vllm-bot didn't merge": the person before the negated verb.
    rf"|\b(?:that|which)\s+(?:the\s+)?@?(?P<login3>{_LOGIN})\s+(?:didn'?t|did\s+not|never)\s+(?:merge|write|author|open)\b",
    re.IGNORECASE,
)


def _take_excluded(text: str, lookup: Lookup | None, excluded: list[str]) -> str:
    """People the question leaves out: "besides the bot", "not counting @x"."""

    def exclude(login: str) -> None:
        if login not in excluded:
            excluded.append(login)

    def person(login: str) -> str | None:
        login = login.lower()
        return BOTS if login in ("bot", "bots") else lookup.login(login) if lookup else None

    def leave_out(m: re.Match[str]) -> str:
        first = person(m["login"] or m["login3"])
        if first is None:
            return m[0]
        exclude(first.lower())
        for other in _ANOTHER.finditer(m["more"] or ""):
            found = person(other["other"])
            if found is None:
                # A name that is no person ("not by vllm-bot or ci") is left out as whatever else it names.
                return f" not {m['more'][other.start('other'):]}"
            exclude(found.lower())
        return " "

    def leave_out_bots(m: re.Match[str]) -> str:
        exclude(BOTS)
        return " "

    human = _HUMANS.search(text)
    if human and not _NEGATION_BEFORE.search(text[: human.start()]):
        exclude(BOTS)  # "which human maintainer merged the most": every bot is left out
    return _EXCEPT.sub(leave_out, _BOT_MERGES_LEFT_OUT.sub(leave_out_bots, text))


# "not counting what the bot merged", "PRs not bot-merged", "don't show the bot merged ones", "bots excluded":
# every bot is left out.
_BOT_MERGES_LEFT_OUT = LazyPattern(
    rf"\b(?:{_LEAVING_OUT}|don'?t\s+(?:show|count|include))\s+(?:(?:what|anything|the\s+ones?|ones?|prs)\s+)?"
    r"(?:the\s+)?(?:merge\s+)?bots?[\s-]+merged\b(?:\s+ones?)?"
    r"|\b(?:the\s+)?bots?\s+(?:excluded|left\s+out|aside|not\s+counted)\b",
    re.IGNORECASE,
)


# People said to be human, or not bots: "merged by a human", "which human maintainer", "non-bot authors".
_HUMANS = LazyPattern(
    r"\bby\s+(?:an?\s+)?(?:actual\s+|real\s+)?humans?\b(?!-)"
    r"|\b(?:which|what|the|a)\s+humans?\s+(?:maintainers?|authors?|mergers?|reviewers?|contributors?|people|merged|wrote)\b"
    r"|\bwhich\s+humans?\b(?!-)|\bnon-?bots?\b",
    re.IGNORECASE,
)
# "not written by a human", "not counting humans": a negation just before reverses what it says.
_NEGATION_BEFORE = LazyPattern(r"\b(?:not|never|counting|excluding|except|besides|without)\b[^.?!,;]{0,25}$", re.IGNORECASE)


# "not about CI", "that isn't ROCm CI", "besides docs": the areas (or words) after it are left out.
_NEGATED = LazyPattern(
    r"(?P<rel>\b(?:that|which|who)\s+(?:(?:is|are|was|were)\s+)?)?"
    rf"\b(?P<cue>{_LEAVING_OUT})"
    r"(?P<about>\s+(?:about|in|for|from|part\s+of|related\s+to))?"
    r"[\s-]+(?:(?:the|any|a|an|just|only|purely|really|all|those|ones?|that|which|is|are|was|were|about|tagged|labell?ed|marked)\s+)*"
    # The words left out, up to the next that leaves something out ("non-nvidia work, leaving out rocm").
    rf"(?P<words>[\w.+/-]+(?:,?\s+(?!(?:{_LEAVING_OUT})\b)[\w.+/-]+){{0,4}})",
    re.IGNORECASE,
)
# What may follow the areas left out without being a topic of its own: "that aren't CI fixes".
_NEGATED_NOUNS = frozenset(
    {"fix", "fixes", "change", "changes", "pr", "prs", "stuff", "work", "one", "ones", "things", "related", "only"}
)
# Words left out that are no area: at most this many, up to the first word that is no topic.
_NEGATED_WORDS = 3


def _negated_areas(words: list[str], repo: str | None) -> tuple[list[tuple[str, ...]], int]:
    """The areas named first in `words`, in groups ("ROCm CI" is one group; "CI or docs" two), and how many words named them."""
    groups: list[list[str]] = []
    taken, joined = 0, False
    while taken < len(words):
        word = words[taken].strip(".,?!").lower()
        if groups and word in ("or", "and", "nor"):
            taken, joined = taken + 1, True
            continue
        slashed = [_area_of([part], repo) for part in word.split("/")] if "/" in word else []
        if slashed and all(slashed):
            # "the amd/rocm ones", "ci/docs changes": each area named is left out.
            groups.extend([area or ""] for area in dict.fromkeys(slashed) if [area] not in groups)
            taken, joined = taken + 1, False
            continue
        size = next((n for n in (3, 2, 1) if _area_of(words[taken : taken + n], repo)), 0)
        if not size:
            break
        area = _area_of(words[taken : taken + size], repo)
        if groups and not joined and not words[taken - 1].endswith(","):
            groups[-1].append(area or "")
        else:
            groups.append([area or ""])
        taken, joined = taken + size, False
    return [tuple(group) for group in groups], taken if groups else 0


def _area_of(words: list[str], repo: str | None) -> str | None:
    """The area the words name, also as a compound with a filler ("qwen-family", "rocm-related")."""
    said = " ".join(word.strip(".,?!") for word in words)
    if len(words) > 1 or "-" not in said:
        return resolve_area(said, repo)
    return resolve_area(said, repo) or resolve_area(
        " ".join(p for p in said.split("-") if p not in _STOPWORDS and p not in _COMPOUND_FILLERS), repo
    )


# An area group left out, and the words that named it.
_NamedLeftOut = tuple[tuple[str, ...], list[str]]


def _take_negated(text: str, repo: str | None, question: Question) -> tuple[str, list[_NamedLeftOut]]:
    """Areas the question leaves out, and other words it leaves out ("that isn't tool calling"); and each area
    group left out with the words that named it."""
    named: list[_NamedLeftOut] = []

    def leave_out(m: re.Match[str]) -> str:
        if m["cue"].lower().endswith(("n't", "nt")) and not (m["rel"] or m["about"]):
            return m[0]  # "why isn't ROCm working": what is asked about, not left out
        words = m["words"].split()
        groups, taken = _negated_areas(words, repo)
        # "not CI or build changes": two words for one area leave it out once.
        question.excluded_areas.extend(dict.fromkeys(g for g in groups if g not in question.excluded_areas))
        named.extend((group, [w.strip(".,?!") for w in words[:taken]]) for group in groups)
        if not taken:
            cue = m["cue"].lower()
            if cue in ("not", "non") and not m["about"]:
                return m[0]  # "is not starting", "non-blocking": before a word that is no area, left to the words
            said = _negated_words(words)
            if cue in ("without", "skip", "skipping") or not said:
                # "runs without errors": what is done without is no topic to leave out; saying so beats searching for it.
                said = [word.strip(".,?!") for word in words[:2]]
                question.problems.append(f'leaving out "{" ".join(said)}" is beyond what I can read; this is everything else asked')
                return " " + " ".join(words[2:])
            question.excluded_words.append(_words_concept(said))
            taken = len(said)
        if groups:
            taken += _area_nouns([word.strip(".,?!").lower() for word in words[taken:]])  # "not for nvidia gpus"
            # "not the doc typo stuff": the words between the areas and the noun say which of theirs, left out with them.
            qualified = taken + len(_negated_words(words[taken:]))
            if taken < qualified < len(words) and words[qualified].strip(".,?!").lower() in _NEGATED_NOUNS:
                taken = qualified
        while taken < len(words) and words[taken].strip(".,?!").lower() in _NEGATED_NOUNS:
            taken += 1
        if groups and 0 < taken < len(words) and words[taken - 1].lower() in ("and", "or", "nor"):
            # "other than the tool-call and reasoning parsers": what follows the areas is left out too.
            said = _negated_words(words[taken:])
            if said:
                question.excluded_words.append(_words_concept(said))
                taken += len(said)
        return " " + " ".join(words[taken:])

    return _NEGATED.sub(leave_out, text), named


def _leave_out_words_of_asked_areas(question: Question, named: list[_NamedLeftOut]) -> None:
    """"kv connector prs that aren't nixl": an area both asked and left out is asked; the PRs saying the words that
    named it as left out are left out."""
    for group, said in named:
        if group in question.excluded_areas and set(group) <= set(question.areas):
            question.excluded_areas.remove(group)
            question.excluded_words.append(_words_concept(said))


def _words_concept(said: list[str]) -> Concept:
    return Concept(" ".join(said), synonyms_of(_subwords_of(said)))


def word_concept(word: str) -> Concept:
    """One word asked on its own, with what means the same."""
    return _words_concept([word])


def _negated_words(words: list[str]) -> list[str]:
    """The topic words that open `words`, up to the first word that is none ("tool calling" of "tool calling?")."""
    said: list[str] = []
    for word in words[:_NEGATED_WORDS]:
        bare = word.strip(".,?!").lower()
        if not bare or bare in _STOPWORDS or (bare in _NEGATED_NOUNS and not _names_one_thing([*said, bare])):
            break  # "not ROCm fixes" leaves ROCm out; "not bug fixes" leaves out bug fixes
        said.append(bare)
        if word[-1:] in ".,?!":
            break
    return said


def _names_one_thing(words: list[str]) -> bool:
    return _subwords_of(words) in _synonyms()


# Every bot at once: a person asked about ("what did the bot merge?") or left out ("not counting the bot").
BOTS = "bots"
_BOT_MERGED = LazyPattern(
    r"\bmerged\s+by\s+(?:the\s+)?(?:merge\s+)?bots?\b|\b(?:the\s+)?(?:merge\s+)?bots?\s+merged\b"
    r"|\bdid\s+the\s+(?:merge\s+)?bot\s+merge\b|\bbot[\s-]merge[sd]\b",
    re.IGNORECASE,
)


def is_bot(login: str) -> bool:
    lowered = login.lower()
    return lowered.endswith(("[bot]", "-bot", "_bot")) or lowered == "bot"


def _take_people(text: str, lookup: Lookup | None, people: list[Person]) -> str:
    def add(login: str, role: str) -> None:
        if all(p.login.lower() != login.lower() for p in people):
            people.append(Person(login, role))

    def at(m: re.Match[str]) -> str:
        known = lookup.login(m.group(1)) if lookup else None
        if known is None and m.group(1).lower() in _OWN_NAMES:
            return " "  # "@prdigest what merged?" typed as text: the bot addressed, not a person asked about
        add(known or m.group(1), "any")
        return " "

    def by(m: re.Match[str]) -> str:
        known = lookup.login(m["login"]) if lookup else None
        if known is None:
            return m[0]  # "caused by preemption": not a person, keep the words
        role = _ROLES.get(m["role"].split()[0].lower(), "author")
        add(known, role)
        return " "

    def in_role(role: str, kept: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
        """A login said in a role ("njhill wrote", "nick hill (njhill)"): the person in it, and what `kept` keeps."""

        def take(m: re.Match[str]) -> str:
            known = lookup.login(m["login"]) if lookup else None
            if known is None:
                return m[0]
            add(known, role)
            return kept(m)

        return take

    wrote = in_role("author", lambda m: f"{m['aux'] or ''} {m['verb']}")
    merged = in_role("merger", lambda m: f"{m['what']} merged")

    def bots(m: re.Match[str]) -> str:
        add(BOTS, "merger")  # what is left out ("not counting what the bot merged") was taken before
        return " "

    named = in_role("any", lambda m: " ")  # "nick hill (njhill)": the name goes with the login
    text = _NAME_THEN_LOGIN.sub(named, _BOT_MERGED.sub(bots, text))
    return _ROLE_LOGIN.sub(by, _MERGED.sub(merged, _WROTE.sub(wrote, _AT_LOGIN.sub(at, text))))


# "nick hill (njhill)": a person's name, then their login; the name is no topic.
_NAME_THEN_LOGIN = LazyPattern(rf"\b[a-z]{{2,20}}(?:\s+[a-z]{{2,20}})?\s*\(\s*@?(?P<login>{_LOGIN})\s*\)", re.IGNORECASE)


# "what did mgoin author last month?", "anything njhill wrote?": the person wrote them.
_WROTE = LazyPattern(
    rf"\b(?:(?P<aux>did|has|have)\s+)?@?(?P<login>{_LOGIN})\s+(?P<verb>author(?:ed)?|write|wrote|written|open(?:ed)?|submit(?:ted)?)\b",
    re.IGNORECASE,
)
# "prs njhill merged", "the ones mgoin merged": the person merged them.
_MERGED = LazyPattern(rf"\b(?P<what>prs|pull\s+requests|ones|changes|that|which)\s+@?(?P<login>{_LOGIN})\s+merged\b", re.IGNORECASE)


# ---------------------------------------------------------------- areas and free text


def _take_words(
    words: list[str], lookup: Lookup | None, question: Question, stopwords: frozenset[str], repo: str | None
) -> None:
    """Areas, people and topics from the words left after times, PR numbers and @people."""
    longest = _longest_synonym()
    area_spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(words):
        matched = _path_words(words, i, question.paths)
        if matched:
            i += matched
            continue
        for size in (3, 2, 1):
            chunk = words[i : i + size]
            if len(chunk) < size:
                continue
            area = resolve_area(" ".join(chunk), repo)
            if area:
                # "the CPU backend" names the area and nothing narrower: its noun is no part of what was said.
                while len(chunk) > 1 and chunk[-1] in vocabulary.area_nouns() and resolve_area(" ".join(chunk[:-1]), repo) == area:
                    chunk = chunk[:-1]
                said = _subwords(" ".join(chunk))
                if area not in question.areas:
                    question.areas.append(area)
                phrases = synonyms_of(said)
                question.area_same.extend(p for p in phrases.same if p not in question.area_same)
                for phrase in phrases.all + (" ".join(_subwords(area)),):
                    if phrase not in question.area_phrases:
                        question.area_phrases.append(phrase)
                matched = size + _area_nouns(words[i + size :])
                area_spans.append((i, i + matched, area))
                break
        if matched:
            i += matched
            continue
        for size in range(longest, 0, -1):
            said = _subwords_of(words[i : i + size])
            if len(words[i : i + size]) == size and said in _synonyms():
                question.concepts.append(Concept(" ".join(words[i : i + size]), synonyms_of(said)))
                matched = size
                break
        if matched:
            i += matched
            continue
        word = words[i]
        i += 1
        if lookup and i < len(words) and _NAME_PART.fullmatch(word) and _NAME_PART.fullmatch(words[i]) and not (
            {word, words[i]} & stopwords
        ):
            login = lookup.full_name(word, words[i])
            if login:
                if all(p.login.lower() != login.lower() for p in question.people):
                    question.people.append(Person(login, "any"))
                i += 1
                continue
        if word in TYPES:  # the report's own two kinds of PR
            question.pr_type = word
            continue
        if len(word) < 2 or word in stopwords or all(len(sub) < 2 for sub in _subwords(word)):  # "i.e"
            continue
        if _BARE_NUMBER.match(word) and lookup and lookup.is_pr(int(word)):
            if int(word) not in question.numbers:
                question.numbers.append(int(word))
            continue
        login = lookup.login(word) if lookup and not word.isdigit() else None
        if login:
            if all(p.login.lower() != login.lower() for p in question.people):
                question.people.append(Person(login, "any"))
            continue
        said = _subwords(word)
        if said and not all(sub in stopwords for sub in said):
            # "Blackwell-related": a compound the vocabulary knows once its filler is left out.
            telling = tuple(sub for sub in said if sub not in stopwords)
            if len(telling) < len(said) and telling in _synonyms():
                said, word = telling, " ".join(telling)
            question.concepts.append(Concept(word, synonyms_of(said)))
    question.area_groups = _area_groups(area_spans, words)


def _area_groups(spans: list[tuple[int, int, str]], words: list[str]) -> list[tuple[str, ...]]:
    """Areas one "or" apart in one group ("tpu or xpu"), the others each in their own ("lora on tpu")."""
    groups: list[list[str]] = []
    for index, (start, _, area) in enumerate(spans):
        end = spans[index - 1][1] if index else None
        if end is not None and end < start <= end + _ALTERNATIVE_GAP and _ALTERNATIVE_WORDS & set(words[end:start]):
            groups[-1].append(area)
        else:
            groups.append([area])
    return list(dict.fromkeys(tuple(dict.fromkeys(group)) for group in groups))  # "moe … moe" is one group


_NAME_PART = LazyPattern(r"[a-z]{3,20}")
_SLASH = LazyPattern(r"\s+/\s+")
# Areas named as alternatives rather than together: "speech / audio", "ROCm or CUDA", "either TPU or XPU".
_ALTERNATIVE_WORDS = frozenset({"or", "either"})
# At most this many words between two areas named as alternatives ("ROCm or the CUDA side").
_ALTERNATIVE_GAP = 3


# A version after a name: "gemma 4", "deepseek v4", "kimi k3"; the two are one phrase, the version alone says nothing.
_VERSION = LazyPattern(r"[a-z]?\d{1,3}(?:\.\d{1,2})?")


# The second half of a compound that only says "to do with": "amd-side", "security-related", "llama.cpp-style".
_COMPOUND_FILLERS = frozenset(
    {"side", "sided", "related", "style", "based", "specific", "focused", "facing", "oriented", "wise", "ish",
     "heavy", "centric", "flavored", "flavoured", "adjacent", "like", "type", "flavor", "flavour", "level"}
)


def _without_filler(word: str) -> str:
    """"amd-side" is "amd": a compound's filler half goes, unless the vocabulary knows the compound."""
    head, dash, tail = word.rpartition("-")
    if not dash or tail not in _COMPOUND_FILLERS or not head or _subwords(word) in _synonyms():
        return word
    return head


def _alternatives(word: str) -> list[str]:
    """"h100/h200" is two names the vocabulary knows; any other slashed word ("acme/engine") stays one phrase."""
    parts = word.split("/")
    known = len(parts) > 1 and all(_subwords(part) in _synonyms() for part in parts)
    return parts if known else [word]


def _with_versions(words: list[str]) -> list[str]:
    joined: list[str] = []
    for word in words:
        name = joined[-1] if joined else ""
        known = _subwords(word) in _synonyms() or _subwords(name) in _synonyms()  # "Blackwell B200": two names
        if _VERSION.fullmatch(word) and name.isalpha() and name not in _STOPWORDS and not known:
            joined[-1] = f"{joined[-1]} {word}"
        else:
            joined.append(word)
    return joined


def _area_nouns(words: list[str]) -> int:
    """How many of the words after an area only name it further: "the CPU backend", "AMD GPU changes"."""
    nouns = vocabulary.area_nouns()
    taken = 0
    while taken < len(words) and words[taken] in nouns:
        taken += 1
    return taken


def _path_words(words: list[str], i: int, paths: list[str]) -> int:
    """How many words from `i` name files ("requirements files", "cmake"); their fragments join `paths`."""
    for size in (3, 2, 1):
        said = _subwords_of(words[i : i + size])
        fragments = vocabulary.path_words().get(said) if len(words[i : i + size]) == size else None
        if fragments:
            paths.extend(fragment for fragment in fragments if fragment not in paths)
            return size
    return 0


# "non-trivial PRs" are the substantial ones, and "non-substantial" the trivial ones: the report has these two types.
_NOT_TYPE = LazyPattern(
    r"\b(?:non[\s-]?|(?:not|isn'?t|aren'?t|wasn'?t|weren'?t)\s+(?:an?\s+|one\s+of\s+the\s+)?"
    # "apart from the trivial stuff", "leaving out the trivial ones"
    r"|(?:apart\s+from|besides|except(?:\s+for)?|excluding|other\s+than|leaving\s+out|ignoring|skipping|without)\s+(?:the\s+|any\s+)?)"
    r"(trivial|substantial)\b",
    re.IGNORECASE,
)


def _the_other_type(text: str) -> str:
    return _NOT_TYPE.sub(lambda m: next(t for t in TYPES if t != m[1].lower()), text)


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


def _said_by_paths(phrases: list[str], paths: list[str]) -> bool:
    """Whether every word of the phrases is a word of the paths ("tool parsers" of ".../tool_parsers")."""
    in_paths = {stem(atom) for path in paths for atom in atoms(path)}
    return all(stem(atom) in in_paths for phrase in phrases for atom in atoms(phrase))


# "in the whole store", "of all time": no time, said outright.
_WHOLE_STORE = LazyPattern(
    r"\b(?:in|across|from)\s+(?:the\s+)?(?:whole|entire)\s+(?:store|history|db|database)\b|\bof\s+all\s+time\b|\ball[\s-]time\b",
    re.IGNORECASE,
)


def parse_question(
    text: str,
    tz: ZoneInfo,
    now: datetime | None = None,
    lookup: Lookup | None = None,
    extra_stopwords: frozenset[str] = frozenset(),
    repo: str | None = None,
) -> Question:
    """Read a question; `now` defaults to the current time, `lookup` tells people and PRs apart from words,
    and `repo` names the repository whose areas count (None: the default areas)."""
    now = now or datetime.now(UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    # Slack markup is undone on a bounded prefix: a question is short, a pasted log is not read whole.
    cleaned = _LEAD_IN.sub("", " ".join(_clean((text or "")[: 4 * MAX_QUESTION_CHARS]).split()), count=1)
    cleaned = _TRAILING_CONTEXT.sub("?", cleaned, count=1)
    form = read_form(cleaned)
    question = Question(text=cleaned, tally=form.tally, linked=form.linked)
    if not cleaned:
        return question  # an empty question holds nothing to read, and reading it costs a process's start
    if len(cleaned) > MAX_QUESTION_CHARS or len(text or "") > 4 * MAX_QUESTION_CHARS:
        # A pasted log is not a question; its start says what it is about.
        cleaned = cleaned[:MAX_QUESTION_CHARS]
        question.problems.append(f"only the first {MAX_QUESTION_CHARS} characters were read")
    rest = _take_numbers(_the_other_type(_WHOLE_STORE.sub(" ", cleaned)), question.numbers)
    rest = _take_excluded(rest, lookup, question.excluded)
    rest = _take_untouched(rest, question.excluded_paths)
    rest, named_left_out = _take_negated(rest, repo, question)
    rest = _take_people(rest, lookup, question.people)
    question.time, rest, problems = read_time(rest, tz, now, lookup.merged_between if lookup else None)
    question.problems.extend(problems)
    rest, question.order = _take_order(rest)
    rest, question.relative = _take_relative(rest)
    rest = _COUNTING.sub(" ", rest)
    if question.order is None:
        rest, question.order = _take_top(rest)
    rest = _take_paths(rest, question.paths, lookup)
    rest, question.about_risks = _take_risk_words(rest)
    if lookup is not None:
        rest = _topic_typos_fixed(rest, lookup)
    question.improves = bool(_EFFECT_WORDS.search(rest))
    question.removes = bool(_REMOVAL_WORDS.search(rest))
    rest = _ORIGIN_WORDS.sub(" ", _REMOVAL_WORDS.sub(" ", rest))
    rest = _EFFECT_WORDS.sub(lambda m: f" {m['kept'] or ''} ", rest)
    rest = _SWITCHED.sub(lambda m: m["how"], rest)
    # " / " between names is "or" ("speech / audio").
    words = [
        part
        for word in _WORD.findall(_SLASH.sub(" or ", rest.replace("'s ", " ")))
        for part in _alternatives(_without_filler(word.strip("._/+-")))
    ]
    _take_words(_with_versions([w for w in words if w]), lookup, question, _STOPWORDS | extra_stopwords, repo)
    if question.paths and question.area_same and _said_by_paths(question.area_same, question.paths):
        # "the tool parsers dir (vllm/entrypoints/openai/tool_parsers)": the words only describe the folder.
        question.areas, question.area_groups, question.area_phrases, question.area_same = [], [], [], []
    _leave_out_words_of_asked_areas(question, named_left_out)
    if len(question.concepts) > MAX_CONCEPTS:
        question.concepts = question.concepts[:MAX_CONCEPTS]
        question.problems.append(f"only the first {MAX_CONCEPTS} words were searched for")
    return question
