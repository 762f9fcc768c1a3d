""""Share in channel": a private reply to `/prdigest` posted for the whole channel, once, by whoever clicks first.

The reply is kept in the store under a random id, the button's value. A click claims it there, so
it is posted once however often the button is clicked, by one person or several, and however often
Slack delivers the click; a share whose post failed is given back for the next click.
"""
from __future__ import annotations

import logging
import re
import sqlite3
import time
from dataclasses import replace
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond

from bot.answers.commands import Reply
from bot.messages.interactive import SHARE_ACTION, person, share_button, shared_note, with_blocks
from bot.runtime import Runtime
from bot.slack.listening import Listening, team_of
from store.db import StoreError
from store.tables.shares import claim_share, keep_reply, release_share
from store.tables.teams import Team

log = logging.getLogger(__name__)

_SHARE_ID = re.compile(r"^[A-Za-z0-9_-]{8,40}$")
TOO_OLD = "This reply is no longer kept, so it cannot be shared: run the command again and share that."
FAILED = "Sorry, Slack did not take the shared reply; try the button again."


def shareable(runtime: Runtime, reply: Reply, team: Team, channel: str | None, user: str | None) -> Reply:
    """A private reply with a "Share in channel" button on its last message, the reply kept to share;
    a public reply, an error, a reply about the person's own subscriptions, or one the store cannot keep, as it is."""
    if reply.public or reply.error or reply.personal or not reply.messages or not channel:
        return reply
    messages = [{"text": message.text, "blocks": message.blocks} for message in reply.messages]
    try:
        share_id = keep_reply(runtime.db, team, channel, user, messages, time.time())
    except (StoreError, sqlite3.Error) as exc:
        log.warning("replied without a share button: the reply could not be kept (%s)", exc)
        return reply
    *first, last = reply.messages
    return replace(reply, messages=[*first, with_blocks(last, share_button(share_id))])


class Sharing(Listening):
    def register(self, app: App) -> None:
        app.action(SHARE_ACTION)(self.on_share)

    def on_share(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond, context: BoltContext) -> None:
        ack()
        share_id, user = action.get("value"), (body.get("user") or {}).get("id")
        if not (isinstance(share_id, str) and _SHARE_ID.match(share_id) and isinstance(user, str) and body.get("response_url")):
            log.warning("a share click with an unexpected reply %.40r, user or response_url; nothing shared", share_id)
            return
        self.later(self.share, team_of(context), share_id, user, respond)

    def share(self, team: Team, share_id: str, user: str, respond: Respond) -> None:
        claim = claim_share(self.runtime.db, team, share_id, user, time.time())
        if claim.gone:
            respond(text=TOO_OLD, response_type="ephemeral", replace_original=False)
            return
        if claim.messages is None:
            if claim.shared_by and claim.shared_by != user:  # the person's own second click needs no word
                respond(text=f"{person(claim.shared_by)} already shared this reply in the channel.", response_type="ephemeral", replace_original=False)
            return
        posted = 0
        for message in claim.messages:
            blocks = [shared_note(user), *message["blocks"]] if posted == 0 else message["blocks"]
            answer = respond(text=message["text"], blocks=blocks, response_type="in_channel", replace_original=False)
            if answer.status_code != 200:
                log.warning("Slack refused a shared reply: %s %.100s", answer.status_code, answer.body)
                break
            posted += 1
        if posted == 0:
            release_share(self.runtime.db, team, share_id)
            respond(text=FAILED, response_type="ephemeral", replace_original=False)
