"""What a question asks for, as read once: its time, people, areas, PR numbers, words, what it leaves out, and the
shape of answer it expects. Search, choosing and answers read only this, never the question's text."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Any

from store.retrieval.reading.releases import ReleaseAsk, ReleaseQuestion, release_following
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

    def answering(self) -> tuple[Relation, ...]:
        """The kinds of link that answer a question about this one: a fix that names an earlier PR followed it up
        too, so "did anything follow up on #N?" is answered by it."""
        return (Relation.FOLLOWS, Relation.FIXES) if self is Relation.FOLLOWS else (self,)


class Doubt(Enum):
    """What a yes/no doubts, which a fix or a revert answers no."""

    PERSISTS = "persists"  # "does X still crash?": a fix says no
    KEPT = "kept"  # "did X stick?": a revert says no
    NOW = "now"  # "is X on now?": a revert says no, and a reland after it yes
    UNDONE = "undone"  # "is X still reverted?": a reland says no

    @property
    def of_a_revert(self) -> bool:
        """Whether a revert answers it (no, or of UNDONE, yes)."""
        return self is not Doubt.PERSISTS


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
    # "what did X merge?": said as merging, which may mean landing their own; the PRs they merged answer, if any does.
    merges: bool = False


@dataclass(frozen=True)
class Phrases:
    same: tuple[str, ...]  # the words as asked first, then what means the same
    all: tuple[str, ...]  # `same`, then related terms
    wider: tuple[str, ...] = ()  # of the related terms, those broader than what was asked


@dataclass(frozen=True)
class Concept:
    """Something the question is about: the words as asked, what means the same, and related phrases."""

    said: str
    phrases: Phrases
    # The relations its words only restate ("reverted", "regressions" asked of a revert or a fix), and those they
    # name outright; and whether it names a measure of speed or size ("ttft", "throughput", "memory").
    restates: frozenset[Relation] = frozenset()
    names: frozenset[Relation] = frozenset()
    metric: bool = False
    misspelt_filler: bool = False  # a common question word typed with one slip ("waht", "workin"): it says nothing
    code: bool = False  # a name from code, as a flag, a variable or in backticks: "--disable-log-requests", "VLLM_X_Y"
    # A name for certain by how it is said: before a kind of thing ("jamba models", "the outlines backend"), or again
    # in another sentence of the question.
    said_as_name: bool = False


@dataclass(frozen=True)
class Cues:
    """What a question's own words say beyond its fields, read from its text with the rest of it."""

    # Leaning on an earlier question of its thread.
    continues: bool = False  # opens by carrying on: "and on apr 9?", "what about ROCm?"
    leans_back: bool = False  # opens so, or says "it", "those", "the same"
    points_back: bool = False  # "it", "that one", "any of those": at the PRs an earlier answer gave
    narrows: bool = False  # "which of those touched ROCm?", "the moe one": picks among them
    picks_among: bool = False  # "which of those was the fix?": they are its subject
    people_back: bool = False  # "they", "his": the people an earlier answer named
    original: bool = False  # "the original": what a revert or a follow-up undid or followed
    one_back: bool = False  # "it", "this one", "that one": one PR
    besides_shown: bool = False  # "else", "other": besides what the earlier answer cited
    # Asking about PRs it names.
    explains: bool = False  # "why", "how", "tell me": about the named PR's story, both sides of a relation
    about_named: bool = False  # "what does #N do?": #N answers, what relates to it is context
    asks_why: bool = False  # "why did we pin triton?": the answer gives the PR's own reason
    asks_default: bool = False  # "is it on by default?": what the PR says of its default answers
    asks_default_off: bool = False  # "is it still opt-in?": the default asked the other way round
    upgrading: bool = False  # "safe to bump?", "anything that breaks us if we upgrade?": what a new version means for a setup
    reland: bool = False  # "what does #N reland?": the PR a revert took out, not the revert or other follow-ups
    # For each relation, the numbers said before the words that say it: "#N reverted what?".
    named_before: dict[Relation, frozenset[int]] = field(default_factory=dict)
    names_mergers: bool = False  # "who merged …": the people to name are those who merged
    # Each "or", "," and "/" of the question, with the words before and after it ("whisper or audio").
    joints: tuple[tuple[str, str], ...] = ()

    def joined(self, before: str, after: str) -> bool:
        """Whether the question says `before`, then `after`, as alternatives: "whisper or audio", "eagle, mtp"."""
        return any(left.endswith(before) and right.startswith(after) for left, right in self.joints)


