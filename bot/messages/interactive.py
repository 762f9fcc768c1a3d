"""The buttons and the modal people answer the bot with: 👍/👎 on an answer, "Share in channel", what was wrong."""
from __future__ import annotations

import json
import re
from typing import Any

from bot.messages.blocks import Message, mrkdwn_section
from bot.messages.mrkdwn import escape, truncate
from store.tables.feedback import COMMENT_CHARS

VOTE_UP_ACTION = "prdigest_vote_up"
VOTE_DOWN_ACTION = "prdigest_vote_down"
SHARE_ACTION = "prdigest_share"
FEEDBACK_VIEW = "prdigest_feedback"
# The modal's two inputs: each a block holding one input whose action_id is INPUT.
WRONG_BLOCK, CITE_BLOCK, INPUT = "wrong", "should_cite", "text"
CITE_CHARS = 1000
_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{1,20}$")


def vote_buttons(answer_id: int) -> dict[str, Any]:
    """👍 and 👎, each carrying the answer's id."""
    return {
        "type": "actions",
        "block_id": "prdigest_votes",
        "elements": [
            _button("\U0001f44d", VOTE_UP_ACTION, str(answer_id), "This answer helped"),
            _button("\U0001f44e", VOTE_DOWN_ACTION, str(answer_id), "This answer was wrong or missed something"),
        ],
    }


def share_button(share_id: str) -> dict[str, Any]:
    return {
        "type": "actions",
        "block_id": "prdigest_share",
        "elements": [_button("Share in channel", SHARE_ACTION, share_id, "Post this reply for the whole channel")],
    }


def with_blocks(message: Message, *blocks: dict[str, Any]) -> Message:
    return Message(message.text, [*message.blocks, *blocks], message.asked)


def person(user: str) -> str:
    """A Slack user as a mention; an id of an unexpected shape is not echoed."""
    return f"<@{user}>" if _SLACK_USER.match(user) else "a teammate"


def shared_note(user: str) -> dict[str, Any]:
    """The line above a reply someone shared with the channel."""
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": f"Shared by {person(user)}", "verbatim": True}]}


def feedback_view(answer_id: int, question: str) -> dict[str, Any]:
    """The modal a 👎 opens: what was wrong, and which PRs the answer should have cited, both optional."""
    intro = f"Your \U0001f44e is noted. Anything more helps make answers better.\n>{escape(truncate(question, 300))}"
    return {
        "type": "modal",
        "callback_id": FEEDBACK_VIEW,
        "private_metadata": json.dumps({"answer": answer_id}),
        "title": _plain("Not helpful"),
        "submit": _plain("Send"),
        "close": _plain("Skip"),
        "blocks": [
            mrkdwn_section(intro),
            _input(WRONG_BLOCK, "What was wrong?", COMMENT_CHARS, multiline=True),
            {
                **_input(CITE_BLOCK, "Which PRs should it have cited?", CITE_CHARS),
                "hint": _plain("PR numbers or links, like #4102, 4099 or https://github.com/OWNER/NAME/pull/4090"),
            },
        ],
    }


def notice_view(text: str) -> dict[str, Any]:
    """A modal that only says something (our mrkdwn), with a Close button."""
    return {"type": "modal", "title": _plain("Not helpful"), "close": _plain("Close"), "blocks": [mrkdwn_section(text)]}


def _button(text: str, action_id: str, value: str, label: str) -> dict[str, Any]:
    return {"type": "button", "text": _plain(text), "action_id": action_id, "value": value, "accessibility_label": label}


def _input(block_id: str, label: str, max_length: int, multiline: bool = False) -> dict[str, Any]:
    element = {"type": "plain_text_input", "action_id": INPUT, "max_length": max_length, "multiline": multiline}
    return {"type": "input", "block_id": block_id, "optional": True, "label": _plain(label), "element": element}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}
