"""Choosing the PRs that answer a question, out of those search ranks first.

Search finds; this module decides how many of the found PRs a well-informed
teammate would cite:
- PRs named by number, with the PRs that revert, fix or follow them;
- a relation asked without a number ("what got reverted?"): every PR that states it;
- filters alone (a time, a person, an area, trivial or substantial): the whole set they define,
  newest first, with its count;
- words: the PRs that say what was asked where it counts (title, what changed, files), judged per
  concept and weighted by how rare each word is, so a PR matching only "added" or "fix" does not answer.
What did not make the cut but came close is kept as context, never cited as an answer.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta

from sqlite_utils import Database

from store.model import PullRequest
from store.retrieval.evidence import FIELD_WEIGHT, gather
from store.retrieval.exclusions import excluded
from store.retrieval.finding.conditions import narrowing_condition
from store.retrieval.finding.grading import POOL
from store.retrieval.finding.hits import Hit
from store.retrieval.finding.listing import COUNT_CAP
from store.retrieval.fts import area_name, membership_expression
from store.retrieval.reading.query import BOTS, Concept, Intent, Order, Person, Phrases, Query, Relation, Role, is_bot
from store.retrieval.search import SearchResult, missing_note, search, size, tally_keys, without_unknown_words
from store.retrieval.subject import identifiers_unsaid, is_unsaid_subject
from store.tables.prs import first_id, get_pr, pr_from_row
from store.text.patterns import LazyPattern
from store.text.prose import atoms, holds
from store.understanding.dependencies import moved
from store.understanding.relations import KINDS, Link, related, revert_title, stated
from store.understanding.vocabulary import cue

# A whole set is gathered up to this many PRs (or as many as the asker wants listed), and counted up to COUNT_CAP.
MAX_LISTED = 50
# Next-best PRs kept as context (for a model to read, or to show when nothing answers).
CONTEXT = 3
# A question of at most this many words is about the part, model or version it names; in a longer one ("peft
# finetunes of qwen3-30b-a3b that hook into …") a name is one detail of a description.
NAMED_SUBJECT_WORDS = 3
# Two sides of a relation merged at most this far apart merged "the same day", "within hours".
SOON = timedelta(days=1)
# Relations strong enough to answer a question about a PR; a plain mention is only context.
STRONG = KINDS[:-1]
# A yes/no about a relation nothing states is answered no about at most this many of the PRs its words chose.
NAMED_IN_A_NO = 2
# Words: a PR answers when it says at least this share of what was asked (each word weighted by how
# rare it is), and nearly as much as the PR that says most. Both were set on the halves of the blind
# evaluations that tuning may look at (bench/eval.py --set tune --set tune2 --set tune3 --set tune4).
MIN_COVERAGE = 0.3
NEAR_BEST = 0.75
# "did X land?" is answered by the PRs that say X about as well as the best one does, not by its neighbours:
# set on batches 1-31 of the blind evaluations (0.85-0.95 alike), measured on 32 and 33.
YES_NEAR_BEST = 0.9
# A name from code said in a PR's title or first sentence: the PR is about it.
CODE_SAID = FIELD_WEIGHT["lead"]


@dataclass
class Choice:
    answer: list[PullRequest]  # the PRs that answer, in the order to show them
    context: list[PullRequest]  # close but not answering: for a model to read, or "nearest" when nothing answers
    question: Query  # what was searched for
    total: int  # how many answer (may exceed len(answer) for a long set; counted up to COUNT_CAP)
    whole_set: bool  # the filters defined the answer: every PR they hold
    note: str | None = None  # PR numbers the store does not have
    links: list[Link] = field(default_factory=list)  # relations between the PRs shown, stating side first
    tally: list[tuple[str, int]] = field(default_factory=list)  # who or what has the most PRs, most first
    # For a question of words: every graded PR, best first, from which the answer was cut (a model may choose again).
    candidates: list[PullRequest] = field(default_factory=list)
    unsaid: bool = False  # what the question is about is said by no PR: nothing answers, the nearest are context
    unsaid_among: bool = False  # ... by none of the PRs that say the rest (`question.unknown` holds what they do not)
    # The PRs that state the relation asked about, kept link or not (what they name may not be stored).
    stating: frozenset[int] = frozenset()


def choose(db: Database, repo: str, asked: Query, listed: int = MAX_LISTED) -> Choice:
    """The PRs that answer `asked` (a question as read) in the shape it expects; a whole set up to `listed` of them."""
    question = asked
    if question.relation and any(question.relation in c.names for c in question.excluded_words):
        question = replace(question, relation=None)  # "what did X author other than the revert": no revert is asked for
    question = without_relation_words(question)
    missing = missing_note(db, repo, question)
    choice = _by_number(db, repo, question) if question.numbers else None
    if choice is None:
        question = replace(question, numbers=())
        choice = _choose(db, repo, question, max(listed, MAX_LISTED))
        if question.order and choice.answer:
            choice = _at_the_end(db, repo, choice, question.order)
    if question.intent is Intent.WHO and choice.links and not question.culprit and not question.within:
        # "who reverted #N?", "who wrote it?" after a relation: who did it. "who wrote #N?": #N's author.
        choice = _the_doers(choice) if question.relation or asked.elliptical else _the_named(choice)
    if question.within and not question.asks_other:
        choice = _among(db, repo, choice)
    if question.soon_after and choice.links:
        choice = _soon_after(db, repo, choice)
    mergers = [replace(person, role=Role.MERGER) for person in question.people if person.merges]
    if any(_by(pr, merger) for pr in choice.answer for merger in mergers):
        # "what did njhill merge yesterday?": those they merged, when they merged any; else what they landed.
        choice = _only(choice, lambda pr: any(_by(pr, merger) for merger in mergers))
    return replace(choice, note=missing)


def _soon_after(db: Database, repo: str, choice: Choice) -> Choice:
    """"which of those was reverted within hours?": only the relations whose two sides merged within a day answer,
    both sides cited; "which of those reverted something from the same day?" picks the side that did it."""
    known = {pr.number: pr for pr in [*choice.answer, *choice.context]}
    doers_only = bool(choice.question.within) and not choice.question.passive
    links: list[Link] = []
    answer: dict[int, PullRequest] = {}
    for link in choice.links:
        one, other = (known.get(n) or get_pr(db, repo, n) for n in (link.number, link.other))
        if one is not None and other is not None and abs(one.merged_at - other.merged_at) <= SOON:
            links.append(link)
            answer.update({pr.number: pr for pr in ((one,) if doers_only else (one, other))})
    context = [pr for pr in choice.answer if pr.number not in answer][:CONTEXT]
    return replace(choice, answer=list(answer.values()), context=context, total=len(links), links=links)


def _among(db: Database, repo: str, choice: Choice) -> Choice:
    """"which of those was a regression fix?": only the earlier answer's PRs answer, and of a relation only those
    that state it ("which of those got reverted?", "which of those broke something?": that it was done to)."""
    within = set(choice.question.within)
    if not choice.question.relation:
        return _only(choice, lambda pr: pr.number in within)
    done_to = choice.question.passive or choice.question.culprit
    # The relations that make each of those PRs answer, stated as the first line tells them.
    stated = {
        pr.number: [_stating_first(link) for link in related(db, repo, pr.number)
                    if link.kind in choice.question.relation.answering() and link.outgoing != done_to]
        for pr in choice.answer if pr.number in within
    }
    links = [link for found in stated.values() for link in found]
    return _only(choice, lambda pr: bool(stated.get(pr.number)), links=links)


def _only(choice: Choice, answers: Callable[[PullRequest], bool], links: list[Link] | None = None) -> Choice:
    """The choice with only the PRs that `answers` keeps answering; the others become context."""
    answer = [pr for pr in choice.answer if answers(pr)]
    if len(answer) == len(choice.answer):
        return choice
    rest = [pr for pr in choice.answer if not answers(pr)]
    return replace(choice, answer=answer, context=[*rest, *choice.context][:CONTEXT], total=len(answer),
                   links=choice.links if links is None else links)


def _by_number(db: Database, repo: str, question: Query) -> Choice | None:
    """The PRs named, with what relates to them; None when the store has none of them and words are left to search."""
    result = search(db, repo, question, limit=MAX_LISTED)
    if any(hit.link is None for hit in result.hits):
        return _named(db, repo, result)
    if not question.concepts:  # about PRs the store does not have, and nothing else
        return Choice([], [], question, 0, False)
    return None


def _the_doers(choice: Choice) -> Choice:
    """"who fixed it?", "who wrote it?" after a relation: the PRs that state it (the fix, the revert) answer; the rest is
    context. "who broke it?" cites the fix beside the culprit, as what tells of the breakage."""
    doers = {link.number for link in choice.links}
    if not any(pr.number in doers for pr in choice.answer):
        return choice
    return _only(choice, lambda pr: pr.number in doers)


def _the_named(choice: Choice) -> Choice:
    named = set(choice.question.numbers)
    if not any(pr.number in named for pr in choice.answer):
        return choice
    return _only(choice, lambda pr: pr.number in named, links=[])


def _at_the_end(db: Database, repo: str, choice: Choice, order: Order) -> Choice:
    """The one PR that merged first or last of those chosen, or is the largest or states the largest gain (of all of
    them, when the list shown was cut, up to the newest COUNT_CAP; every one of them when several are as large)."""
    prs = choice.answer
    question = choice.question
    if choice.whole_set and choice.total > len(prs) and order is not Order.LAST:
        prs = [hit.pr for hit in search(db, repo, replace(question, order=None), limit=COUNT_CAP).hits if _kept(hit.pr, question)]
        if choice.total > COUNT_CAP and order is not Order.FIRST:
            question = replace(question, problems=(*question.problems, f"only the newest {COUNT_CAP:,} of them were compared"))
    prs = prs or choice.answer
    if order in (Order.FIRST, Order.LAST):
        end = (min if order is Order.FIRST else max)(prs, key=lambda pr: pr.merged_at)
        return replace(choice, answer=[end], context=[], total=1, whole_set=False, question=question)
    if order is Order.GAIN:
        # The gain in what was asked ("the largest TTFT cut"), when a PR states one beside it; else any gain stated.
        said = _metric_phrases(question)
        gains = {pr.number: _gain(pr, said) for pr in prs}
        if not any(gains.values()):
            gains = {pr.number: _gain(pr, []) for pr in prs}
        measure: Callable[[PullRequest], tuple[float, ...]] = lambda pr: (gains[pr.number],)
    else:
        measure = size
    most = max(measure(pr) for pr in prs)
    if order is Order.GAIN and not most[0]:  # no PR states a gain
        return replace(choice, answer=[], context=prs[:CONTEXT], total=0, whole_set=False, question=question)
    ends = [pr for pr in prs if measure(pr) == most]
    return replace(choice, answer=ends[:MAX_LISTED], context=[], total=len(ends), whole_set=False, question=question)


# "2.3x faster", "40% lower TTFT", "cuts latency by 30%": a number beside what got better. "8x H100" (how many
# GPUs) is no gain, nor "2x slower", nor the digits of a name ("MI355X", "v7x").
_STATED_NUMBER = LazyPattern(
    r"(?<![\w.])(?P<number>\d+(?:\.\d+)?)\s*(?:(?P<times>x|\u00d7)(?![\w\u00d7])(?!\s?[a-z]{1,4}\d)|%|\s?percent\b)"
    # "from 310 ms to 35 ms": the same unit (or none) on both sides.
    r"|\bfrom\s(?P<low>\d+(?:\.\d+)?)\s?(?P<unit>[a-z]{1,3}\b)?\sto\s(?P<to>\d+(?:\.\d+)?)\s?(?P=unit)?",
    re.IGNORECASE,
)
# The words beside a stated number that make it a gain ("2.3x faster", "TTFT falls by 30%"), or a loss.
_GAIN_BESIDE, _LOSS_BESIDE = cue("gain_beside"), cue("loss_beside")
# How far from the number its words are read, before and after.
_GAIN_WINDOW = 40


# Where a clause ends: "recomputed tokens fall by 64% and TTFT by 31%" states 31% of TTFT, not 64%.
_CLAUSE_END = LazyPattern(r"[.;,:]\s|\sand\s")


def _metric_phrases(question: Query) -> list[list[str]]:
    """The words of each metric the question names ("ttft", "time to first token"), for finding the gain stated in it."""
    return [atoms(phrase) for concept in question.concepts if concept.metric for phrase in concept.phrases.all]


def _clause(text: str, ends: list[re.Match[str]], start: int, end: int) -> str:
    """The clause of `text` (whose clause ends are `ends`) that holds text[start:end]."""
    begin = max((m.end() for m in ends if m.end() <= start), default=0)
    finish = min((m.start() for m in ends if m.start() >= end), default=len(text))
    return text[begin:finish]


def _gain(pr: PullRequest, about: list[list[str]]) -> float:
    """The largest improvement a PR states, as a factor, beside one of the phrases `about` (as words) when given:
    "2.3x" is 2.3, "40%" is 1.4, "drops from 310 ms to 35 ms" is 8.9; 0 when it states none."""
    summary = pr.summary
    text = " ".join((pr.title, summary.what_changed, summary.impact) if summary else (pr.title,))
    ends = list(_CLAUSE_END.finditer(text)) if about else []
    factors = []
    for found in _STATED_NUMBER.finditer(text):
        if found["low"] is not None:
            if not about:
                continue  # "from 6.1 ms to 0.4 ms" of some step is a speedup only of what was asked
            low, high = sorted((float(found["low"]), float(found["to"])))
            factor = high / low if low else 0.0
        else:
            factor = float(found["number"]) if found["times"] else 1 + float(found["number"]) / 100
        beside = text[max(0, found.start() - _GAIN_WINDOW) : found.end() + _GAIN_WINDOW]
        if not _GAIN_BESIDE.search(beside) or _LOSS_BESIDE.search(beside):
            continue
        if about and not any(holds(atoms(_clause(text, ends, found.start(), found.end())), phrase) for phrase in about):
            continue
        factors.append(factor)
    return max(factors, default=0.0)


def _choose(db: Database, repo: str, question: Query, listed: int) -> Choice:
    if question.concepts:
        question, unsaid = _without_unsaid(db, repo, question)
        if unsaid:
            return _unsaid(db, repo, question)
    if question.tally:
        return _tallied(db, repo, question)
    if question.relation and not question.concepts:
        return _relation(db, repo, question)
    if not question.concepts:
        return _whole_set(db, repo, question, listed)
    choice = _by_words(db, repo, question)
    if question.relation:
        return _through_relation(db, repo, choice)
    return choice if question.intent is Intent.YESNO else _named_as_asked(choice, question)


def _named_as_asked(choice: Choice, question: Query) -> Choice:
    """A part, model or version asked by its name ("the tpu v4 backend", "deepseek v2") that none of the PRs chosen
    says: they are about something else of the same kind, so nothing answers and they are the nearest. (A yes/no
    says so of its closest PR in its own words.)"""
    if len(question.concepts) > NAMED_SUBJECT_WORDS:
        return choice
    unsaid = set(identifiers_unsaid(choice.answer, [c for c in question.concepts if not c.metric]))
    if not unsaid:
        return choice
    split = replace(choice.question, concepts=tuple(c for c in question.concepts if c.said not in unsaid),
                    unknown=tuple(c for c in question.concepts if c.said in unsaid))
    return replace(choice, answer=[], context=choice.answer[:CONTEXT], total=0, question=split, unsaid=True,
                   unsaid_among=bool(split.concepts))


def _without_unsaid(db: Database, repo: str, question: Query) -> tuple[Query, bool]:
    """The question without the words no PR says, when what is left still picks PRs; and whether those words were
    what it is about, so that nothing answers.

    "anything at the intersection of ROCm and LoRA?", "the most prolific author
    last week", "what did those reverts undo?", "every pr taht touched envs.py":
    two areas together, a type, a relation, a tally, a path or a person answer.
    One area or a time is no such filter: in "the rust frontend" or "anything
    for Gaudi last week?", the word no PR says is the point, and in "any rocm
    fixes for the mi250?" it outweighs the common word left (store.retrieval.subject).
    """
    # A relation only implied by a doubt ("is zephyr supported now?") is no filter: the words are what it is about.
    relation = question.relation and not question.relation_implied
    stands = bool(len(question.areas) > 1 or question.pr_type or relation or question.tally or question.paths)
    # Split as if what is left stood: a person or a filter that stands keeps the same split.
    known = without_unknown_words(db, repo, question, stands=True)
    if stands or question.people or not known.unknown:
        return known, False
    if not known.concepts:  # every word is one no PR says
        return replace(known, concepts=known.unknown, unknown=()), True
    return known, is_unsaid_subject(db, repo, known)


def _unsaid(db: Database, repo: str, question: Query) -> Choice:
    """What the question is about is said by no PR: no PR answers, and the PRs that say the rest are the nearest."""
    nearest = _by_words(db, repo, question)
    context = [*nearest.answer, *nearest.context][:CONTEXT]
    return Choice([], context, nearest.question, 0, False, candidates=nearest.candidates, unsaid=True)


def without_relation_words(question: Query) -> Query:
    """A relation is answered from the relations table; its words ("reverted") are not a topic."""
    if question.relation is None:
        return question
    relation = question.relation
    return replace(question, concepts=tuple(c for c in question.concepts if relation not in c.restates))


# ---------------------------------------------------------------- numbers and relations


def _named(db: Database, repo: str, result: SearchResult) -> Choice:
    """PRs named by number, and those that revert, fix or follow them (the kind asked, if one was).

    "What reverted #N?" asks for the other PR: #N is then context. When no PR
    relates in the kind asked, one that merely mentions a named PR is the best there is.
    """
    question = result.question
    kinds = {hit.link.kind for hit in result.hits if hit.link is not None}
    wanted: tuple[str, ...] = question.relation.answering() if question.relation else STRONG
    if not kinds & set(wanted):
        wanted = (*wanted, "mentions")
    others = [hit for hit in result.hits if hit.link is not None and hit.link.kind in wanted]
    if question.relation:
        # "follow-ups to #N?" asks for what follows #N, not what #N follows; "what did #N revert?" the other way.
        outgoing = _named_does_it(question)
        others = [hit for hit in others if hit.link and hit.link.outgoing == outgoing] or others
    if question.cues.reland:
        others = _relanded_originals(db, repo, others)
    # "follow-ups to #N?": the PRs that follow it answer; #N, already known, is context ("why was #N reverted?"
    # is about both).
    asked_of_named = question.relation is not None and not question.within and not question.cues.explains
    named_only = (question.asks_other or asked_of_named) and others
    # "what does #N do?": #N answers; what relates to it is told, as context ("tell me about #N" is its story).
    only_named = question.relation is None and question.cues.about_named
    answer: list[PullRequest] = []
    context: list[PullRequest] = []
    links: list[Link] = []
    for hit in result.hits:
        if hit.link is None:
            (context if named_only else answer).append(hit.pr)
        elif hit in others:
            (context if only_named else answer).append(hit.pr)
            links.append(_stating_first(hit.link))
        else:
            context.append(hit.pr)
    return Choice(answer, context[:CONTEXT], result.question, len(answer), False, None, links)


def _relanded_originals(db: Database, repo: str, others: list[Hit]) -> list[Hit]:
    """"what does #N reland?": of the PRs it follows up on, those a revert among them took out; the revert, and what
    else it follows or fixes, are context."""
    reverted = {link.other for hit in others for link in related(db, repo, hit.pr.number) if link.kind == "reverts" and link.outgoing}
    return [hit for hit in others if hit.pr.number in reverted] or others


def _named_does_it(question: Query) -> bool:
    """Whether the PR named states the relation ("#N fixed what?", "did #N revert anything?"), not has it stated of it
    ("what reverted #N?", "was #N reverted?", "what did #N break?"): named before the verb, in the active voice.

    Of a regression fix, the fixing PR states it: "what did #N fix?" asks what #N fixed, while "what did #N
    break?" asks what fixed a problem #N caused."""
    before = question.cues.named_before.get(question.relation) if question.relation else None
    return bool(before and set(question.numbers) & before) and not question.passive


