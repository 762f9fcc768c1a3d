"""Answering a question about merged PRs: the answer first, then only the PRs that answer it.

Retrieval chooses the PRs (store.retrieval.choose); this module says what they
mean in the shape the question asked for ("Yes: …", "ywang96 …", "27 PRs …"),
from the store alone or with a model that may cite only the PRs it was given.
For a question of words the model chooses again, out of the PRs retrieval graded.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from bot.answers.answered import Answer, pr_lines
from bot.answers.empty_store import empty_store_notice
from bot.answers.reasons import revert_reason
from bot.answers.release_questions import release_answer
from bot.config import DEFAULT_TIMEZONE, Settings
from bot.messages.blocks import more_note
from store.model import PullRequest
from store.retrieval.choose import Choice, choose
from store.retrieval.finding.listing import COUNT_CAP
from store.retrieval.reading.form import FIX_WORDS
from store.retrieval.reading.query import Doubt, Intent, Order, Query, Relation, Tally
from store.retrieval.reading.when import EVER
from store.retrieval.thread import Answered, Reading, Turn, read_in_thread
from store.tables.model_calls import ModelCall, record_calls
from store.tables.prs import latest_merge
from store.tables.structured_output import json_schema_support, remember_json_schema
from store.text.patterns import LazyPattern
from store.text.prose import atoms, join_words, plural, sentence, sentences
from store.understanding.relations import Link
from store.understanding.summary.titles import PREFIX, title_sentence, title_tags

if TYPE_CHECKING:
    from bot.answers.model_prompt import ModelChoice
    from bot.model.client import LLM, Completion

# An answer lists at most this many PRs unless asked for more (`ask --limit N`); a longer set says how many more.
SHOWN = 10
# A question about a few named PRs gets their whole "What changed", not a sentence.
DETAILED_UP_TO = 3
# With a model: how long it may answer (its prompts are in bot.answers.model_prompt).
MODEL_ANSWER_TOKENS = 500

EXAMPLES = (
    "what changed in the scheduler this week?",
    "why was #12345 reverted?",
    "what did <login> merge yesterday?",
    "anything about ROCm since Monday?",
    "spec decode fixes between Feb 9 and Feb 13",
)

# Every way a reply can name a PR: [#N], #N, PR N, "pull request #N", or a link to one.
_REFERENCE = LazyPattern(
    r"\[#(?P<bracketed>\d{1,9})\]"
    r"|(?<![\w&/#])#(?P<hash>\d{1,9})\b"
    r"|\b(?:PRs?|pull\s{1,3}requests?)\s{0,3}#?(?P<word>\d{1,9})\b"
    r"|https?://github\.com/[\w.-]{1,39}/[\w.-]{1,100}/pull/(?P<link>\d{1,9})\b",
    re.IGNORECASE,
)

def answer_question(
    db: Database,
    settings: Settings,
    question: str,
    thread: Sequence[Turn] = (),
    now: datetime | None = None,
    llm: LLM | None = None,
    repo: str | None = None,
    limit: int = SHOWN,
) -> Answer:
    """Answer `question`, asked after the turns of its `thread` (oldest first), listing at most `limit` PRs.

    Raises bot.model.client.LLMError when the model fails, so the caller can say so and ask again without it.
    """
    repo = repo or settings.default_repo
    notice = empty_store_notice(db, repo)
    if notice:
        return Answer(notice, [], [])
    reading = read_in_thread(db, question, thread, repo, settings.timezone, now)
    model = _Asking(db, settings, llm, question, [turn.text for turn in thread], repo) if llm else None
    return answer_reading(db, settings, repo, reading, model, limit)


def answer_reading(
    db: Database, settings: Settings, repo: str, reading: Reading, model: _Asking | None = None, limit: int = SHOWN
) -> Answer:
    """The answer to a question read in its thread, with what the thread keeps of it; `model` writes it with a model."""
    answer, links = _answer(db, settings, repo, reading.asked, model, limit)
    answered = Answered(reading.kept, tuple(answer.citations), tuple(links))
    return replace(answer, answered=answered, follows=reading.follows)


def _answer(
    db: Database, settings: Settings, repo: str, asked: Query, model: _Asking | None, limit: int
) -> tuple[Answer, list[Link]]:
    """The answer, and the relations its first line states."""
    if asked.release_ask is not None:
        answered = release_answer(db, settings, repo, asked)
        if answered is not None:
            return answered, []
    if not (asked.has_filters or asked.has_topic):
        if asked.is_empty and not (asked.tally or asked.intent is Intent.COUNT or asked.order):
            return Answer(help_text(repo, asked.problems), [], []), []
        # "who authored the most PRs?", "how many PRs are there?", "the largest PR?", "PRs not by the bot": about
        # every PR kept.
        asked = replace(asked, time=EVER)
    choice = choose(db, repo, asked, limit)
    if not choice.answer:
        choice = _with_the_zone(_with_where_the_store_ends(db, repo, choice, settings.timezone), settings.timezone)
    if not choice.answer and not choice.context:
        return Answer(lead_line(choice, asked), [], []), choice.links
    # Without a cut answer the model may still choose from the candidates: often the right PR is the nearest.
    if model is None or not (choice.answer or choice.candidates):
        return extractive_answer(choice, asked, settings, limit), choice.links
    return _model_answer(model, choice, asked), choice.links


def _with_the_zone(choice: Choice, tz: ZoneInfo) -> Choice:
    """Nothing answers a time asked under a zone other than the default: say whose days those are, since a day
    of the reports (written in Pacific time) is another stretch of hours there."""
    if choice.question.time is None or choice.question.time.start is None or tz.key == DEFAULT_TIMEZONE:
        return choice
    days = f"days run midnight to midnight {tz.key} time, as PRDIGEST_TIMEZONE sets"
    return replace(choice, question=replace(choice.question, problems=(*choice.question.problems, days)))


def _with_where_the_store_ends(db: Database, repo: str, choice: Choice, tz: ZoneInfo) -> Choice:
    """Nothing answers a time after the store's newest PR: say where the store ends, so an old store is not news."""
    time = choice.question.time
    newest = latest_merge(db, repo)
    if time is None or time.start is None or newest is None or newest >= time.start:
        return choice
    ends = f"the newest PR in the store merged on {newest.astimezone(tz):%a %b %-d, %Y}; `prdigest ingest` catches up"
    return replace(choice, question=replace(choice.question, problems=(*choice.question.problems, ends)))


