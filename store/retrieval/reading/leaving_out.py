"""What a question leaves out: people ("besides the bot"), areas ("not CI") and words ("other than the kimi parser")."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from store.retrieval.reading.concepts import words_concept
from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.people import LOGIN
from store.retrieval.reading.query import BOTS, Concept, Role
from store.retrieval.reading.synonyms import subwords_of, synonym_index
from store.retrieval.reading.words import area_nouns_after
from store.text.patterns import LazyPattern
from store.understanding import vocabulary
from store.understanding.areas import resolve_area
from store.understanding.vocabulary import Cue, cue

# One more person in a list: ", raj", "or the bot".
_AND_ANOTHER = rf"(?:\s*,\s*|\s+(?:or|nor|and)\s+)(?:by\s+)?(?:the\s+)?@?(?P<other>{LOGIN})(?:'s)?\b"
_ANOTHER = LazyPattern(_AND_ANOTHER, re.IGNORECASE)
# {leaving_out}, the lexicon's words that leave something out ("besides", "not counting", "isn't").
_EXCEPT = Cue(
    rf"\b(?:{{leaving_out}})\s+(?:(?P<verb>merged|authored|written|opened|made|sent)\s+)?(?:(?P<prep>by|from)\s+)?(?:the\s+)?"
    rf"@?(?P<login>{LOGIN})(?:'s)?\b"
    # "not merged by mthornbury or the bot", "not by vllm-bot, raj or evelyn": the others are left out too.
    rf"(?P<more>(?:{_AND_ANOTHER}){{0,4}})"
    # "feb 13 merges that vllm-bot didn't merge": the person before the negated verb.
    rf"|\b(?:that|which)\s+(?:the\s+)?@?(?P<login3>{LOGIN})\s+(?:didn'?t|did\s+not|never)\s+(?:merge|write|author|open)\b",
    re.IGNORECASE,
)


def take_excluded(text: str, lookup: Lookup | None, excluded: list[str], roles: list[Role]) -> str:
    """People the question leaves out: "besides the bot", "not counting @x"; and in `roles`, the role each negation
    said they are left out in ("not merged by x", "not from bots")."""

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
        roles.append(_ROLE_SAID.get((m["verb"] or m["prep"] or "").lower(), Role.ANY))
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


# "not merged by x": what x merged; "not from x", "not written by x": what x wrote.
_ROLE_SAID = {"merged": Role.MERGER, "from": Role.AUTHOR, "authored": Role.AUTHOR, "written": Role.AUTHOR,
              "opened": Role.AUTHOR, "made": Role.AUTHOR, "sent": Role.AUTHOR}
# "not counting what the bot merged", "bots excluded": every bot is left out. "merged by a human", "non-bot authors":
# people said to be human; unless a negation just before reverses it ("not written by a human").
_BOT_MERGES_LEFT_OUT, _HUMANS, _NEGATION_BEFORE = cue("bot_merges_left_out"), cue("humans"), cue("negation_before")


# "not about CI", "that isn't ROCm CI", "besides docs": the areas (or words) after it are left out.
_NEGATED = Cue(
    r"(?P<rel>\b(?:that|which|who)\s+(?:(?:is|are|was|were)\s+)?)?"
    r"\b(?P<cue>{leaving_out})"
    r"(?P<about>\s+(?:about|in|for|from|part\s+of|related\s+to))?"
    r"[\s-]+(?:(?:the|any|a|an|just|only|purely|really|all|those|ones?|that|which|is|are|was|were|about|tagged|labell?ed|marked)\s+)*"
    # The words left out, up to the next that leaves something out ("non-nvidia work, leaving out rocm").
    r"(?P<words>[\w.+/-]+(?:,?\s+(?!(?:{leaving_out})\b)[\w.+/-]+){0,4})",
    re.IGNORECASE,
)
# "which spec decode prs in march weren't bugfixes": said of the PRs asked for, as "that weren't" is.
_PRS_BEFORE = LazyPattern(
    r"\b(?:prs?|pull\s+requests?|ones|changes|merges|commits)"
    r"(?:\s+(?:(?:in|from|on|during|since|of|over|at)\s+\S+(?:\s+\d{1,2}(?:st|nd|rd|th)?\b)?|yesterday|today"
    r"|(?:this|last)\s+\w+))*\s*$",
    re.IGNORECASE,
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
        " ".join(p for p in said.split("-") if p not in vocabulary.stopwords() and p not in vocabulary.words("compound_fillers")), repo
    )


# An area group left out, and the words that named it.
NamedLeftOut = tuple[tuple[str, ...], list[str]]


@dataclass
class LeftOut:
    """What a question's negations leave out: area groups and words."""

    areas: list[tuple[str, ...]] = field(default_factory=list)
    words: list[Concept] = field(default_factory=list)
    named: list[NamedLeftOut] = field(default_factory=list)  # each area group left out, with the words that named it

    def keep_asked(self, asked: list[str]) -> None:
        """"kv connector prs that aren't nixl": an area both asked and left out is asked; the PRs saying the words that
        named it as left out are left out."""
        for group, said in self.named:
            if group in self.areas and set(group) <= set(asked):
                self.areas.remove(group)
                self.words.append(words_concept(said))