# Every bot at once: a person asked about ("what did the bot merge?") or left out ("not counting the bot").
BOTS = "bots"


@dataclass(frozen=True)
class Query:
    """A question as read, once per turn. In a thread, `following` fills in what it leaves unsaid."""

    time: TimeRange | None = None
    people: tuple[Person, ...] = ()
    areas: tuple[str, ...] = ()
    # The words that named an area ("scheduler" for core), their synonyms and the
    # area's name: a PR that says them counts as being about the area.
    area_phrases: tuple[str, ...] = ()
    # Of those, the words as asked and what means the same: PRs saying these come first.
    area_same: tuple[str, ...] = ()
    # Areas named as alternatives ("speech / audio", "LoRA on TPU or XPU"): a PR is in one area of each group.
    # Empty, or not of the areas asked (they were dropped): a PR is in all of them.
    area_groups: tuple[tuple[str, ...], ...] = ()
    numbers: tuple[int, ...] = ()
    concepts: tuple[Concept, ...] = ()
    paths: tuple[str, ...] = ()  # lowercase parts of changed files' paths ("vllm/config/", "envs.py")
    pr_type: PRType | None = None  # when the question names one
    excluded: tuple[str, ...] = ()  # logins left out ("besides the bot"); BOTS for every bot
    # The role they are left out in: "not from bots" leaves out what bots wrote, "not merged by X" what X merged.
    excluded_role: Role = Role.ANY
    # "not about CI", "isn't ROCm CI", "not CI or docs": a PR in every area of one of these groups is left out.
    excluded_areas: tuple[tuple[str, ...], ...] = ()
    # "that isn't tool calling", "apart from the metrics one": a PR whose title or first sentence says these is left out.
    excluded_words: tuple[Concept, ...] = ()
    # "didn't touch anything under tests/": a PR that changed a file whose path holds one of these is left out.
    excluded_paths: tuple[str, ...] = ()
    unknown: tuple[Concept, ...] = ()  # words asked that no PR says: they count against every PR
    problems: tuple[str, ...] = ()  # what could not be read, said after the answer
    # The shape of the answer.
    intent: Intent = Intent.LOOKUP
    relation: Relation | None = None  # when the question asks about one
    relation_implied: bool = False  # asked only by a doubt: "is X still on?" is whether something reverted it
    asks_other: bool = False  # about the PR on the other side of the relation from one it names
    culprit: bool = False  # about the PR that caused a problem, not the one that fixed it
    passive: bool = False  # "which of those got reverted?": about the PRs the relation was done to
    doers: bool = False  # "all the reverts since march": about the PRs that did it, not both sides
    one: bool = False  # "which PR added X?", "the one where …": the one PR that says it best
    doubt: Doubt | None = None  # what a yes/no doubts
    order: Order | None = None  # the one PR that merged first or last, or that is most of something
    tally: Tally | None = None  # who or what has the most PRs, whose PRs come first
    relative: Side | None = None  # "anything newer?", "his earlier work?": the earlier question's time, from one side
    about_risks: bool = False  # "what could go wrong", "risks of": answered from what PRs say among their risks
    improves: bool = False  # "what cut TTFT?", "made ITL better": asks for PRs that state a gain in what it names
    removes: bool = False  # "which PR dropped --x?": asks for what took a thing out, not what it is
    soon_after: bool = False  # "which of those was reverted within hours?": both sides merged within a day
    # In a thread: "which of those …" may cite only the earlier answer's PRs; "what else …" none of them.
    within: tuple[int, ...] = ()
    besides: tuple[int, ...] = ()
    release: ReleaseQuestion | None = None  # what it asks of releases, as its words say it (see release_ask)
    # "are we still on xgrammar 0.1.32?": the releases of a dependency asked about; its name alone is searched.
    versions: tuple[str, ...] = ()
    # The words of each sentence, when the question has several ("mooncake connector changes? we use it for …"):
    # what a sentence asks about is weighed against that sentence's words, not the background of the others.
    sentences: tuple[frozenset[str], ...] = ()
    cues: Cues = Cues()

    # ------------------------------------------------------------ what it holds

    @property
    def has_filters(self) -> bool:
        return bool(self.time or self.people or self.areas or self.paths or self.within)

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

    def in_areas(self, areas: list[str]) -> bool:
        """Whether a PR of these areas is in the question's: all named together, one of those named as alternatives."""
        return all(set(group) & set(areas) for group in self.areas_together())

    def areas_together(self) -> tuple[tuple[str, ...], ...]:
        """The groups a PR must be in one area of each: alternatives in one group, areas named together apart."""
        if sorted({area for group in self.area_groups for area in group}) == sorted(self.areas):
            return self.area_groups
        return tuple((area,) for area in self.areas)

    # ------------------------------------------------------------ the shape asked

    @property
    def linked(self) -> tuple[Relation, ...]:
        """The kinds of link whose other side is asked about too: "what got reverted?", "was X ever relanded?"."""
        if self.relation is None or self.doers or self.intent is Intent.COUNT:
            return ()
        return self.relation.answering()

    @property
    def asks_reverted(self) -> bool:
        """Whether the reverted PRs answer beside their reverts: "what got reverted?" (not "all the reverts", nor
        "how many reverts", which count the reverts)."""
        return self.relation is Relation.REVERTS and bool(self.linked)

    @property
    def doubts_revert(self) -> bool:
        """Whether a revert answers the question no: "did X stick?", "is X on now?"."""
        return self.doubt is not None and self.doubt.of_a_revert

    @property
    def release_ask(self) -> ReleaseAsk | None:
        """What it asks of releases, with the rest of it: of PRs named, where they shipped; of a topic asked yes or no
        beside a release ("did the ROCm fix make it into v0.11?"), the same of the PRs found; of a release alone, or
        a topic beside one ("anything on ROCm in v0.11?"), what the release holds. None: nothing of releases, or
        where something shipped with nothing to ask it of ("was anything released?")."""
        release = self.release
        if release is None:
            return None
        if self.numbers:
            return ReleaseAsk.SHIPPED
        if release.ask is ReleaseAsk.UNRELEASED:
            return release.ask
        named = release.tag is not None or release.latest
        if release.ask is ReleaseAsk.SHIPPED or (release.ask is None and self.intent is Intent.YESNO and not release.since):
            return ReleaseAsk.SHIPPED if self.has_topic or self.people or self.paths else (ReleaseAsk.HOLDS if named else None)
        return ReleaseAsk.HOLDS if named or release.since else None

    # ------------------------------------------------------------ in a thread

    @property
    def elliptical(self) -> bool:
        """Whether the question leans on an earlier one: it says nothing of its own, opens with "and" or
        "what about", or points back ("who wrote it?"). Any other question stands alone."""
        says_something = self.has_topic or self.time or self.people or self.paths or self.release is not None
        return not says_something or self.cues.leans_back

    @property
    def points_back(self) -> bool:
        """Whether the question is about PRs an earlier answer gave ("was any of that reverted?", "did it come
        back?", "were they reverted?"), and names nothing of its own to ask it of."""
        names_its_own = self.numbers or self.paths or self.areas or self.people
        return not names_its_own and self.cues.points_back

    @property
    def points_at_people(self) -> bool:
        """Whether the question is about the people an earlier answer named: "what else did they land?"."""
        return not self.people and self.cues.people_back

    def following(self, earlier: Query) -> Query:
        """This question as a follow-up in a thread: what it leaves unsaid, the earlier one supplies.

        "and on ROCm?" after "what changed in the scheduler this week?" keeps the
        week and swaps the topic; "and by njhill?" keeps both. A question that
        leaves out only the time keeps the thread's ("anything on ROCm?"); one that
        says its own time takes nothing more unless it leans back ("how many PRs
        merged on Feb 28?" after a question about a leak is about every PR). One
        that asks nothing of its own shape ("and on apr 9?") keeps the earlier shape.
        """
        release = release_following(self.release, earlier.release, self._carries_on)
        merged = replace(self, time=self._time_following(earlier), release=release, **self._shape_following(earlier))
        if not self.elliptical:
            return merged
        return replace(merged, **self._unsaid_following(earlier))

    def _time_following(self, earlier: Query) -> TimeRange | None:
        if self.time is not None or earlier.time is None:
            return self.time
        if self.relative is Side.AFTER and earlier.time.end:
            return TimeRange(earlier.time.end, None, "since then")
        if self.relative is Side.BEFORE and earlier.time.start:
            return TimeRange(None, earlier.time.start, "before then")
        return earlier.time

    @property
    def _carries_on(self) -> bool:
        """Whether it asks nothing of its own shape and carries on from the earlier question: "and #123?"."""
        return self.intent is Intent.LOOKUP and self.cues.continues

    def _shape_following(self, earlier: Query) -> dict[str, Any]:
        """The earlier question's shape, when this one asks nothing of its own and carries on from it."""
        if not self._carries_on:
            return {}
        return {name: getattr(earlier, name) for name in _SHAPE}

    def _unsaid_following(self, earlier: Query) -> dict[str, Any]:
        """What an elliptical question takes from the earlier one: the type, order, people and topic it does not say,
        and what the earlier one left out when it leaves nothing out itself."""
        unsaid: dict[str, Any] = {
            "pr_type": self.pr_type or earlier.pr_type,
            "order": self.order or earlier.order,
            "people": self.people or earlier.people,
        }
        if not self.leaves_out:
            # "not counting the bot, who merged the most yesterday?" then "and on apr 9?": still not counting it.
            unsaid.update({name: getattr(earlier, name) for name in _LEFT_OUT})
        if not self.has_topic and not self.paths:
            unsaid.update({name: getattr(earlier, name) for name in _TOPIC})
        return unsaid

    # ------------------------------------------------------------ in words

    def noun(self, count: int = 0, many: bool = False) -> str:
        """What the question counts, for `count` of them or `many`: "PR", "trivial PRs"."""
        return f"{self.pr_type + ' ' if self.pr_type else ''}{'PR' if count == 1 and not many else 'PRs'}"

    def describe(self) -> str:
        """The filters and topic in words, for framing an answer: 'merged on Fri Feb 13 in ci about "fixes"'.

        Whether the PRs are trivial or substantial is said by `noun`."""
        parts = [*self._who_and_when(), *self._where_and_what()]
        left_out = self._left_out()
        if left_out:
            parts.append("leaving out " + ", ".join(left_out))
        return " ".join(parts)

    def _who_and_when(self) -> list[str]:
        roles = {person.role for person in self.people}
        logins = " or ".join(person.login for person in self.people)
        single_role = len(roles) == 1
        verb = _ROLE_VERBS.get(next(iter(roles), Role.ANY), "authored or merged")
        parts = [f"{verb} by {logins}" if single_role else "merged"]
        if self.time:
            parts.append(self.time.label)
        if self.within:
            parts.append(f"among those {len(self.within)}" if len(self.within) > 1 else "in that answer")
        if self.besides:
            parts.append(f"besides those {len(self.besides)}")
        if self.people and not single_role:
            parts.append(" or ".join(f"{_BY_ROLE[person.role]} {person.login}" for person in self.people))
        return parts

    def _where_and_what(self) -> list[str]:
        parts = []
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
        if self.soon_after and self.relation:
            parts.append(f"within a day of the PR it {_NAMES_ITS_OTHER[self.relation]}")
        return parts

    def _left_out(self) -> list[str]:
        bots = BOTS in self.excluded
        return [
            *([BOTS] if bots else []),
            *(login for login in self.excluded if login != BOTS and not (bots and is_bot(login))),
            *(" ".join(group) for group in self.excluded_areas),
            *(f'"{concept.said}"' for concept in self.excluded_words),
            *(f"what touches `{path}`" for path in self.excluded_paths),
        ]


# How a PR stating a relation names the PR on its other side.
_NAMES_ITS_OTHER = {Relation.REVERTS: "reverts", Relation.FIXES: "fixes", Relation.FOLLOWS: "follows up on"}

# The fields a follow-up takes from the earlier question, by what it leaves unsaid.
_SHAPE = ("intent", "relation", "relation_implied", "asks_other", "culprit", "passive", "doers", "one", "doubt", "tally")
_LEFT_OUT = ("excluded", "excluded_areas", "excluded_words", "excluded_paths")
_TOPIC = ("paths", "areas", "area_groups", "area_phrases", "area_same", "concepts", "numbers")
_ROLE_VERBS = {Role.AUTHOR: "authored", Role.MERGER: "merged"}
_BY_ROLE = {Role.ANY: "by", Role.AUTHOR: "authored by", Role.MERGER: "merged by"}


def is_bot(login: str) -> bool:
    lowered = login.lower()
    return lowered.endswith(("[bot]", "-bot", "_bot")) or lowered == "bot"
