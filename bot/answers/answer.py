"""Answering a question about merged PRs: the answer first, then only the PRs that answer it.

Retrieval chooses the PRs (store.retrieval.choose); this module says what they
mean in the shape the question asked for ("Yes: …", "ywang96 …", "27 PRs …"),
from the store alone or with a model that may cite only the PRs it was given.
For a question of words the model chooses again, out of the PRs retrieval graded.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from bot.answers.empty_store import empty_store_notice
from bot.config import Settings
from bot.messages.blocks import more_note
from bot.messages.mrkdwn import first_sentence, truncate
from store.model import PullRequest
from store.retrieval.choose import Choice, choose, without_relation_words
from store.retrieval.form import FIX_WORDS, Form, read_form
from store.retrieval.question import Person, Question, continues
from store.retrieval.search import COUNT_CAP, read_question
from store.retrieval.when import EVER
from store.tables.model_calls import ModelCall, record_calls
from store.tables.prs import latest_merge
from store.tables.structured_output import json_schema_support, remember_json_schema
from store.text.patterns import LazyPattern
from store.text.prose import atoms, join_words, plural, sentence, sentences
from store.understanding.summary.titles import title_tags

if TYPE_CHECKING:
    from bot.answers.model_prompt import ModelChoice
    from bot.model.client import LLM, Completion

# A question about a few named PRs gets their whole "What changed", not a sentence.
DETAILED_UP_TO = 3
DETAIL_CHARS = 700
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


@dataclass
class Answer:
    text: str  # plain text, not escaped; PRs written as [#N]
    citations: list[int]  # the PRs that answer, all in the store, most relevant first
    prs: list[PullRequest]  # every PR the text may name: the citations, then context
    listed: list[int] = field(default_factory=list)  # PRs the text lists on a line of their own

    def sources(self) -> list[PullRequest]:
        """Cited PRs the text names only by number: a renderer lists them once below the answer."""
        by_number = {pr.number: pr for pr in self.prs}
        return [by_number[n] for n in self.citations if n in by_number and n not in self.listed]


def answer_question(
    db: Database,
    settings: Settings,
    question: str,
    history: Sequence[str] = (),
    now: datetime | None = None,
    llm: LLM | None = None,
    repo: str | None = None,
) -> Answer:
    """Answer `question` (earlier questions of the thread in `history`, oldest first).

    Raises bot.model.client.LLMError when the model fails, so the caller can say so and ask again without it.
    """
    repo = repo or settings.default_repo
    notice = empty_store_notice(db, repo)
    if notice:
        return Answer(notice, [], [])
    asked = read_in_thread(db, question, history, repo, settings.timezone, now)
    form = form_in_thread(asked, history)
    if not (asked.has_filters or asked.has_topic):
        if asked.is_empty and not (form.tally or form.kind == "count" or asked.order):
            return Answer(help_text(repo, asked.problems), [], [])
        # "who authored the most PRs?", "how many PRs are there?", "the largest PR?", "PRs not by the bot": about
        # every PR kept.
        asked = replace(asked, time=EVER)
    choice = choose(db, repo, asked, form)
    if not choice.answer:
        choice = _with_where_the_store_ends(db, repo, choice, settings.timezone)
    if not choice.answer and not choice.context:
        return Answer(lead_line(choice, form), [], [])
    # Without a cut answer the model may still choose from the candidates: often the right PR is the nearest.
    if llm is None or not (choice.answer or choice.candidates):
        return extractive_answer(choice, form, settings)
    return _model_answer(_Asking(db, settings, llm, question, history, repo), choice, form)


def _with_where_the_store_ends(db: Database, repo: str, choice: Choice, tz: ZoneInfo) -> Choice:
    """Nothing answers a time after the store's newest PR: say where the store ends, so an old store is not news."""
    time = choice.question.time
    newest = latest_merge(db, repo)
    if time is None or time.start is None or newest is None or newest >= time.start:
        return choice
    ends = f"the newest PR in the store merged on {newest.astimezone(tz):%a %b %-d, %Y}; `prdigest ingest` catches up"
    return replace(choice, question=replace(choice.question, problems=[*choice.question.problems, ends]))