def help_text(repo: str, problems: Sequence[str] = ()) -> str:
    lines = [sentence(problem) for problem in problems]
    lines.append(f"Ask me about what merged in {repo}, for example:")
    lines.extend(f"\u2022 {example}" for example in EXAMPLES)
    return "\n".join(lines)


# ---------------------------------------------------------------- the first line


def lead_line(choice: Choice, asked: Query) -> str:
    """The answer to what was asked, in its shape, before any PR is listed; what could not be read trails it."""
    problems = " ".join(f"({sentence(problem)})" for problem in choice.question.problems)
    lead = _lead(choice, asked)
    if not problems:
        return lead
    # The answer comes first, then the notes, then what introduces the PRs below.
    answer, nearest, _ = lead.partition(NEAREST)
    if nearest:
        return f"{answer} {problems}{nearest}"
    return f"{lead[:-1]} {problems}:" if lead.endswith(":") else f"{lead} {problems}"


# What introduces the PRs shown when none answers.
NEAREST = " The nearest, which may not answer it:"
# A yes names this many PRs by title; more are counted.
NAMED_IN_A_YES = 2


def _lead(choice: Choice, asked: Query) -> str:
    note = f"{choice.note} " if choice.note else ""
    if not choice.answer:
        if choice.note and not (choice.question.has_filters or choice.question.concepts):
            return choice.note  # asked only about PRs the store does not have
        return note + _nothing_line(choice, asked)
    return note + _answered_line(choice, asked)


