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
from bot.answers.first_line import lead_line
from bot.answers.release_questions import release_answer
from bot.config import DEFAULT_TIMEZONE, Settings
from bot.messages.blocks import more_note
from store.model import PullRequest
from store.retrieval.choose import Choice, choose
from store.retrieval.finding.listing import COUNT_CAP
from store.retrieval.reading.query import Intent, Query
from store.retrieval.reading.when import EVER
from store.retrieval.thread import Answered, Reading, Turn, read_in_thread
from store.tables.model_calls import ModelCall, record_calls
from store.tables.prs import latest_merge
from store.tables.structured_output import json_schema_support, remember_json_schema
from store.text.patterns import LazyPattern
from store.text.prose import sentence, sentences
from store.understanding.relations import Link

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
    # Only a store that ends before the day asked is old news: "after 11:30pm yesterday" of yesterday's store is not.
    if time is None or time.start is None or newest is None or newest.astimezone(tz).date() >= time.start.astimezone(tz).date():
        return choice
    ends = f"the newest PR in the store merged on {newest.astimezone(tz):%a %b %-d, %Y}; `prdigest ingest` catches up"
    return replace(choice, question=replace(choice.question, problems=(*choice.question.problems, ends)))


def help_text(repo: str, problems: Sequence[str] = ()) -> str:
    lines = [sentence(problem) for problem in problems]
    lines.append(f"Ask me about what merged in {repo}, for example:")
    lines.extend(f"\u2022 {example}" for example in EXAMPLES)
    return "\n".join(lines)


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
