"""Answering a question about merged PRs: the answer first, then only the PRs that answer it.

Retrieval chooses the PRs (store.retrieval.choose); this module says what they
mean in the shape the question asked for ("Yes: …", "ywang96 …", "27 PRs …"),
from the store alone or with a model that may cite only the PRs it was given.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from bot.answers.empty_store import empty_store_notice
from bot.config import Settings
from bot.messages.blocks import more_note
from bot.messages.mrkdwn import first_sentence, truncate
from store.model import PullRequest
from store.retrieval.choose import Choice, choose
from store.retrieval.form import Form, read_form
from store.retrieval.question import MAX_QUESTION_CHARS, Question
from store.retrieval.search import COUNT_CAP, read_question
from store.tables.model_calls import record_calls
from store.tables.prs import latest_merge
from store.text.patterns import LazyPattern
from store.text.prose import atoms, join_words, plural, sentence, sentences

if TYPE_CHECKING:
    from bot.model.client import LLM

# A question about a few named PRs gets their whole "What changed", not a sentence.
DETAILED_UP_TO = 3
DETAIL_CHARS = 700
# With a model: how much of each summary section it reads, and how long it may answer.
MODEL_SECTION_CHARS = 700
MODEL_ANSWER_TOKENS = 500
# A mention may hold 40,000 characters: the model gets the question as far as the question reader reads it,
# and each earlier turn of the thread shorter still. The whole prompt fits PRDIGEST_SUMMARY_TOKENS.
EARLIER_TURN_CHARS = 200
# Kept free in the budget for the retry's note naming the PRs it may cite.
RETRY_NOTE_TOKENS = 200
# Changes when the answer prompt changes, so the ledger tells answer prompts apart.
ANSWER_PROMPT_VERSION = "answer-2"

EXAMPLES = (
    "what changed in the scheduler this week?",
    "why was #12345 reverted?",
    "what did <login> merge yesterday?",
    "anything about ROCm since Monday?",
    "spec decode fixes between Feb 9 and Feb 13",
)

SYSTEM_PROMPT = """\
You answer an engineering team's questions about pull requests merged into {repo}.
The first line of the answer is already written and states the facts; continue it.
Use only the pull requests listed in the message. Those under "Answer" answer the question;
those under "Context" are nearby and may be mentioned only if they help.
Write at most four short sentences of plain text, without headings, and do not repeat the first line.
Cite every pull request you rely on as [#NUMBER], for example [#{example}].
Never write any other PR or issue number, even one you see in a title."""

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
    if asked.is_empty:
        return Answer(help_text(repo, asked.problems), [], [])
    form = read_form(asked.text)
    choice = choose(db, repo, asked, form)
    if not choice.answer:
        choice = _with_where_the_store_ends(db, repo, choice, settings.timezone)
    if not choice.answer and not choice.context:
        return Answer(lead_line(choice, form), [], [])
    if llm is None or not choice.answer:
        return extractive_answer(choice, form, settings)
    return _model_answer(db, settings, llm, question, history, choice, form, repo)


def _with_where_the_store_ends(db: Database, repo: str, choice: Choice, tz: ZoneInfo) -> Choice:
    """Nothing answers a time after the store's newest PR: say where the store ends, so an old store is not news."""
    time = choice.question.time
    newest = latest_merge(db, repo)
    if time is None or time.start is None or newest is None or newest >= time.start:
        return choice
    ends = f"the newest PR in the store merged on {newest.astimezone(tz):%a %b %-d, %Y}; `prdigest ingest` catches up"
    return replace(choice, question=replace(choice.question, problems=[*choice.question.problems, ends]))


def read_in_thread(
    db: Database, question: str, history: Sequence[str], repo: str, tz: ZoneInfo, now: datetime | None = None
) -> Question:
    """The question, with what it leaves unsaid taken from the thread's earlier questions (oldest first)."""
    context: Question | None = None
    for earlier in history:
        parsed = read_question(db, earlier, repo, tz, now)
        context = parsed if context is None else parsed.following(context)
    asked = read_question(db, question, repo, tz, now)
    return asked.following(context) if context is not None else asked


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
    # The answer comes first; a trailing colon introduces the PRs below, so it moves after the notes.
    return f"{lead[:-1]} {problems}:" if lead.endswith(":") else f"{lead} {problems}"


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
    shown = len(choice.answer)
    tail = f"; the {shown} newest:" if choice.whole_set and choice.total > shown else ":"
    return f"{note}{count} {choice.question.noun(choice.total)} {described}{tail}"


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
    nearest = " The nearest, which may not answer it:" if choice.context else ""
    if not (question.concepts or question.unknown):
        return f"No {question.noun(1)} {question.describe()}.{nearest}"
    # Areas named beside words only graded the PRs; the scope is the time, people and paths asked.
    scope = replace(question, concepts=[], unknown=[], areas=[]).describe() if question.has_filters else ""
    said = [concept.said for concept in question.concepts + question.unknown]
    topic = f'"{" ".join(said)}"' if len(said) <= TOPIC_WORDS else "that"
    looked = f"none of the PRs {scope} answers {topic}" if scope not in ("", "merged") else f"no PR in the store answers {topic}"
    return sentence(f"{'no, ' if form.kind == 'yesno' else ''}{looked}") + nearest


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
    return f"{join_words(leaders)} {verb} the most {choice.question.noun(count)}{scope}{tied} ({count})" + (
        f", then {others}." if others else "."
    )


def _count(total: int) -> str:
    return f"{total}+" if total >= COUNT_CAP else str(total)


def _people(choice: Choice, form: Form) -> str:
    """'ywang96 ([#34183]) and mgoin ([#34530], [#33936])': who did it, with their PRs."""
    mergers = bool(re.search(r"\bwho\s{1,3}merged\b", choice.question.text.lower()))
    # Who reverted or fixed: the people on the stating side of the relation; who broke it: the other side.
    stating = {link.other if form.culprit else link.number for link in choice.links}
    people: dict[str, list[int]] = {}
    for pr in [pr for pr in choice.answer if pr.number in stating] or choice.answer:
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


def _model_answer(
    db: Database,
    settings: Settings,
    llm: LLM,
    question: str,
    history: Sequence[str],
    choice: Choice,
    form: Form,
    repo: str,
) -> Answer:
    """The first line as without a model, then the model's explanation, citing only PRs it was given."""
    from bot.model.summarize import ensure_summary  # imported on use, like the model client

    answer = [ensure_summary(db, settings, pr, llm) if pr.summary is None else pr for pr in choice.answer]
    choice = replace(choice, answer=answer)
    given = [*answer, *choice.context]
    allowed = [pr.number for pr in given]
    lead = lead_line(choice, form)
    system = SYSTEM_PROMPT.format(repo=repo, example=allowed[0])
    prompt = _model_prompt(question, history, lead, answer, choice.context, settings, system)
    text = _ask(db, llm, repo, system, prompt)
    cleaned, unknown = cite_only(text, allowed)
    if unknown:
        retry = f"{prompt}\n\nYour last answer named {', '.join(f'#{n}' for n in unknown)}, which is not listed. " \
            f"Answer again, citing only {', '.join(f'[#{n}]' for n in allowed)}."
        cleaned, unknown = cite_only(_ask(db, llm, repo, system, retry), allowed)
        cleaned = _without_sentences_naming(cleaned, unknown)
    if not cleaned:
        return extractive_answer(choice, form, settings)
    cited = [n for n in allowed if f"[#{n}]" in cleaned]
    citations = [n for n in cited if n in {pr.number for pr in answer}] or [pr.number for pr in answer]
    body = cleaned
    if not set(cited) & set(citations):
        body += "\nPRs: " + ", ".join(f"[#{n}]" for n in citations)
    return Answer(f"{lead}\n{body}", citations, given)


def _ask(db: Database, llm: LLM, repo: str, system: str, prompt: str) -> str:
    """One model call, recorded in the ledger whatever its outcome."""
    from bot.model.client import LLMError

    record = partial(record_calls, db, model=llm.model, purpose="answer", prompt=ANSWER_PROMPT_VERSION, repo=repo)
    try:
        completion = llm.complete(system, prompt, MODEL_ANSWER_TOKENS)
    except LLMError as exc:
        record([exc.call()])
        raise
    record([completion.call()])
    return completion.text


def _model_prompt(
    question: str,
    history: Sequence[str],
    lead: str,
    answer: list[PullRequest],
    context: list[PullRequest],
    settings: Settings,
    system: str,
) -> str:
    """The user message: the question, the thread's earlier ones, then as many PRs' briefs as the budget holds."""
    from bot.model.client import estimate_tokens

    lines = [f"Question: {_clip(question, MAX_QUESTION_CHARS)}"]
    if history:
        lines.append("Earlier questions in this thread: " + " | ".join(_clip(h, EARLIER_TURN_CHARS) for h in history))
    lines += [f"First line (already written): {lead}", "", "Answer:"]
    left = settings.summary_tokens - estimate_tokens(system) - RETRY_NOTE_TOKENS - estimate_tokens("\n".join(lines))
    briefs, left = _briefs(answer, settings, left)
    lines += briefs
    if context:
        briefs, _ = _briefs(context, settings, left)
        lines += ["Context:", *briefs]
    return "\n".join(lines).strip()


def _clip(text: str, chars: int) -> str:
    return truncate(" ".join(text.split()), chars)


def _briefs(prs: list[PullRequest], settings: Settings, tokens: int) -> tuple[list[str], int]:
    """The briefs of the first `prs` that fit in `tokens`, a note naming how many did not, and the tokens left."""
    from bot.model.client import estimate_tokens

    lines: list[str] = []
    for shown, pr in enumerate(prs):
        brief = _pr_brief(pr, settings)
        cost = estimate_tokens("\n".join(brief))
        if cost > tokens:
            return [*lines, f"(and {len(prs) - shown} more, left out for length)", ""], tokens
        lines += brief
        tokens -= cost
    return lines, tokens


def _pr_brief(pr: PullRequest, settings: Settings) -> list[str]:
    day = pr.merged_at.astimezone(settings.timezone)
    merged_by = f", merged by {pr.merged_by}" if pr.merged_by else ""
    areas = f"; areas: {', '.join(pr.areas)}" if pr.areas else ""
    lines = [f"[#{pr.number}] {pr.title}", f"Merged {day:%Y-%m-%d %H:%M} by author {pr.author}{merged_by}{areas}"]
    if pr.summary:
        for label, text in (
            ("What changed", pr.summary.what_changed),
            ("Impact", pr.summary.impact),
            ("Risks", pr.summary.risks),
        ):
            if text:
                lines.append(f"{label}: {truncate(' '.join(text.split()), MODEL_SECTION_CHARS)}")
    return [*lines, ""]


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