def take_negated(text: str, repo: str | None) -> tuple[str, LeftOut]:
    """Areas the question leaves out, and other words it leaves out ("that isn't tool calling")."""
    negations = _Negations(repo)
    return _NEGATED.sub(negations.leave_out, text), negations.left_out


class _Negations:
    def __init__(self, repo: str | None) -> None:
        self.repo = repo
        self.left_out = LeftOut()

    def leave_out(self, m: re.Match[str]) -> str:
        """What of one negation is left in the text, once what it leaves out is taken."""
        said_of_prs = _PRS_BEFORE.search(m.string[: m.start()]) is not None
        if m["cue"].lower().endswith(("n't", "nt")) and not (m["rel"] or m["about"] or said_of_prs):
            return m[0]  # "why isn't ROCm working": what is asked about, not left out ("prs that weren't X" leave X out)
        words = m["words"].split()
        groups, taken = _negated_areas(words, self.repo)
        if groups:
            self._add_areas(groups, words[:taken])
            taken = self._after_areas(words, taken)
        else:
            kept = self._kept(m, words)
            if kept is not None:
                return kept
            said = _negated_words(words)
            self.left_out.words.append(words_concept(said))
            taken = len(said)
        while taken < len(words) and words[taken].strip(".,?!").lower() in vocabulary.words("negated_nouns"):
            taken += 1
        if groups and 0 < taken < len(words) and words[taken - 1].lower() in ("and", "or", "nor"):
            # "other than the tool-call and reasoning parsers": what follows the areas is left out too.
            taken += self._words(words[taken:])
        return " " + " ".join(words[taken:])

    def _add_areas(self, groups: list[tuple[str, ...]], said: list[str]) -> None:
        # "not CI or build changes": two words for one area leave it out once.
        areas = self.left_out.areas
        areas.extend(dict.fromkeys(g for g in groups if g not in areas))
        self.left_out.named.extend((group, [w.strip(".,?!") for w in said]) for group in groups)

    def _after_areas(self, words: list[str], taken: int) -> int:
        """Past the areas: the nouns that only name them further ("not for nvidia gpus"), and the words between them and
        such a noun, which say which of theirs ("not the doc typo stuff")."""
        taken += area_nouns_after([word.strip(".,?!").lower() for word in words[taken:]])
        qualified = taken + len(_negated_words(words[taken:]))
        if taken < qualified < len(words) and words[qualified].strip(".,?!").lower() in vocabulary.words("negated_nouns"):
            return qualified
        return taken

    def _kept(self, m: re.Match[str], words: list[str]) -> str | None:
        """The text to keep when a negation names no area and leaves out no words it can read; None when it does."""
        cue = m["cue"].lower()
        if cue in ("not", "non") and not m["about"]:
            return m[0]  # "is not starting", "non-blocking": before a word that is no area, left to the words
        if cue in ("without", "skip", "skipping") or not _negated_words(words):
            # "runs without errors": what is done without is no topic to leave out, nor one to search for. The answer
            # is everything else asked, without a note: the words it drops do not decide it.
            return " " + " ".join(words[2:])
        return None

    def _words(self, words: list[str]) -> int:
        """How many words open `words` as a topic left out; they are left out."""
        said = _negated_words(words)
        if said:
            self.left_out.words.append(words_concept(said))
        return len(said)


def _negated_words(words: list[str]) -> list[str]:
    """The topic words that open `words`, up to the first word that is none ("tool calling" of "tool calling?")."""
    said: list[str] = []
    for word in words[:_NEGATED_WORDS]:
        bare = word.strip(".,?!").lower()
        if not bare or bare in vocabulary.stopwords() or (bare in vocabulary.words("negated_nouns") and not _names_one_thing([*said, bare])):
            break  # "not ROCm fixes" leaves ROCm out; "not bug fixes" leaves out bug fixes
        said.append(bare)
        if word[-1:] in ".,?!":
            break
    return said


def _names_one_thing(words: list[str]) -> bool:
    return subwords_of(words) in synonym_index()
