"""👍/👎 on answers: a click is a vote (a second click changes it), and 👎 opens a modal asking what was wrong.

The 👎 counts from the click: the modal only adds to it, so closing it loses nothing. A modal is
answered in its own submission (errors beside the field, or a closing note); nothing in it depends on
the answer's message still being there.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answers.feedback import expected_prs
from bot.messages.interactive import (
    CITE_BLOCK,
    FEEDBACK_VIEW,
    INPUT,
    VOTE_DOWN_ACTION,
    VOTE_UP_ACTION,
    WRONG_BLOCK,
    feedback_view,
    notice_view,
)
from bot.slack.listening import Listening, team_of
from store.db import StoreError
from store.tables.feedback import DOWN, UP, get_answer, record_vote
from store.tables.teams import Team

log = logging.getLogger(__name__)

_ANSWER_ID = re.compile(r"^[1-9][0-9]{0,17}$")
THANKS_UP = "Thanks: noted as helpful. A click on \U0001f44e changes it."
THANKS_DOWN = "Noted as not helpful. A click on \U0001f44d changes it."
GONE = "That answer is no longer kept, so this feedback could not be saved."
BUSY = "The store is busy right now, so this feedback could not be saved; try again in a minute."
KEPT = "Thanks: this is kept with the answer. The answers marked wrong become questions the bot is checked against."


class Feedback(Listening):
    def register(self, app: App) -> None:
        app.action(VOTE_UP_ACTION)(self.on_up)
        app.action(VOTE_DOWN_ACTION)(self.on_down)
        app.view(FEEDBACK_VIEW)(self.on_submission)

    def on_up(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond, context: BoltContext) -> None:
        ack()
        vote = _vote(body, action)
        if vote is not None:
            self.later(self.vote_up, team_of(context), *vote, respond if body.get("response_url") else None)

    def vote_up(self, team: Team, answer_id: int, user: str, respond: Respond | None) -> None:
        note = self._record(team, answer_id, user, UP) or THANKS_UP
        if respond is not None:
            respond(text=note, response_type="ephemeral", replace_original=False)

    def on_down(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, respond: Respond, context: BoltContext
    ) -> None:
        # Here rather than on the answer pool: the modal must open within the 3 seconds its trigger lives.
        ack()
        vote = _vote(body, action)
        if vote is None:
            return
        answer_id, user = vote
        team = team_of(context)
        note = self._record(team, answer_id, user, DOWN)
        answer = None if note else get_answer(self.runtime.db, team, answer_id)
        trigger = body.get("trigger_id")
        if answer is not None and isinstance(trigger, str):
            try:
                client.views_open(trigger_id=trigger, view=feedback_view(answer_id, answer.question))
                return
            except SlackApiError as exc:
                log.warning("could not open the feedback modal: %s", exc.response.get("error") or exc.response.status_code)
        if body.get("response_url"):
            respond(text=note or THANKS_DOWN, response_type="ephemeral", replace_original=False)

    def _record(
        self, team: Team, answer_id: int, user: str, vote: str, details: tuple[str | None, list[str] | None] | None = None
    ) -> str | None:
        """Store the vote on the team's answer; None when it was, else what to tell the person."""
        try:
            kept = record_vote(self.runtime.db, team, answer_id, user, vote, self.runtime.now(), details)
        except StoreError as exc:
            log.warning("could not record a vote on answer %d: %s", answer_id, exc)
            return BUSY
        if not kept:
            log.warning("a vote on answer %d, which is not kept", answer_id)
            return GONE
        return None

    def on_submission(self, ack: Ack, body: dict[str, Any], view: dict[str, Any], context: BoltContext) -> None:
        submitted = _submission(body, view)
        if submitted is None:
            ack()
            return
        answer_id, user, wrong, cite = submitted
        team = team_of(context)
        try:
            answer = get_answer(self.runtime.db, team, answer_id)
            expected = None if answer is None else expected_prs(self.runtime, answer, cite)
        except ValueError as exc:
            ack(response_action="errors", errors={CITE_BLOCK: f"{exc}: give PR numbers like #4102, or links to PRs"})
            return
        except StoreError as exc:
            log.warning("could not read answer %d for its feedback: %s", answer_id, exc)
            ack(response_action="update", view=notice_view(BUSY))
            return
        note = self._record(team, answer_id, user, DOWN, (wrong, expected))  # GONE when the answer is not kept
        ack(response_action="update", view=notice_view(note or KEPT))


def _vote(body: dict[str, Any], action: dict[str, Any]) -> tuple[int, str] | None:
    """The answer voted on and the person voting; None (and a line) when the click does not say them."""
    value, user = action.get("value"), (body.get("user") or {}).get("id")
    if not (isinstance(value, str) and _ANSWER_ID.match(value) and isinstance(user, str)):
        log.warning("a vote with an unexpected answer %.40r or user; nothing recorded", value)
        return None
    return int(value), user


def _submission(body: dict[str, Any], view: dict[str, Any]) -> tuple[int, str, str | None, str | None] | None:
    """The answer, the person, and the two fields of a submitted feedback modal; None (and a line) when
    the submission does not hold them."""
    try:
        answer = json.loads(view.get("private_metadata") or "{}").get("answer")
        values = view["state"]["values"]
        wrong, cite = (values.get(block, {}).get(INPUT, {}).get("value") for block in (WRONG_BLOCK, CITE_BLOCK))
        user = body["user"]["id"]
    except (ValueError, KeyError, TypeError, AttributeError):
        answer = user = wrong = cite = None
    if not (type(answer) is int and answer > 0 and isinstance(user, str)
            and all(field is None or isinstance(field, str) for field in (wrong, cite))):
        log.warning("a feedback modal submitted without its answer, user or fields; nothing recorded")
        return None
    return answer, user, wrong, cite
