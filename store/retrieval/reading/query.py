"""What a question asks for, as read: its time, people, areas, PR numbers, words, and what it leaves out."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum

from store.retrieval.reading.pointing import LEANS_BACK, NARROWS, PEOPLE_BACK, PICKS_AMONG, POINTS_BACK, continues
from store.retrieval.reading.when import TimeRange


class Intent(Enum):
    """The shape of answer a question expects."""

    YESNO = "yesno"  # "Yes: …" or "No PR …"
    WHO = "who"  # the people, with their PRs
    COUNT = "count"  # how many
    HOWTO = "howto"  # the sentence that tells how
    LIST = "list"  # "which PRs …", "show …"
    LOOKUP = "lookup"  # anything else: what it is about


class Relation(StrEnum):
    """A link between PRs a question asks about; the values are the kinds of link the store records."""

    REVERTS = "reverts"
    FIXES = "fixes"  # a regression fix
    FOLLOWS = "follows"  # a follow-up or a reland


class Doubt(Enum):
    """What a yes/no doubts, which a fix or a revert answers no."""

    PERSISTS = "persists"  # "does X still crash?": a fix says no
    KEPT = "kept"  # "did X stick?": a revert says no
    NOW = "now"  # "is X on now?": a revert says no, and a reland after it yes
    UNDONE = "undone"  # "is X still reverted?": a reland says no


class Order(Enum):
    """The one PR asked for among those asked about."""

    FIRST = "first"  # the first to merge
    LAST = "last"  # the last to merge
    LARGEST = "largest"  # the most files changed
    GAIN = "gain"  # the largest improvement stated


class Tally(Enum):
    """Who or what is counted for "the most": their PRs come first."""

    AUTHOR = "author"
    MERGER = "merger"
    AREA = "area"


class Side(Enum):
    """Which side of the earlier question's time a follow-up asks about: "anything newer?", "his earlier work?"."""

    AFTER = "after"
    BEFORE = "before"


class Role(Enum):
    """What a person asked about did: wrote the PR, merged it, or either."""

    ANY = "any"
    AUTHOR = "author"
    MERGER = "merger"


class PRType(StrEnum):
    """The report's two types of PR; the values are the store's."""

    SUBSTANTIAL = "substantial"
    TRIVIAL = "trivial"


@dataclass(frozen=True)
class Person:
    login: str
    role: Role


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
    pr_type: PRType | None = None  # when the question names one
    # The one PR that merged first or last of those asked about, or that is most of something.
    order: Order | None = None
    tally: Tally | None = None  # who or what has the most PRs, whose PRs come first
    linked: tuple[Relation, ...] = ()  # "what got reverted?", "was X relanded?": the kinds of link whose other side is asked
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
    relative: Side | None = None
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
        return not says_something or bool(LEANS_BACK.search(self.text.lower()))

    @property
    def continues(self) -> bool:
        return continues(self.text)

    @property
    def points_back(self) -> bool:
        """Whether the question is about PRs an earlier answer gave ("was any of that reverted?", "did it come
        back?", "were they reverted?"), and names nothing of its own to ask it of."""
        names_its_own = self.numbers or self.paths or self.areas or self.people
        return not names_its_own and bool(POINTS_BACK.search(self.text.lower()))

    @property
    def narrows(self) -> bool:
        """Whether the question picks among what an earlier answer gave: "which of those touched ROCm?"."""
        return bool(NARROWS.search(self.text.lower()))

    @property
    def picks_among(self) -> bool:
        """Whether the question asks which of the earlier answer's PRs answer it, they being its subject."""
        return bool(PICKS_AMONG.search(self.text.lower()))

    @property
    def points_at_people(self) -> bool:
        """Whether the question is about the people an earlier answer named: "what else did they land?"."""
        return not self.people and bool(PEOPLE_BACK.search(self.text.lower()))

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
            if self.relative is Side.AFTER and earlier.time.end:
                merged.time = TimeRange(earlier.time.end, None, "since then")
            elif self.relative is Side.BEFORE and earlier.time.start:
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
        verb = _ROLE_VERBS.get(next(iter(roles), Role.ANY), "authored or merged")
        parts = [f"{verb} by {logins}" if single_role else "merged"]
        if self.time:
            parts.append(self.time.label)
        if self.within:
            parts.append(f"among those {len(self.within)}")
        if self.besides:
            parts.append(f"besides those {len(self.besides)}")
        if self.people and not single_role:
            parts.append(describe_people(self.people))
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


_ROLE_VERBS = {Role.AUTHOR: "authored", Role.MERGER: "merged"}


def describe_people(people: list[Person]) -> str:
    by_role = {Role.ANY: "by", Role.AUTHOR: "authored by", Role.MERGER: "merged by"}
    return " or ".join(f"{by_role[person.role]} {person.login}" for person in people)


@dataclass(frozen=True)
class Phrases:
    same: tuple[str, ...]  # the words as asked first, then what means the same
    all: tuple[str, ...]  # `same`, then related terms
    wider: tuple[str, ...] = ()  # of the related terms, those broader than what was asked


# Every bot at once: a person asked about ("what did the bot merge?") or left out ("not counting the bot").
BOTS = "bots"


def is_bot(login: str) -> bool:
    lowered = login.lower()
    return lowered.endswith(("[bot]", "-bot", "_bot")) or lowered == "bot"