def _stating_first(link: Link) -> Link:
    return link if link.outgoing else Link(link.other, link.number, link.kind, True)


def _relation(db: Database, repo: str, question: Query) -> Choice:
    """Every PR in the filters that states the relation, with the PR a revert names when it is stored.

    A reverted PR is part of the answer to "what got reverted?"; the PR a
    regression fix names answers only "what broke it?" (else it is context).
    A count counts the stating PRs.
    """
    kind = question.relation
    assert kind is not None, "_choose asks for a relation's PRs only when the question names one"
    start, end = (question.time.start, question.time.end) if question.time else (None, None)
    answer: dict[int, PullRequest] = {}
    context: dict[int, PullRequest] = {}
    sources: list[int] = []
    links: list[Link] = []
    for number, named in stated(db, repo, kind, start, end):
        source = answer.get(number) or get_pr(db, repo, number)
        if source is None or not _kept(source, question) or source.number in sources:
            continue
        answer[source.number] = source
        sources.append(source.number)
        target = get_pr(db, repo, named) if named is not None else None
        if target is not None:
            cited = question.asks_reverted or (question.culprit and question.intent is not Intent.COUNT)
            (answer if cited else context).setdefault(target.number, target)
            links.append(Link(source.number, target.number, kind, True))
        if len(answer) >= MAX_LISTED:
            break
    return Choice(list(answer.values()), list(context.values()), question, len(sources), True, None, links,
                  stating=frozenset(sources))