def _answered_line(choice: Choice, asked: Query) -> str:
    """The first line when PRs answer, in the shape asked."""
    if asked.intent is Intent.YESNO and asked.relation and choice.question.numbers and not choice.links:
        return _unrelated_line(choice, asked.relation, asked.doubts_revert)
    if choice.tally:
        return _tally_line(choice, asked)
    if asked.intent is Intent.COUNT:
        noun = _RELATION_NOUNS[asked.relation][choice.total != 1] if asked.relation else choice.question.noun(choice.total)
        links = _stated(choice, asked.relation) if asked.relation else _links(choice)
        return f"{_count(choice.total)} {noun} {choice.question.describe()}" + (f": {links}." if links else ".")
    if asked.intent is Intent.WHO:
        return _people(choice, asked) + "."
    if asked.intent is Intent.HOWTO:
        return _how_line(choice)
    if asked.intent is Intent.YESNO:
        return _yes_line(choice, asked)
    return _list_line(choice, asked)


def _links(choice: Choice) -> str:
    """The relations between the PRs shown, as the first line states them: "[#507] reverts [#501]"."""
    return "; ".join(link.sentence() for link in choice.links)


def _stated(choice: Choice, relation: Relation, reasons: bool = False) -> str:
    """Each relation the PRs state, "[#507] reverts [#501]", a PR whose other side the store lacks named on its own;
    with `reasons` ("why was #N reverted?", "why was the X upgrade reverted?"), each revert with the reason it gives."""
    by_number = {pr.number: pr for pr in [*choice.answer, *choice.context]}
    linked = {link.number for link in choice.links}
    alone = [pr for pr in choice.answer if pr.number in choice.stating and pr.number not in linked]
    stated = [(link.sentence(), by_number.get(link.number)) for link in choice.links]
    stated += [(f"[#{pr.number}] {_RELATION_PHRASE[relation]} a PR not in the store", pr) for pr in alone]
    reasons = reasons and relation is Relation.REVERTS
    return "; ".join(f"{said}{(revert_reason(pr) if reasons and pr else None) or ''}" for said, pr in stated)


def _unrelated_line(choice: Choice, relation: Relation, doubts_revert: bool) -> str:
    """A yes/no about a relation of PRs named by number, when nothing in the store states it."""
    named = join_words([f"[#{n}]" for n in choice.question.numbers])
    if doubts_revert:
        return f"Yes: nothing in the store reverts {named}."
    return f"No PR {_RELATION_PHRASE[relation]} {named} in the store."


def _yes_line(choice: Choice, asked: Query) -> str:
    links = _links(choice)
    doubted = _doubted(choice, asked, links)
    if doubted:
        return doubted
    if links:
        return f"Yes: {links}."
    if len(choice.answer) <= NAMED_IN_A_YES:
        return "Yes: " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in choice.answer) + "."
    if choice.question.concepts:
        return f"Yes: {_closest_first(choice)}."
    return f"Yes: {_count(choice.total)} {choice.question.noun(choice.total)} {choice.question.describe()}."


def _list_line(choice: Choice, asked: Query) -> str:
    """What introduces the PRs listed: the relations they state, the PRs named, the one asked for, or how many."""
    question, described, links = choice.question, choice.question.describe(), _links(choice)
    if asked.relation and choice.whole_set:
        noun = _RELATION_NOUNS[asked.relation][choice.total != 1]
        return f"{_count(choice.total)} {noun} {described}: {_stated(choice, asked.relation)}."
    stated = _stated(choice, asked.relation, asked.cues.explains) if asked.relation else links
    if stated:
        return sentence(stated)
    if question.numbers:
        return f"About {join_words([f'[#{n}]' for n in question.numbers])}:"
    order = question.order
    if order and (len(choice.answer) == 1 or order in (Order.LARGEST, Order.GAIN)):  # the largest may be several, as large
        return f"{_ORDER_LEAD[order].format(noun=question.noun(len(choice.answer)))} {described}:"
    if question.concepts and not choice.whole_set:
        # What the PRs say, not the asker's words back: "[#4311] prepacks int8 weights for the oneDNN matmul:".
        return (_in_its_terms(choice.answer[0]) if choice.total == 1 else _closest_first(choice)) + ":"
    shown = len(choice.answer)
    tail = f"; the {shown} newest:" if choice.whole_set and choice.total > shown else ":"
    return f"{_count(choice.total)} {question.noun(choice.total)} {described}{tail}"


