"""Finding the daily-report messages Slack already holds, by the metadata each one carries.

After an answer that may hide an accepted message (a 5xx, a dropped
connection, a poster killed mid-send) the thread is read back instead of
sending again. Reading needs channels:history / groups:history; a workspace
that has not granted them gets one warning and the old behaviour (send again).
"""
from __future__ import annotations

import http.client
import logging
from collections.abc import Iterable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

EVENT_TYPE = "prdigest_post"
# Slack's clock and ours differ a little, and a send may take a while to land.
AROUND_SECONDS = 120.0
_PAGE = 200


def metadata(post_key: str, part: int) -> dict[str, Any]:
    """The message metadata naming which post and which part (0: the parent) a message is."""
    return {"event_type": EVENT_TYPE, "event_payload": {"post": post_key, "part": part}}


def ambiguous(exc: BaseException) -> bool:
    """Whether Slack may have accepted the message although the call failed."""
    if isinstance(exc, SlackApiError):
        return exc.response.status_code >= 500
    return isinstance(exc, (OSError, http.client.HTTPException))


class ThreadReader:
    """Reads a channel's messages back; warns once when the workspace did not grant reading."""

    def __init__(self, client: WebClient) -> None:
        self.client = client
        self._warned = False

    def find_parent(self, channel: str, post_key: str, sent_at: float) -> str | None:
        """The ts of the post's parent, if it is in the channel around `sent_at`."""
        pages = self._read(
            self.client.conversations_history, channel=channel, oldest=f"{sent_at - AROUND_SECONDS:.6f}",
            latest=f"{sent_at + AROUND_SECONDS:.6f}", inclusive=True,
        )
        parts = _parts(pages, post_key)
        return parts.get(0)

    def reply_parts(self, channel: str, parent_ts: str, post_key: str) -> dict[int, str]:
        """The post's replies in the thread of `parent_ts`: part -> ts."""
        pages = self._read(self.client.conversations_replies, channel=channel, ts=parent_ts)
        return {part: ts for part, ts in _parts(pages, post_key).items() if part > 0}

    def _read(self, method: Any, **params: Any) -> Iterable[dict[str, Any]]:
        try:
            return list(method(include_all_metadata=True, limit=_PAGE, **params))
        except SlackApiError as exc:
            if exc.response.get("error") not in ("missing_scope", "not_allowed_token_type"):
                raise
            if not self._warned:
                self._warned = True
                log.warning(
                    "cannot read channels back (%s: grant channels:history and groups:history); "
                    "a message whose answer was lost is sent again and may show twice",
                    exc.response.get("error"),
                )
            return []


def _parts(pages: Iterable[dict[str, Any]], post_key: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for page in pages:
        for message in page.get("messages") or []:
            meta = message.get("metadata") or {}
            payload = meta.get("event_payload") or {}
            if meta.get("event_type") == EVENT_TYPE and payload.get("post") == post_key:
                found.setdefault(int(payload.get("part", -1)), message["ts"])
    return found