def _through_relation(db: Database, repo: str, choice: Choice) -> Choice:
    """Words chose the PRs a relation question is about ("the scheduler change"); the answer is what relates them.

    Each chosen PR on either side of the relation comes with the PR on the
    other side; a chosen PR outside the relation is dropped, unless none is in it.
    """
    question = choice.question
    sides = _sides(db, repo, choice)
    if not sides.answer:
        if question.intent is Intent.YESNO and choice.answer and not question.doubts_revert:
            # "was the FA3 path ever relanded?" and nothing relands what the words chose: no, about those PRs.
            # ("is there a flag now?" doubts only in passing: its yes names the PRs, as any yes does.)
            named = tuple(pr.number for pr in choice.answer[:NAMED_IN_A_NO])
            return replace(choice, answer=choice.answer[:NAMED_IN_A_NO], question=replace(question, numbers=named))
        return choice
    relands = _relanded(db, repo, sides.links, sides.answer) if question.doubts_revert else []
    if relands:
        # "is the image cache back on?": reverted, then relanded; the reland answers, the revert is context.
        undone = [sides.answer[link.number] for link in sides.links if link.number in sides.answer]
        return replace(choice, answer=[pr for pr, _ in relands], context=undone[:CONTEXT], total=len(relands),
                       links=[link for _, link in relands])
    answer, context = list(sides.answer.values()), choice.context
    if question.intent is Intent.COUNT or ((question.intent is Intent.WHO or question.asks_other) and not question.culprit):
        # "What reverted the async change?": the PRs stating the relation answer; what they name is context.
        context = [pr for pr in answer if pr.number not in sides.sources][:CONTEXT]
        answer = [pr for pr in answer if pr.number in sides.sources]
    return replace(choice, answer=answer, context=context, total=len(sides.sources), links=sides.links,
                   stating=frozenset(sides.sources))