def form_in_thread(asked: Question, history: Sequence[str]) -> Form:
    """The answer's shape; a follow-up that asks nothing of its own ("and on apr 9?") keeps the thread's."""
    form = read_form(asked.text)
    if history and form.kind == "lookup" and asked.continues:
        return _thread_form(history)
    # "which of those was the fix?" asks which of the earlier PRs, not what is on the other side of them
    # ("what reverted any of those?" and "was any of that reverted?" still ask for the revert).
    return replace(form, asks_other=False) if history and asked.picks_among and form.kind != "yesno" else form


def _thread_form(history: Sequence[str]) -> Form:
    """The shape of the thread's last question that asked something of its own: "who merged the most?", then
    "and on may 12?", then "and may 14?" is still a tally."""
    for earlier in reversed(history):
        form = read_form(earlier)
        if form.kind != "lookup" or not continues(earlier):
            return form
    return read_form(history[0])


_ORIGINAL = LazyPattern(r"\boriginal\b", re.IGNORECASE)
# An earlier answer's PRs a follow-up may ask about, at most, and the people who wrote them.
MAX_POINTED_AT = 10
MAX_POINTED_AT_PEOPLE = 3


def read_in_thread(
    db: Database, question: str, history: Sequence[str], repo: str, tz: ZoneInfo, now: datetime | None = None
) -> Question:
    """The question, with what it leaves unsaid taken from the thread's earlier questions (oldest first).

    A relation asked of what an earlier answer gave ("was any of that
    reverted?", "did it ever come back?") is asked of the PRs that answer cited,
    and "they" or "he" ("what else did they land?") are the people who wrote them.
    """
    context: Question | None = None
    for earlier in history:
        parsed = read_question(db, earlier, repo, tz, now)
        context = parsed if context is None else parsed.following(context)
    asked = read_question(db, question, repo, tz, now)
    if context is None:
        return asked
    followed = asked.following(context)
    answered = cache(lambda: choose(db, repo, context, _thread_form(history)))
    if _ORIGINAL.search(asked.text):
        # "who wrote the original?" after a revert or a follow-up: the PR it undid or followed.
        originals = [link.other for link in answered().links]
        if originals:
            return replace(followed, numbers=originals, within=originals, concepts=[], areas=[], area_phrases=[], area_same=[])
    one = bool(_ONE.search(asked.text))
    form = read_form(asked.text)
    # "which of those touched ROCm?", "which of those got reverted?": the earlier PRs, picked among. "what reverted
    # any of those?" asks for other PRs, related to them.
    if followed.narrows and (not form.relation or asked.picks_among):
        # Those PRs are the earlier answer's: only a time of this question's own ("which of those landed friday?")
        # narrows them, not the thread's, nor "later" ("were any of those fixed later?", of what relates to them).
        followed = replace(followed, within=[pr.number for pr in answered().answer], time=asked.time)
    if form.relation and asked.points_back and not followed.numbers and not without_relation_words(asked, form).concepts:
        return replace(followed, numbers=_pointed_prs(answered(), one))
    if form.kind == "who" and one and asked.points_back and not followed.within and answered().answer:
        # "who wrote it?": the one PR the earlier answer put first.
        return replace(followed, within=[answered().answer[0].number])
    if not form.relation and asked.points_at_people:
        # "anything from him yesterday?": the people the thread asked about, else those who wrote what it cited.
        people = list(context.people) or [Person(author, "author") for author in dict.fromkeys(pr.author for pr in answered().answer)]
        if 0 < len(people) <= MAX_POINTED_AT_PEOPLE:
            # "what else did they land?": besides what the earlier answer cited.
            besides = [pr.number for pr in answered().answer] if _ELSE.search(asked.text) else []
            if asked.has_topic:
                return replace(followed, people=people, besides=besides)
            # About those people now: the earlier topic is theirs no longer.
            return replace(followed, people=people, besides=besides, areas=[], area_phrases=[], area_same=[], concepts=[])
    return followed


# "it", "that one": one PR, the first the earlier answer gave, and what it relates to.
_ONE = LazyPattern(r"\b(?:it|this\s+one|that\s+one)\b", re.IGNORECASE)
_ELSE = LazyPattern(r"\b(?:else|other|others)\b", re.IGNORECASE)