def _closest_first(choice: Choice) -> str:
    """'6 PRs merged in moe, closest first: [#4307] tunes the fused MoE kernel for Blackwell'."""
    question = choice.question
    scope = replace(question, concepts=()).describe()
    return f"{_count(choice.total)} {question.noun(choice.total)} {scope}, closest first: {_in_its_terms(choice.answer[0])}"


def _in_its_terms(pr: PullRequest) -> str:
    """A PR as its title says what it does: '[#4311] prepacks int8 weights for the oneDNN matmul', else its title."""
    said = title_sentence(pr.title)
    if said.startswith(_THIS_PR):
        return f"[#{pr.number}] {said.removeprefix(_THIS_PR).rstrip('.')}"
    return f"[#{pr.number}] \u201c{PREFIX.sub('', pr.title).strip() or pr.title}\u201d"


_THIS_PR = "This PR "


_ORDER_LEAD = {
    Order.FIRST: "The first {noun}", Order.LAST: "The last {noun}", Order.LARGEST: "The largest {noun} (most files changed)",
    Order.GAIN: "The {noun} stating the largest gain",
}


def _doubted(choice: Choice, asked: Query, links: str) -> str | None:
    """The no that answers a doubt: "still crashing?" when a fix merged, "did it stick?" or "is it on now?" when a revert did."""
    # A revert says no to "is it on now?", and a later reland yes; "is it still reverted?" the other way round.
    reverted = any(link.kind == "reverts" for link in choice.links)
    if asked.doubts_revert and links and reverted != (asked.doubt is Doubt.UNDONE):
        return f"No: {links}."
    fixes = [pr for pr in choice.answer if _fixes(pr)] if asked.doubt is Doubt.PERSISTS else []
    if fixes:
        return "No: fixed by " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in fixes[:NAMED_IN_A_YES]) + "."
    return None


def _fixes(pr: PullRequest) -> bool:
    return "bugfix" in title_tags(pr.title) or FIX_WORDS.search(pr.title) is not None


_RELATION_NOUNS = {
    Relation.REVERTS: ("revert", "reverts"), Relation.FIXES: ("regression fix", "regression fixes"),
    Relation.FOLLOWS: ("follow-up", "follow-ups"),
}
_RELATION_PHRASE = {Relation.REVERTS: "reverts", Relation.FIXES: "fixes a regression from", Relation.FOLLOWS: "follows up on"}


# A first line names what was looked for in the asker's words when they are this few; more are "that".
TOPIC_WORDS = 4


# Text that tells how: a flag, an environment variable, code, or a setting with its value.
_HOW = LazyPattern(r"`[^`]+`|--[a-z][\w-]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+=\S+")


def _how_line(choice: Choice) -> str:
    """The sentence of the best PR's summary that tells how, with the PR it comes from."""
    pr = choice.answer[0]
    summary = pr.summary
    texts = [summary.what_changed, summary.impact, summary.insights] if summary else []
    asked = {atom for concept in choice.question.concepts for atom in atoms(concept.said)}
    found = [part for text in texts for part in sentences(text)]
    if not found:
        return f"[#{pr.number}] {pr.title}:"
    best = max(found, key=lambda part: (bool(_HOW.search(part)), len(asked & set(atoms(part)))))
    return f"{best} [#{pr.number}]"