@dataclass
class _Sides:
    """The PRs on both sides of the relations the chosen PRs take part in, and the relations, stating side first."""

    answer: dict[int, PullRequest] = field(default_factory=dict)
    sources: set[int] = field(default_factory=set)  # the PRs that state one
    links: list[Link] = field(default_factory=list)

    def add(self, pr: PullRequest, other: PullRequest, link: Link) -> None:
        stating = _stating_first(link)
        self.answer.update((p.number, p) for p in ((pr, other) if link.outgoing else (other, pr)))
        self.sources.add(stating.number)
        if stating not in self.links:  # both sides chosen: the link is found from each
            self.links.append(stating)


def _sides(db: Database, repo: str, choice: Choice) -> _Sides:
    kind = choice.question.relation
    assert kind is not None, "_choose goes through a relation only when the question names one"
    sides = _Sides()
    for pr in _reverted_instead(db, repo, choice.answer) if kind is Relation.FOLLOWS else choice.answer:
        found = [link for link in related(db, repo, pr.number) if link.kind in kind.answering()]
        if not found and not (kind is Relation.REVERTS and revert_title(pr.title)):
            continue
        if not found:
            sides.sources.add(pr.number)
        for link in found:
            other = get_pr(db, repo, link.other)
            if other is not None:
                sides.add(pr, other, link)
            elif link.outgoing:  # it states the relation though the PR it names is not stored: it still counts
                sides.sources.add(pr.number)
        sides.answer.setdefault(pr.number, pr)
    return sides