def _pointed_prs(answered: Choice, one: bool) -> list[int]:
    """What the earlier answer cited, and both sides of the relations it stated ("it" may be what was reverted);
    of "it", only the first PR and the PRs on the other side of its relations."""
    cited = [pr.number for pr in answered.answer]
    one = one and bool(cited)
    if one:
        cited = cited[:1]
    linked = [n for link in answered.links if not one or cited[0] in (link.number, link.other) for n in (link.number, link.other)]
    return list(dict.fromkeys(cited + linked))[:MAX_POINTED_AT]


def help_text(repo: str, problems: Sequence[str] = ()) -> str:
    lines = [sentence(problem) for problem in problems]
    lines.append(f"Ask me about what merged in {repo}, for example:")
    lines.extend(f"\u2022 {example}" for example in EXAMPLES)
    return "\n".join(lines)


# ---------------------------------------------------------------- the first line


def lead_line(choice: Choice, form: Form) -> str:
    """The answer to what was asked, in its form, before any PR is listed; what could not be read trails it."""
    problems = " ".join(f"({sentence(problem)})" for problem in choice.question.problems)
    lead = _lead(choice, form)
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


def _lead(choice: Choice, form: Form) -> str:
    described = choice.question.describe()
    links = "; ".join(link.sentence() for link in choice.links)
    note = f"{choice.note} " if choice.note else ""
    if not choice.answer:
        if choice.note and not (choice.question.has_filters or choice.question.concepts):
            return choice.note  # asked only about PRs the store does not have
        return note + _nothing_line(choice, form)
    if form.kind == "yesno" and form.relation and choice.question.numbers and not choice.links:
        named = join_words([f"[#{n}]" for n in choice.question.numbers])
        if form.doubts_revert:
            return f"{note}Yes: nothing in the store reverts {named}."
        return f"{note}No PR {_RELATION_PHRASE[form.relation]} {named} in the store."
    if choice.tally:
        return note + _tally_line(choice, form)
    count = _count(choice.total)
    if form.kind == "count":
        noun = _RELATION_NOUNS[form.relation][choice.total != 1] if form.relation else choice.question.noun(choice.total)
        return f"{note}{count} {noun} {described}" + (f": {links}." if links else ".")
    if form.kind == "who":
        return note + _people(choice, form) + "."
    if form.kind == "howto":
        return note + _how_line(choice)
    if form.kind == "yesno":
        doubted = _doubted(choice, form, links)
        if doubted:
            return f"{note}{doubted}"
        if links:
            return f"{note}Yes: {links}."
        if len(choice.answer) <= NAMED_IN_A_YES:
            return f"{note}Yes: " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in choice.answer) + "."
        return f"{note}Yes: {count} {choice.question.noun(choice.total)} {described}."
    if form.relation and choice.whole_set:
        return f"{note}{count} {_RELATION_NOUNS[form.relation][choice.total != 1]} {described}: {_relation_list(choice, form.relation)}."
    if links:
        return f"{note}{sentence(links)}"
    if choice.question.numbers:
        return f"{note}About {join_words([f'[#{n}]' for n in choice.question.numbers])}:"
    order = choice.question.order
    if order and (len(choice.answer) == 1 or order in ("largest", "gain")):  # the largest may be several, as large
        return f"{note}{_ORDER_LEAD[order].format(noun=choice.question.noun(len(choice.answer)))} {described}:"
    shown = len(choice.answer)
    tail = f"; the {shown} newest:" if choice.whole_set and choice.total > shown else ":"
    return f"{note}{count} {choice.question.noun(choice.total)} {described}{tail}"


_ORDER_LEAD = {
    "first": "The first {noun}", "last": "The last {noun}", "largest": "The largest {noun} (most files changed)",
    "gain": "The {noun} stating the largest gain",
}


