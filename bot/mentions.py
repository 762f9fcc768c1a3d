"""Questions asked by mentioning the bot: answered in the thread, with its earlier questions as context."""
from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import Sequence

from bot.answer import answer_question
from bot.runtime import Runtime
from bot.slack_render import Message, answer_message, mrkdwn_section, text_message
from store.threads import claim_turn, earlier_questions

log = logging.getLogger(__name__)

_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
LOOKING = ":eyes: Looking through the merged PRs\u2026"
EMPTY_QUESTION = "Ask me about what merged, like `@prdigest what changed for ROCm this week?`"
MODEL_DOWN = "_Sorry, the model is not answering right now; this answer comes from the store alone._"
FAILED = "Sorry, I could not answer that just now; the error is logged. `/prdigest help` lists what else I can do."


def question_text(text: str) -> str:
    """The mention's text without the bot's (or anyone's) @-mention tokens."""
    return " ".join(_MENTION.sub(" ", text or "").split())


def start_turn(runtime: Runtime, channel: str, thread_ts: str, ts: str, question: str) -> list[str] | None:
    """Record the question; the thread's earlier questions, or None if this mention was seen before."""
    if not claim_turn(runtime.db, channel, thread_ts, ts, question):
        return None
    return earlier_questions(runtime.db, channel, thread_ts, ts)


def answer(runtime: Runtime, question: str, now: datetime | None = None, history: Sequence[str] = ()) -> Message:
    """The answer as a Slack message; a failing model degrades to an answer from the store alone."""
    from bot.llm import LLMError  # imported on use: the model client takes a second to load

    settings = runtime.settings
    ask = lambda llm: answer_question(  # noqa: E731
        runtime.db, settings, question, history=history, now=now, llm=llm, repo=settings.default_repo
    )
    try:
        return answer_message(ask(runtime.llm), settings.timezone)
    except LLMError as exc:
        log.warning("model failed, answering from the store: %s", exc)
    message = answer_message(ask(None), settings.timezone)
    return Message(text=f"{MODEL_DOWN}\n{message.text}", blocks=[mrkdwn_section(MODEL_DOWN), *message.blocks])


def apology() -> Message:
    return text_message(FAILED)