def _reverted_instead(db: Database, repo: str, prs: list[PullRequest]) -> list[PullRequest]:
    """"X got reverted in april - did it come back?": the words chose the revert; what came back is what it reverted."""
    chosen: dict[int, PullRequest] = {}
    for pr in prs:
        reverted = [link.other for link in related(db, repo, pr.number) if link.kind == "reverts" and link.outgoing]
        for other in [get_pr(db, repo, number) for number in reverted] or [pr]:
            if other is not None:
                chosen.setdefault(other.number, other)
    return list(chosen.values())


def _relanded(
    db: Database, repo: str, reverts: list[Link], known: dict[int, PullRequest]
) -> list[tuple[PullRequest, Link]]:
    """The PRs that brought back what the reverts (among the PRs `known`) undid, merged after the revert:
    "[#L] follows up on [#X]", or on the revert itself ("relands the fix that was reverted in #R"), also when the
    store lacks what it reverted."""
    undone = [(revert.number, revert.other) for revert in reverts]
    linked = {revert.number for revert in reverts}
    undone += [(pr.number, pr.number) for pr in known.values() if revert_title(pr.title) and pr.number not in linked]
    found: dict[int, tuple[PullRequest, Link]] = {}
    for revert, reverted in undone:
        reverted_at = known[revert].merged_at
        for link in [*related(db, repo, reverted), *(related(db, repo, revert) if revert != reverted else [])]:
            if link.kind != "follows" or link.outgoing or link.other in found:
                continue
            reland = get_pr(db, repo, link.other)
            if reland and reland.merged_at > reverted_at:
                found[reland.number] = (reland, _stating_first(link))
    return list(found.values())