def _nothing_line(choice: Choice, asked: Query) -> str:
    """Nothing answers: what was looked for and through, and never that nothing merged when only the words missed."""
    question = choice.question
    nearest = NEAREST if choice.context else ""
    if choice.unsaid:
        return _unsaid_line(question, asked) + nearest
    if not (question.concepts or question.unknown):
        noun = _RELATION_NOUNS[asked.relation][0] if asked.relation else question.noun(1)
        return f"No {noun} {question.describe()}.{nearest}"
    # Areas named beside words only graded the PRs; the scope is the time, people and paths asked.
    scope = replace(question, concepts=(), unknown=(), areas=()).describe() if question.has_filters else ""
    said = [concept.said for concept in question.concepts + question.unknown]
    topic = f'"{" ".join(said)}"' if len(said) <= TOPIC_WORDS else "that"
    if question.areas and topic != "that":
        topic += " in " + " and ".join(question.areas)  # "mamba" said elsewhere, but not in tpu
    looked = f"none of the PRs {scope} answers {topic}" if scope not in ("", "merged") else f"no PR in the store answers {topic}"
    return (f"No: {looked}." if asked.intent is Intent.YESNO else sentence(looked)) + nearest


def _unsaid_line(question: Query, asked: Query) -> str:
    """What the question is about is said by no PR: 'No PR in the store mentions "mi250".'"""
    said = join_words([f'"{concept.said}"' for concept in question.unknown or question.concepts], "or")
    line = f"no PR in the store mentions {said}"
    return f"No: {line}." if asked.intent is Intent.YESNO else sentence(line)


def _tally_line(choice: Choice, asked: Query) -> str:
    """'DarkLight1337 merged the most PRs on Mon Feb 9 (6), then vllm-bot (5) and mgoin (3).'"""
    count = choice.tally[0][1]
    leaders = [key for key, n in choice.tally if n == count]
    others = join_words([f"{key} ({n})" for key, n in choice.tally[len(leaders) :]])
    scope = choice.question.describe().removeprefix("merged").strip()
    scope = f" {scope}" if scope else ""
    if asked.tally is Tally.AREA:
        said = f"{join_words(leaders)} {'was the busiest area' if len(leaders) == 1 else 'were the busiest areas'}"
        return f"{said}{scope} ({plural(count, 'PR')})" + (f", then {others}." if others else ".")
    verb = "merged" if asked.tally is Tally.MERGER else "authored"
    tied = " (tied)" if len(leaders) > 1 else ""
    return f"{join_words(leaders)} {verb} the most {choice.question.noun(many=True)}{scope}{tied} ({count})" + (
        f", then {others}." if others else "."
    )


def _count(total: int) -> str:
    return f"{total}+" if total >= COUNT_CAP else str(total)


def _people(choice: Choice, asked: Query) -> str:
    """'ywang96 ([#34183]) and mgoin ([#34530], [#33936])': who did it, with their PRs."""
    mergers = choice.question.cues.names_mergers
    # Who reverted or fixed: choose kept the stating side. Who broke it: the fix is cited beside the culprit,
    # but only the culprit's people are named.
    culprits = {link.other for link in choice.links} if asked.culprit else set()
    people: dict[str, list[int]] = {}
    for pr in [pr for pr in choice.answer if pr.number in culprits] or choice.answer:
        person = (pr.merged_by or pr.author) if mergers else pr.author
        people.setdefault(person, []).append(pr.number)
    return join_words([f"{person} ({', '.join(f'[#{n}]' for n in numbers)})" for person, numbers in people.items()])


# ---------------------------------------------------------------- without a model


def extractive_answer(choice: Choice, asked: Query, settings: Settings, limit: int = SHOWN) -> Answer:
    """The first line, then each answering PR once (at most `limit`), with date, author and what changed.

    Every PR that answers is cited, listed or not: the first line counts them and the last says how to list them all."""
    citations = [pr.number for pr in choice.answer]
    cut = replace(choice, answer=choice.answer[:limit])
    lines = [lead_line(cut, asked)]
    shown = cut.answer or choice.context
    detailed = len(shown) <= DETAILED_UP_TO and bool(choice.question.numbers)
    for pr in shown:
        lines.extend(pr_lines(pr, settings, detailed, risks=asked.about_risks))
    if choice.total > len(cut.answer) and cut.answer:
        lines.append(_more_line(choice.total - len(cut.answer), choice.total))
    return Answer("\n".join(lines), citations, [*choice.answer, *choice.context], [pr.number for pr in shown])


