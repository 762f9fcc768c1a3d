""""Explain these PRs", a message shortcut: the summary of each PR the message names, in its thread."""
from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answers.explain import explain, nothing_named
from bot.messages.blocks import Message
from bot.messages.mrkdwn import escape
from bot.slack.listening import Listening, team_of
from store.tables.teams import Team

log = logging.getLogger(__name__)

EXPLAIN_SHORTCUT = "prdigest_explain"
# Where a message keeps more text than `text`: a bot's attachments (the GitHub app's, say).
_ATTACHMENT_TEXT = ("title_link", "from_url", "fallback", "title", "text", "pretext")


class Explain(Listening):
    def register(self, app: App) -> None:
        app.shortcut(EXPLAIN_SHORTCUT)(self.on_shortcut)

    def on_shortcut(self, ack: Ack, body: dict[str, Any], client: WebClient, respond: Respond, context: BoltContext) -> None:
        ack()
        channel, message = (body.get("channel") or {}).get("id"), body.get("message") or {}
        ts, text = message.get("ts"), message.get("text")
        if not (isinstance(channel, str) and isinstance(ts, str) and isinstance(text, str)):
            log.warning("an Explain these PRs shortcut without its channel or message; nothing to explain")
            return
        thread_ts = message.get("thread_ts") if isinstance(message.get("thread_ts"), str) else ts
        whole = "\n".join([text, *_attachment_text(message.get("attachments"))])
        self.later(self.answer, team_of(context), channel, thread_ts, whole, client,
                   respond if body.get("response_url") else None)

    def answer(
        self, team: Team, channel: str, thread_ts: str, text: str, client: WebClient, respond: Respond | None
    ) -> None:
        messages = explain(self.runtime, team, text, channel)
        if messages is None:
            if respond is not None:
                respond(text=nothing_named(self.runtime, team, channel), response_type="ephemeral", replace_original=False)
            return
        for index, message in enumerate(messages):
            try:
                client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=message.text, blocks=message.blocks, unfurl_links=False
                )
            except SlackApiError as exc:
                error = exc.response.get("error") or exc.response.status_code
                log.warning("could not post the explained PRs in %s: %s", channel, error)
                if index == 0 and respond is not None:  # not in the channel, say: the person still gets them
                    _privately(respond, messages, error)
                return


def _privately(respond: Respond, messages: list[Message], error: object) -> None:
    note = f"_I could not reply in this thread ({escape(str(error))}); in a private channel, `/invite @prdigest` first. Here they are for you:_"
    respond(text=note, response_type="ephemeral", replace_original=False)
    for message in messages[:4]:  # a response_url takes five messages
        respond(text=message.text, blocks=message.blocks, response_type="ephemeral", replace_original=False)


def _attachment_text(attachments: object) -> list[str]:
    if not isinstance(attachments, list):
        return []
    return [
        value for attachment in attachments[:20] if isinstance(attachment, dict)
        for value in (attachment.get(key) for key in _ATTACHMENT_TEXT) if isinstance(value, str)
    ]