def _kept(pr: PullRequest, question: Query) -> bool:
    """Whether `pr` is inside the question's people, areas and type (its time is already applied)."""
    if question.people and not any(_by(pr, person) for person in question.people):
        return False
    if question.pr_type and pr.type != question.pr_type:
        return False
    if (question.within and pr.number not in question.within) or pr.number in question.besides:
        return False
    if question.paths and not _touches(pr, question.paths):
        return False
    if _touches(pr, question.excluded_paths):
        return False
    if excluded(pr, question):
        return False
    return question.in_areas(pr.areas)


def _touches(pr: PullRequest, paths: Sequence[str]) -> bool:
    """Whether a changed file's path holds one of `paths` (search.path_condition, in Python)."""
    return any(path in file.lower() for path in paths for file in pr.files)


def _by(pr: PullRequest, person: Person) -> bool:
    login = person.login.lower()

    def is_them(who: str) -> bool:
        return is_bot(who) if login == BOTS else who.lower() == login

    authored = is_them(pr.author) and person.role in (Role.ANY, Role.AUTHOR)
    merged = is_them(pr.merged_by or "") and person.role in (Role.ANY, Role.MERGER)
    return authored or merged


# ---------------------------------------------------------------- tallies

# The runners-up a tally names after the leader.
RUNNERS_UP = 3


def _tallied(db: Database, repo: str, question: Query) -> Choice:
    """Who (or which area) has the most of the PRs asked about; the answer is the leader's PRs."""
    prs = _by_words(db, repo, question).answer if question.concepts else _every_kept(db, repo, question)
    counts: Counter[str] = Counter()
    members: dict[str, list[PullRequest]] = {}
    for pr in prs:
        for key in tally_keys(pr, question.tally, question.excluded) if question.tally else ():
            counts[key] += 1
            members.setdefault(key, []).append(pr)
    ranked = counts.most_common()
    if not ranked:
        return Choice([], [], question, 0, False)
    leaders = [key for key, count in ranked if count == ranked[0][1]]
    answer = list({pr.number: pr for key in leaders for pr in members[key]}.values())
    return Choice(answer, [], question, len(answer), False, tally=ranked[: len(leaders) + RUNNERS_UP])