def _more_line(left_out: int, total: int) -> str:
    """The line under an answer that lists only some of its PRs: how many more, and how to list them all."""
    if total >= COUNT_CAP:
        return more_note(left_out)
    return f"\u2026and {left_out} more; `ask --limit {total}` lists them all."


# ---------------------------------------------------------------- with a model


def _model_chooses(choice: Choice, asked: Query) -> bool:
    """Whether the model picks the answer: for a question of words alone. Filters, named PRs, relations,
    tallies and the first or last merge have one right set, which the store already holds."""
    return bool(choice.candidates) and not (asked.relation or asked.tally or choice.question.order or choice.links)


@dataclass(frozen=True)
class _Asking:
    """One question put to the model: what its prompts need, and where its calls are recorded."""

    db: Database
    settings: Settings
    llm: LLM
    question: str
    history: Sequence[str]
    repo: str

    def text(self, system: str, prompt: str) -> str:
        """One model call for plain text, recorded in the ledger whatever its outcome."""
        completion = self._complete(system, prompt)
        self._record(completion.call())
        return completion.text

    def pick(self, system: str, prompt: str) -> ModelChoice | None:
        """The model's pick, through structured output unless the server is known to refuse it (then the same
        JSON, asked for in words); None when the reply holds no pick. What the server did with the schema is remembered."""
        from bot.answers.model_prompt import CHOICE_SCHEMA, read_choice
        from bot.model.client import SchemaRefused

        db, llm = self.db, self.llm
        known = json_schema_support(db, llm.endpoint, llm.model)
        try:
            completion = self._complete(system, prompt, CHOICE_SCHEMA if known is not False else None)
        except SchemaRefused as exc:
            remember_json_schema(db, llm.endpoint, llm.model, False, str(exc))
            completion = self._complete(system, prompt)
        else:
            if known is None:
                remember_json_schema(db, llm.endpoint, llm.model, True)
        picked = read_choice(completion.text)
        self._record(completion.call() if picked else completion.call("unparsed", "no JSON object with an answer"))
        return picked

    def _complete(self, system: str, prompt: str, json_schema: dict[str, Any] | None = None) -> Completion:
        """One model call; a failure is recorded here, a reply by the caller, who knows whether it could be read."""
        from bot.model.client import LLMError

        try:
            return self.llm.complete(system, prompt, MODEL_ANSWER_TOKENS, json_schema=json_schema)
        except LLMError as exc:
            self._record(exc.call())
            raise

    def _record(self, call: ModelCall) -> None:
        from bot.answers.model_prompt import ANSWER_PROMPT_VERSION

        record_calls(self.db, [call], model=self.llm.model, purpose="answer", prompt=ANSWER_PROMPT_VERSION, repo=self.repo)


def _model_answer(asking: _Asking, choice: Choice, asked: Query) -> Answer:
    if _model_chooses(choice, asked):
        return _model_choice_answer(asking, choice, asked)
    if not choice.answer:
        return extractive_answer(choice, asked, asking.settings)
    return _model_continued_answer(asking, choice, asked)