def _doubted(choice: Choice, form: Form, links: str) -> str | None:
    """The no that answers a doubt: "still crashing?" when a fix merged, "did it stick?" or "is it on now?" when a revert did."""
    # A revert says no to "is it on now?", and a later reland yes; "is it still reverted?" the other way round.
    reverted = any(link.kind == "reverts" for link in choice.links)
    if form.doubts_revert and links and reverted != (form.doubt == "undone"):
        return f"No: {links}."
    fixes = [pr for pr in choice.answer if _fixes(pr)] if form.doubt == "persists" else []
    if fixes:
        return "No: fixed by " + "; ".join(f"[#{pr.number}] {pr.title}" for pr in fixes[:NAMED_IN_A_YES]) + "."
    return None


def _fixes(pr: PullRequest) -> bool:
    return "bugfix" in title_tags(pr.title) or FIX_WORDS.search(pr.title) is not None


_RELATION_NOUNS = {
    "reverts": ("revert", "reverts"), "fixes": ("regression fix", "regression fixes"), "follows": ("follow-up", "follow-ups"),
}
_RELATION_PHRASE = {"reverts": "reverts", "fixes": "fixes a regression from", "follows": "follows up on"}


def _relation_list(choice: Choice, relation: str) -> str:
    """Each stated relation, with the PRs whose other side is not in the store named on their own."""
    linked = {n for link in choice.links for n in (link.number, link.other)}
    alone = [f"[#{pr.number}] {_RELATION_PHRASE[relation]} a PR not in the store"
             for pr in choice.answer if pr.number not in linked]
    return "; ".join([link.sentence() for link in choice.links] + alone)


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


def _nothing_line(choice: Choice, form: Form) -> str:
    """Nothing answers: what was looked for and through, and never that nothing merged when only the words missed."""
    question = choice.question
    nearest = NEAREST if choice.context else ""
    if not (question.concepts or question.unknown):
        noun = _RELATION_NOUNS[form.relation][0] if form.relation else question.noun(1)
        return f"No {noun} {question.describe()}.{nearest}"
    # Areas named beside words only graded the PRs; the scope is the time, people and paths asked.
    scope = replace(question, concepts=[], unknown=[], areas=[]).describe() if question.has_filters else ""
    said = [concept.said for concept in question.concepts + question.unknown]
    topic = f'"{" ".join(said)}"' if len(said) <= TOPIC_WORDS else "that"
    if question.areas and topic != "that":
        topic += " in " + " and ".join(question.areas)  # "mamba" said elsewhere, but not in tpu
    looked = f"none of the PRs {scope} answers {topic}" if scope not in ("", "merged") else f"no PR in the store answers {topic}"
    return (f"No: {looked}." if form.kind == "yesno" else sentence(looked)) + nearest


def _tally_line(choice: Choice, form: Form) -> str:
    """'DarkLight1337 merged the most PRs on Mon Feb 9 (6), then vllm-bot (5) and mgoin (3).'"""
    count = choice.tally[0][1]
    leaders = [key for key, n in choice.tally if n == count]
    others = join_words([f"{key} ({n})" for key, n in choice.tally[len(leaders) :]])
    scope = choice.question.describe().removeprefix("merged").strip()
    scope = f" {scope}" if scope else ""
    if form.tally == "area":
        said = f"{join_words(leaders)} {'was the busiest area' if len(leaders) == 1 else 'were the busiest areas'}"
        return f"{said}{scope} ({plural(count, 'PR')})" + (f", then {others}." if others else ".")
    verb = "merged" if form.tally == "merger" else "authored"
    tied = " (tied)" if len(leaders) > 1 else ""
    return f"{join_words(leaders)} {verb} the most {choice.question.noun(many=True)}{scope}{tied} ({count})" + (
        f", then {others}." if others else "."
    )


def _count(total: int) -> str:
    return f"{total}+" if total >= COUNT_CAP else str(total)


def _people(choice: Choice, form: Form) -> str:
    """'ywang96 ([#34183]) and mgoin ([#34530], [#33936])': who did it, with their PRs."""
    mergers = bool(re.search(r"\bwho\s{1,3}merged\b", choice.question.text.lower()))
    # Who reverted or fixed: choose kept the stating side. Who broke it: the fix is cited beside the culprit,
    # but only the culprit's people are named.
    culprits = {link.other for link in choice.links} if form.culprit else set()
    people: dict[str, list[int]] = {}
    for pr in [pr for pr in choice.answer if pr.number in culprits] or choice.answer:
        person = (pr.merged_by or pr.author) if mergers else pr.author
        people.setdefault(person, []).append(pr.number)
    return join_words([f"{person} ({', '.join(f'[#{n}]' for n in numbers)})" for person, numbers in people.items()])