# ---------------------------------------------------------------- whole sets


def _every_kept(db: Database, repo: str, question: Query) -> list[PullRequest]:
    """Every PR the question holds (up to COUNT_CAP), kept to its areas, type, paths and exclusions."""
    if question.areas and not question.has_filters_besides_areas:
        return [pr for pr in _members(db, repo, question, COUNT_CAP)[0] if _kept(pr, question)]
    listed = replace(question, areas=())
    found = search(db, repo, listed, limit=COUNT_CAP)
    return [] if _relaxed(listed, found) else [hit.pr for hit in found.hits if _kept(hit.pr, question)]


def _whole_set(db: Database, repo: str, question: Query, listed: int) -> Choice:
    """Filters alone: every PR they hold (the newest `listed`), newest first (an area counts its members, not its mentions)."""
    if question.leaves_out:
        prs = _every_kept(db, repo, question)
        return Choice(prs[:listed], [], question, len(prs), True)
    if question.areas:
        prs, total = _members(db, repo, question, listed)
        narrower = _narrower_words(question)
        if narrower is not None and prs:
            # "the scheduler" named the core area: its members that say so answer, not all of core.
            ids = _row_ids(db, repo, [pr.number for pr in prs])
            # Graded like words: those that say it about as strongly as the one that says it most.
            evidence = gather(db, list(ids.values()), [narrower])
            said = {pr.number: evidence[ids[pr.number]][0] for pr in prs}
            best = max(said.values())
            prs = [pr for pr in prs if said[pr.number] >= NEAR_BEST * best] or prs
            total = len(prs)
        if prs:
            return Choice(prs, [], question, total, True)
    # Search lists and counts the type asked in SQL, like the time and people.
    result = search(db, repo, question, limit=listed)
    if question.areas or _relaxed(question, result):
        return _nothing(question, result)
    prs = [hit.pr for hit in result.hits]
    total = result.total if result.total is not None else len(prs)
    return Choice(prs, [], result.question, total, True)


def _narrower_words(question: Query) -> Concept | None:
    """The words that named an area, when they mean something narrower than the area ("scheduler" for core)."""
    names = {area_name(area) for area in question.areas}
    if not question.area_same or names & set(question.area_same):
        return None
    said = tuple(question.area_same)
    return Concept(said[0], Phrases(said, said))


def _members(db: Database, repo: str, question: Query, most: int = MAX_LISTED) -> tuple[list[PullRequest], int]:
    """The PRs classified in the question's areas within its time, people and type, newest first, and their count.

    The index's areas column finds the members and, row ids sorting by merge
    time, lists them newest first without sorting: the cost stays flat as the store grows.
    """
    where = ["prs_fts match ?", "prs.repo = ?"]
    args: list[object] = [membership_expression(question), repo]
    if question.time and question.time.start is not None:
        where.append("prs_fts.rowid >= ?")
        args.append(first_id(question.time.start))
    if question.time and question.time.end is not None:
        where.append("prs_fts.rowid < ?")
        args.append(first_id(question.time.end))
    narrowing, narrowing_args = narrowing_condition(question)
    if narrowing:
        where.append(narrowing)
        args.extend(narrowing_args)
    found = f"from prs_fts cross join prs on prs.id = prs_fts.rowid where {' and '.join(where)}"
    rows = db.execute(f"select prs.* {found} order by prs_fts.rowid desc limit ?", [*args, most])
    names = [column[0] for column in rows.description]
    prs = [pr for pr in (pr_from_row(dict(zip(names, row))) for row in rows.fetchall()) if question.in_areas(pr.areas)]
    if len(prs) < most:
        return prs, len(prs)
    total = db.execute(f"select count(*) from (select 1 {found} limit ?)", [*args, COUNT_CAP]).fetchone()[0]
    return prs, total


# ---------------------------------------------------------------- words