def _model_choice_answer(asking: _Asking, choice: Choice, asked: Query) -> Answer:
    """The model picks the answering PRs out of the graded candidates and explains them; the first line is
    written from its pick. Numbers it was not given are dropped; without a pick, the store's cut stands."""
    from bot.answers.model_prompt import CHOOSING_PROMPT, choosing_prompt

    system = CHOOSING_PROMPT.format(repo=asking.repo, example=choice.candidates[0].number)
    prompt, given = choosing_prompt(asking.question, asking.history, choice.candidates, asking.settings, system)
    picked = asking.pick(system, prompt) if given else None
    chosen, text = _within(picked, given) if picked else ([], "")
    if chosen:
        choice = replace(choice, answer=chosen, total=len(chosen))
    citations = [pr.number for pr in choice.answer]
    cites = any(f"[#{n}]" in text for n in citations)
    # Text that names none of the store's own pick may well say that nothing answers: it cannot follow that pick's first line.
    if not citations or not text or not (chosen or cites):
        return extractive_answer(choice, asked, asking.settings)
    named = [pr for pr in given if pr.number not in citations and f"[#{pr.number}]" in text]
    return Answer(f"{lead_line(choice, asked)}\n{_citing(text, citations)}", citations, [*choice.answer, *named])


def _within(picked: ModelChoice, given: list[PullRequest]) -> tuple[list[PullRequest], str]:
    """The picked PRs the model was given, in its order, and its text without the sentences naming any other."""
    by_number = {pr.number: pr for pr in given}
    text, unknown = cite_only(picked.text, list(by_number))
    return [by_number[n] for n in dict.fromkeys(picked.numbers) if n in by_number], _without_sentences_naming(text, unknown)


def _model_continued_answer(asking: _Asking, choice: Choice, asked: Query) -> Answer:
    """The first line as without a model, then the model's explanation, citing only PRs it was given."""
    from bot.answers.model_prompt import SYSTEM_PROMPT, answer_prompt, retry_prompt
    from bot.model.summarize import ensure_summary  # imported on use, like the model client

    settings = asking.settings
    answer = [ensure_summary(asking.db, settings, pr, asking.llm) if pr.summary is None else pr for pr in choice.answer]
    choice = replace(choice, answer=answer)
    given = [*answer, *choice.context]
    allowed = [pr.number for pr in given]
    lead = lead_line(choice, asked)
    system = SYSTEM_PROMPT.format(repo=asking.repo, example=allowed[0])
    prompt = answer_prompt(asking.question, asking.history, lead, answer, choice.context, settings, system)
    cleaned, unknown = cite_only(asking.text(system, prompt), allowed)
    if unknown:
        cleaned, unknown = cite_only(asking.text(system, retry_prompt(prompt, unknown, allowed)), allowed)
        cleaned = _without_sentences_naming(cleaned, unknown)
    if not cleaned:
        return extractive_answer(choice, asked, settings)
    cited = [n for n in allowed if f"[#{n}]" in cleaned]
    citations = [n for n in cited if n in {pr.number for pr in answer}] or [pr.number for pr in answer]
    return Answer(f"{lead}\n{_citing(cleaned, citations)}", citations, given)


def _citing(text: str, citations: list[int]) -> str:
    """The model's text, followed by the PRs that answer when it names none of them."""
    if any(f"[#{n}]" in text for n in citations):
        return text
    return f"{text}\nPRs: " + ", ".join(f"[#{n}]" for n in citations)


def cite_only(text: str, allowed: Sequence[int]) -> tuple[str, list[int]]:
    """The text with every reference to an allowed PR written [#N], and the numbers it names that are not allowed."""
    permitted = set(allowed)
    unknown: list[int] = []

    def mark(match: re.Match[str]) -> str:
        number = int(next(group for group in match.groups() if group))
        if number in permitted:
            return f"[#{number}]"
        if number not in unknown:
            unknown.append(number)
        return match.group(0)

    return _REFERENCE.sub(mark, text.strip()).strip(), unknown


def _without_sentences_naming(text: str, numbers: Sequence[int]) -> str:
    """Drop every sentence that names a PR outside the list: a sentence without its subject would mislead."""
    if not numbers:
        return text
    kept = []
    for line in text.split("\n"):
        standing = [part for part in sentences(line) if not _names_any(part, numbers)]
        if standing:
            kept.append(" ".join(standing))
    return "\n".join(kept).strip()


def _names_any(text: str, numbers: Sequence[int]) -> bool:
    return any(int(next(g for g in m.groups() if g)) in numbers for m in _REFERENCE.finditer(text))