# ---------------------------------------------------------------- without a model


def extractive_answer(choice: Choice, form: Form, settings: Settings) -> Answer:
    """The first line, then each answering PR once, with date, author and what changed."""
    lines = [lead_line(choice, form)]
    shown = choice.answer or choice.context
    detailed = len(shown) <= DETAILED_UP_TO and bool(choice.question.numbers)
    for pr in shown:
        lines.extend(pr_lines(pr, settings, detailed))
    if choice.total > len(choice.answer) and choice.answer:
        lines.append(more_note(choice.total - len(choice.answer)))
    citations = [pr.number for pr in choice.answer]
    return Answer("\n".join(lines), citations, [*choice.answer, *choice.context], [pr.number for pr in shown])


def pr_lines(pr: PullRequest, settings: Settings, detailed: bool = False) -> list[str]:
    day = pr.merged_at.astimezone(settings.timezone)
    head = f"[#{pr.number}] {pr.title} ({pr.author}, {day:%a %b} {day.day})"
    what = pr.summary.what_changed if pr.summary else ""
    what = truncate(" ".join(what.split()), DETAIL_CHARS) if detailed else first_sentence(what)
    return [head, f"    {what}"] if what else [head]


# ---------------------------------------------------------------- with a model


def _model_chooses(choice: Choice, form: Form) -> bool:
    """Whether the model picks the answer: for a question of words alone. Filters, named PRs, relations,
    tallies and the first or last merge have one right set, which the store already holds."""
    return bool(choice.candidates) and not (form.relation or form.tally or choice.question.order or choice.links)


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


def _model_answer(asking: _Asking, choice: Choice, form: Form) -> Answer:
    if _model_chooses(choice, form):
        return _model_choice_answer(asking, choice, form)
    if not choice.answer:
        return extractive_answer(choice, form, asking.settings)
    return _model_continued_answer(asking, choice, form)


def _model_choice_answer(asking: _Asking, choice: Choice, form: Form) -> Answer:
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
        return extractive_answer(choice, form, asking.settings)
    named = [pr for pr in given if pr.number not in citations and f"[#{pr.number}]" in text]
    return Answer(f"{lead_line(choice, form)}\n{_citing(text, citations)}", citations, [*choice.answer, *named])


def _within(picked: ModelChoice, given: list[PullRequest]) -> tuple[list[PullRequest], str]:
    """The picked PRs the model was given, in its order, and its text without the sentences naming any other."""
    by_number = {pr.number: pr for pr in given}
    text, unknown = cite_only(picked.text, list(by_number))
    return [by_number[n] for n in dict.fromkeys(picked.numbers) if n in by_number], _without_sentences_naming(text, unknown)


def _model_continued_answer(asking: _Asking, choice: Choice, form: Form) -> Answer:
    """The first line as without a model, then the model's explanation, citing only PRs it was given."""
    from bot.answers.model_prompt import SYSTEM_PROMPT, answer_prompt, retry_prompt
    from bot.model.summarize import ensure_summary  # imported on use, like the model client

    settings = asking.settings
    answer = [ensure_summary(asking.db, settings, pr, asking.llm) if pr.summary is None else pr for pr in choice.answer]
    choice = replace(choice, answer=answer)
    given = [*answer, *choice.context]
    allowed = [pr.number for pr in given]
    lead = lead_line(choice, form)
    system = SYSTEM_PROMPT.format(repo=asking.repo, example=allowed[0])
    prompt = answer_prompt(asking.question, asking.history, lead, answer, choice.context, settings, system)
    cleaned, unknown = cite_only(asking.text(system, prompt), allowed)
    if unknown:
        cleaned, unknown = cite_only(asking.text(system, retry_prompt(prompt, unknown, allowed)), allowed)
        cleaned = _without_sentences_naming(cleaned, unknown)
    if not cleaned:
        return extractive_answer(choice, form, settings)
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