def _by_words(db: Database, repo: str, question: Query) -> Choice:
    """The graded PRs that say enough of what was asked: as much as the best one does, nearly, and no less than the floor."""
    result = search(db, repo, question, limit=POOL)
    if _relaxed(question, result) or (not question.order and _said_apart(question, result.hits)):
        return _nothing(question, result)
    # Search keeps to the type and the people and files left out; areas and words left out are told apart here.
    hits = [hit for hit in result.hits if not excluded(hit.pr, question)]
    best = max((hit.coverage or 0.0 for hit in hits), default=0.0)
    metrics = _metric_phrases(question)
    # "the largest TTFT cut": every PR that says enough of it competes on the TTFT gain it states, if it states one.
    measured = question.order is Order.GAIN and bool(metrics)
    near = YES_NEAR_BEST if question.intent is Intent.YESNO and not question.relation else NEAR_BEST
    floor = MIN_COVERAGE if measured else max(MIN_COVERAGE, near * best)
    coded = [i for i, concept in enumerate(result.question.concepts) if concept.code] if question.cues.upgrading else []
    # "we pass --x and set Y_Z=1: safe to upgrade?": a PR about one of the names from code asked answers, however
    # little of the rest of the setup it says.
    answer = [hit.pr for hit in hits if (hit.coverage or 0.0) >= floor or any(hit.said[i] >= CODE_SAID for i in coded)]
    if measured and question.areas:
        # "the biggest decode speedup on AMD GPUs": the gains of PRs in the areas named compete, not of any that decodes.
        answer = [pr for pr in answer if question.in_areas(pr.areas)] or answer
    if question.improves and metrics and not question.order:
        # "which PRs made TTFT better?": those that state a TTFT gain, wherever they say it.
        answer = [hit.pr for hit in hits if (hit.coverage or 0.0) >= MIN_COVERAGE and _gain(hit.pr, metrics)] or answer
    if question.versions:
        # "still on xgrammar 0.1.32?": the PRs that move it answer, not every PR that says its name.
        answer = [pr for pr in answer if moved(pr.title)] or answer
    if question.one and not question.relation and not question.order and (len(answer) > 1 or question.removes):
        answer = [_the_one(db, repo, hits, question)]
    chosen = {pr.number for pr in answer}
    context = [hit.pr for hit in hits if hit.pr.number not in chosen][:CONTEXT]
    return Choice(answer, context, result.question, len(answer), False, candidates=[hit.pr for hit in hits])


def _the_one(db: Database, repo: str, hits: list[Hit], question: Query) -> PullRequest:
    """"which PR added X?": the one that says it best, and of those saying it as well, the first (what came later
    fixed or followed it). "which PR dropped X?": the last revert that says it, if one does. "how do I …?": the
    one a reland brought up to date; a revert tells how things were, not how to do them."""
    telling = [hit for hit in hits if not (question.intent is Intent.HOWTO and revert_title(hit.pr.title))] or hits
    most = max(hit.coverage or 0.0 for hit in telling)
    one = min((hit for hit in telling if hit.coverage == most), key=lambda hit: hit.pr.merged_at).pr
    if question.intent is Intent.HOWTO:
        return _as_it_is_now(db, repo, one, [hit.pr for hit in telling if (hit.coverage or 0.0) >= YES_NEAR_BEST * most])
    if question.removes:
        reverts = [hit.pr for hit in hits if (hit.coverage or 0.0) >= MIN_COVERAGE and revert_title(hit.pr.title)]
        return max(reverts, key=lambda pr: pr.merged_at, default=one)
    return one


def _said_apart(question: Query, hits: list[Hit]) -> bool:
    """Whether the one area and the one topic asked of it ("any mamba work on TPU?") are each said, but never together.

    The topic being what some PR is about (said in its title or first sentence) shows it is no chatter that
    paraphrases the area's work ("cleanups"): that PR is about it elsewhere, and nothing in the area is.
    """
    if len(question.areas) != 1 or not hits or len(hits[0].said) != 2:
        return False
    return not any(all(hit.said) for hit in hits) and any(hit.said[0] >= FIELD_WEIGHT["lead"] for hit in hits)


def _as_it_is_now(db: Database, repo: str, pr: PullRequest, near: list[PullRequest]) -> PullRequest:
    """Of the PRs saying it about as well as `pr` does, the newest that follows up on another of them (a reland
    tells how it works now); `pr` when none does."""
    numbers = {other.number for other in near}
    following = [
        other for other in near
        if any(link.kind == "follows" and link.outgoing and link.other in numbers for link in related(db, repo, other.number))
    ]
    return max(following, key=lambda other: other.merged_at, default=pr)


def _row_ids(db: Database, repo: str, numbers: list[int]) -> dict[int, int]:
    """PR number to row id (the key the search index uses)."""
    placeholders = ", ".join("?" for _ in numbers)
    rows = db.execute(f"select number, id from prs where repo = ? and number in ({placeholders})", [repo, *numbers])
    return dict(rows.fetchall())


def _relaxed(question: Query, result: SearchResult) -> bool:
    found = result.question
    return (found.time, found.people, found.areas, found.paths) != (question.time, question.people, question.areas, question.paths)


def _nothing(question: Query, result: SearchResult) -> Choice:
    """No PR answers the question as asked; the nearest matches search found are context, shown as such."""
    return Choice([], [hit.pr for hit in result.hits[:CONTEXT]], question, 0, False)
