"""Questions asked by mentioning the bot: answered in the thread, with its earlier questions as context."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.answers.answer import SHOWN, answer_question
from bot.answers.answered import Answer
from bot.answers.empty_store import empty_store_notice
from bot.answers.scope import followed, not_followed, scope_of
from bot.messages.blocks import (
    MAX_BLOCKS,
    MAX_FALLBACK_CHARS,
    Asked,
    Message,
    grouped_message,
    mrkdwn_section,
    pr_link,
    text_message,
    text_sections,
)
from bot.messages.mrkdwn import escape, link, truncate
from bot.runtime import Runtime
from store.retrieval.thread import Answered, Turn, answered_text, turn_from_store
from store.tables.teams import Team
from store.tables.threads import claim_turn, earlier_turns, keep_answered
from store.text.prose import typed

log = logging.getLogger(__name__)

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
# "--limit 73" anywhere in a question asks for that many PRs listed, as `prdigest ask --limit 73` does.
_LIMIT = re.compile(r"(?:^|\s)--limit[\s=]+(\d{1,4})\b")
# The most PRs an answer lists, however many are asked for: what a set is counted up to.
MAX_LIMIT = 1000
LOOKING = ":eyes: Looking through the merged PRs\u2026"
EMPTY_QUESTION = "Ask me about what merged, like `@prdigest what changed for ROCm this week?`"
MODEL_DOWN = "_Sorry, the model is not answering right now; this answer comes from the store alone._"
FAILED = "Sorry, I could not answer that just now; the error is logged. `/prdigest help` lists what else I can do."


def question_text(text: str) -> str:
    """The mention's text without the bot's (or anyone's) @-mention tokens, in the form it is read (NFKC)."""
    return " ".join(_MENTION.sub(" ", typed(text or "")).split())


def start_turn(runtime: Runtime, team: Team, channel: str, thread_ts: str, ts: str, question: str) -> list[Turn] | None:
    """Record the question; the thread's earlier turns, or None if this mention was seen before."""
    if not claim_turn(runtime.db, team, channel, thread_ts, ts, question):
        return None
    return [turn_from_store(text, kept) for text, kept in earlier_turns(runtime.db, team, channel, thread_ts, ts)]


def keep_turn(runtime: Runtime, team: Team, channel: str, ts: str, replies: Replies) -> None:
    """Keep what the mention at `ts` was read as and what its answers cited, for the thread's next question."""
    answered = replies.answered()
    if answered:
        keep_answered(runtime.db, team, channel, ts, answered_text(answered))


@dataclass
class Replies:
    """A question's answers, one per repository it covers, or the one line that stands in for them."""

    answers: list[tuple[str, Answer]] = field(default_factory=list)
    refusal: str | None = None  # a repository that is ambiguous or not followed
    model_down: str | None = None  # why the model failed; these answers then come from the store alone

    def shown(self) -> list[tuple[str, Answer]]:
        """The answers worth showing: those that cite PRs; when none does, the one with the nearest PRs."""
        if len(self.answers) <= 1:
            return self.answers
        cited = [(repo, reply) for repo, reply in self.answers if reply.citations]
        return cited or [next((pair for pair in self.answers if pair[1].prs), self.answers[0])]

    def answered(self) -> dict[str, Answered]:
        """What each repository read the question as and its answer cited: the turn a thread keeps."""
        return {repo: reply.answered for repo, reply in self.answers if reply.answered is not None}

    def follows(self) -> bool:
        """Whether the thread supplied part of the question."""
        return any(reply.follows for _, reply in self.answers)


def reply_to(
    runtime: Runtime,
    question: str,
    team: Team,
    now: datetime | None = None,
    history: Sequence[Turn] = (),
    channel: str | None = None,
    only: str | None = None,
    limit: int | None = None,
) -> Replies:
    """Answer for every repository the question covers (the team's channel's, the configured ones, or those it
    names); `only` limits it to one. Each lists at most `limit` PRs, or as many as the question's "--limit N" asks
    for. A failing model degrades to answers from the store alone."""
    from bot.model.client import LLMError  # imported on use: the model client takes a second to load

    question, asked_limit = limit_of(question)
    limit = limit or asked_limit
    scope = scope_of(runtime, question, team, channel, [turn.text for turn in history])
    if scope.ambiguous:
        return Replies(refusal=scope.ambiguous)
    if scope.foreign:
        return Replies(refusal=not_followed(scope.foreign[0], followed(runtime, team)) + ".")
    repos = (only,) if only else _answerable(runtime, scope.repos)
    settings = runtime.settings
    # The thread's turns as each was asked, without the repositories' names.
    thread = [Turn(text, turn.answered) for text, turn in zip(scope.history, history)]
    ask = lambda llm: [
        (repo, answer_question(runtime.db, settings, scope.text, thread, now=now, llm=llm, repo=repo, limit=limit))
        for repo in repos
    ]
    try:
        return Replies(ask(runtime.llm))
    except LLMError as exc:
        log.warning("model failed, answering from the store: %s", exc)
        return Replies(ask(None), model_down=str(exc))


def limit_of(question: str) -> tuple[str, int]:
    """The question without its "--limit N", and how many PRs its answer lists (SHOWN unless it says)."""
    found = _LIMIT.search(question)
    if found is None:
        return question, SHOWN
    limit = min(max(1, int(found[1])), MAX_LIMIT)
    return " ".join((question[: found.start()] + question[found.end() :]).split()), limit


def answer(
    runtime: Runtime,
    question: str,
    team: Team,
    now: datetime | None = None,
    history: Sequence[Turn] = (),
    channel: str | None = None,
) -> Message:
    """The answer as a Slack message, grouped by repository when it covers several, with what it answered."""
    return answered_message(runtime, question, reply_to(runtime, question, team, now, history, channel), history)


def answered_message(runtime: Runtime, question: str, replies: Replies, history: Sequence[Turn] = ()) -> Message:
    """The replies as a Slack message, with what they answered."""
    message = replies_message(replies, runtime.settings.timezone)
    message.asked = asked(question, [turn.text for turn in history], replies)
    return message


def asked(question: str, history: Sequence[str], replies: Replies) -> Asked | None:
    """What the answers answered and cited; None for a refusal, which answers nothing."""
    shown = replies.shown()
    if replies.refusal or not shown:
        return None
    first_line = shown[0][1].text.strip().split("\n", 1)[0]
    citations = tuple(f"{repo}#{number}" for repo, reply in shown for number in reply.citations)
    return Asked(question, tuple(history), first_line, citations)


def replies_message(replies: Replies, tz: ZoneInfo) -> Message:
    if replies.refusal:
        return text_message(replies.refusal)
    shown = replies.shown()
    # Several repositories asked: each answer under its repository's name, even when one alone cites.
    if len(replies.answers) == 1:
        message = answer_message(shown[0][1], tz)
    else:
        message = grouped_message([(repo, answer_message(reply, tz)) for repo, reply in shown])
    if not replies.model_down:
        return message
    return Message(text=f"{MODEL_DOWN}\n{message.text}", blocks=[mrkdwn_section(MODEL_DOWN), *message.blocks])


def _answerable(runtime: Runtime, repos: tuple[str, ...]) -> tuple[str, ...]:
    """The repositories the store holds PRs of; the first alone when it holds none (its answer says so)."""
    if len(repos) == 1:
        return repos
    return tuple(repo for repo in repos if empty_store_notice(runtime.db, repo) is None) or repos[:1]


def apology() -> Message:
    return text_message(FAILED)


_CITATION = re.compile(r"\[#(\d+)\]")
MAX_SOURCES = 5


def answer_message(answer: Answer, tz: ZoneInfo) -> Message:
    """An answer: its text escaped, [#N] turned into links for the cited PRs, and the sources it names only by number."""
    cited = {pr.number: pr for pr in answer.prs}

    def cite(match: re.Match[str]) -> str:
        pr = cited.get(int(match.group(1)))
        return link(pr.url, f"#{pr.number}") if pr else match.group(0)

    body = _CITATION.sub(cite, escape(answer.text.strip()))
    blocks = text_sections(body.split("\n"))
    sources = answer.sources()[:MAX_SOURCES]
    if sources:
        lines = ["*Sources*"] + [
            f"\u2022 {pr_link(pr)} _by {escape(pr.author)}, merged {pr.merged_at.astimezone(tz).date().isoformat()}_" for pr in sources
        ]
        blocks.append(mrkdwn_section("\n".join(lines)))
    return Message(text=truncate(body, MAX_FALLBACK_CHARS), blocks=blocks[:MAX_BLOCKS])
