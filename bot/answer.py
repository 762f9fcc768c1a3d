"""Answering a question about merged PRs: from the store alone, or with a model that cites what it read."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Sequence
from zoneinfo import ZoneInfo

from sqlite_utils import Database

from bot.config import Settings
from bot.mrkdwn import truncate
from store.question import Question
from bot.slack_render import first_sentence
from store.extractive import sentence
from store.model import PullRequest
from store.search import COUNT_CAP, SearchResult, read_question, search

if TYPE_CHECKING:
    from bot.llm import LLM

# Enough PRs to answer most questions in one Slack message (a model reads as many); more is a report.
ANSWER_LIMIT = 8
# With a model: how much of each summary section it reads, and how long it may answer.
MODEL_SECTION_CHARS = 700
MODEL_ANSWER_TOKENS = 500
# A question about a few named PRs gets their whole "What changed", not a sentence.
DETAILED_UP_TO = 3
DETAIL_CHARS = 700

EXAMPLES = (
    "what changed in the scheduler this week?",
    "why was #12345 reverted?",
    "what did <login> merge yesterday?",
    "anything about ROCm since Monday?",
    "spec decode fixes between Feb 9 and Feb 13",
)

SYSTEM_PROMPT = """\
You answer an engineering team's questions about pull requests merged into {repo}.
Use only the pull requests listed in the message; they are the search results for the question.
Answer in at most four short sentences of plain text, without headings.
Cite every pull request you rely on as [#NUMBER], for example [#{example}].
Never cite a number that is not in the list. If the list does not answer the question, say so in one sentence."""

_REFERENCE = re.compile(r"\[?#(\d+)\]?")


@dataclass
class Answer:
    text: str  # plain text, not escaped; PRs written as [#N]
    citations: list[int]  # PR numbers in the store, most relevant first
    prs: list[PullRequest]  # the PRs the answer draws on, citations among them


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

    Raises bot.llm.LLMError when the model fails, so the caller can say so and ask again without it.
    """
    repo = repo or settings.default_repo
    asked = read_in_thread(db, question, history, repo, settings.timezone, now)
    if asked.is_empty:
        return Answer(help_text(repo, asked.problems), [], [])
    result = search(db, repo, asked, limit=ANSWER_LIMIT)
    if not result.hits:
        return Answer(_nothing(result, repo), [], [])
    if llm is not None:
        return _model_answer(db, settings, llm, question, history, result, repo)
    return extractive_answer(result, settings)


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


def _nothing(result: SearchResult, repo: str) -> str:
    said = result.note or f"No PRs {result.question.describe()}."
    return f"{said}\n{help_text(repo)}"


# ---------------------------------------------------------------- without a model


def extractive_answer(result: SearchResult, settings: Settings) -> Answer:
    """One line of framing, then each PR with date, author and what changed."""
    prs = [hit.pr for hit in result.hits]
    lines = [_framing(result)]
    detailed = len(prs) <= DETAILED_UP_TO and bool(result.question.numbers)
    for pr in prs:
        lines.extend(pr_lines(pr, settings, detailed))
    return Answer("\n".join(lines), [pr.number for pr in prs], prs)


def pr_lines(pr: PullRequest, settings: Settings, detailed: bool = False) -> list[str]:
    day = pr.merged_at.astimezone(settings.timezone)
    head = f"[#{pr.number}] {pr.title} ({pr.author}, {day:%a %b} {day.day})"
    what = pr.summary.what_changed if pr.summary else ""
    what = truncate(" ".join(what.split()), DETAIL_CHARS) if detailed else first_sentence(what)
    return [head, f"    {what}"] if what else [head]


def _framing(result: SearchResult) -> str:
    question = result.question
    problems = " ".join(f"({sentence(problem)})" for problem in question.problems)
    links = [hit.link.sentence() for hit in result.hits if hit.link is not None]
    if question.numbers and result.hits[0].link is None:
        head = "; ".join(links) + "." if links else f"About [#{result.hits[0].pr.number}]:"
        if result.note:
            head = f"{result.note} {head}"
    elif result.note:
        head = result.note
    elif result.total is None:  # ranked by text: counting every match would cost as much as ranking
        head = f"PRs {question.describe()}, best matches first:"
    else:
        shown, total = len(result.hits), result.total
        count = f"{total}+" if total >= COUNT_CAP else str(total)
        noun = "PR" if total == 1 else "PRs"
        head = f"{count} {noun} {question.describe()}" + (f"; the {shown} newest:" if total > shown else ":")
    return f"{problems} {head}".strip()


# ---------------------------------------------------------------- with a model


def _model_answer(
    db: Database,
    settings: Settings,
    llm: LLM,
    question: str,
    history: Sequence[str],
    result: SearchResult,
    repo: str,
) -> Answer:
    from bot.summarize import ensure_summary  # imported on use, like the model client

    prs = [ensure_summary(db, settings, hit.pr, llm) if hit.pr.summary is None else hit.pr for hit in result.hits]
    system = SYSTEM_PROMPT.format(repo=repo, example=prs[0].number)
    completion = llm.complete(system, _model_prompt(question, history, result, prs, settings), MODEL_ANSWER_TOKENS)
    text, cited = cite_only(completion.text, [pr.number for pr in prs])
    if not cited:
        # The model answered without naming its sources: show what it read.
        cited = [pr.number for pr in prs[:3]]
        text = f"{text}\nRelated PRs: " + ", ".join(f"[#{n}]" for n in cited)
    return Answer(text, cited, prs)


def _model_prompt(
    question: str, history: Sequence[str], result: SearchResult, prs: list[PullRequest], settings: Settings
) -> str:
    lines = [f"Question: {question.strip()}"]
    if history:
        lines.append("Earlier questions in this thread: " + " | ".join(h.strip() for h in history))
    lines.append(f"Search: PRs {result.question.describe()}.")
    if result.note:
        lines.append(f"Note: {result.note}")
    links = [hit.link.sentence() for hit in result.hits if hit.link is not None]
    if links:
        lines.append("Relations: " + "; ".join(links) + ".")
    lines.append("")
    for pr in prs:
        day = pr.merged_at.astimezone(settings.timezone)
        lines.append(f"[#{pr.number}] {pr.title}")
        merged_by = f", merged by {pr.merged_by}" if pr.merged_by else ""
        areas = f"; areas: {', '.join(pr.areas)}" if pr.areas else ""
        lines.append(f"Merged {day:%Y-%m-%d %H:%M} by author {pr.author}{merged_by}{areas}")
        if pr.summary:
            for label, text in (
                ("What changed", pr.summary.what_changed),
                ("Impact", pr.summary.impact),
                ("Risks", pr.summary.risks),
            ):
                if text:
                    lines.append(f"{label}: {truncate(' '.join(text.split()), MODEL_SECTION_CHARS)}")
        lines.append("")
    return "\n".join(lines).strip()


def cite_only(text: str, allowed: Sequence[int]) -> tuple[str, list[int]]:
    """The answer with references to PRs outside `allowed` removed, and the cited ones in `allowed` order."""
    permitted = set(allowed)
    cited: set[int] = set()

    def keep(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if number in permitted:
            cited.add(number)
            return f"[#{number}]"
        return "" if match.group(0).startswith("[") else match.group(0)

    cleaned = _REFERENCE.sub(keep, text.strip())
    cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned))
    return cleaned.strip(), [n for n in allowed if n in cited]
