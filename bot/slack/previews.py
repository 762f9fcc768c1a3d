"""PR link previews: a `link_shared` event answered with one chat.unfurl, in the channels that turned them on.

Slack sends `link_shared` when a message links a domain of the app's (`unfurl_domains` in the
manifest). Each PR of a repository the bot follows is previewed from its stored summary, at most
once per channel in 30 minutes, whichever process gets the event (the claim is in the store).
"""
from __future__ import annotations

import logging
import time
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answers.pr_refs import PR, host_of, linked_prs
from bot.answers.previews import find_pr, preview_of
from bot.answers.scope import followed
from bot.messages.preview import preview_unfurl
from bot.slack.listening import Listening, team_of
from store.db import StoreError
from store.tables.previews import claim_previews, previews_on, release_previews
from store.tables.teams import Team

log = logging.getLogger(__name__)

# PRs previewed from one message; Slack itself sends few links per event.
MAX_PREVIEWS = 10
_URL_CHARS = 2000


class LinkPreviews(Listening):
    def register(self, app: App) -> None:
        app.event("link_shared")(self.on_link_shared)

    def on_link_shared(self, event: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        channel, ts, links = event.get("channel"), event.get("message_ts"), event.get("links")
        if event.get("source") == "composer" or channel == "COMPOSER":
            return  # a message being typed: its channel, and so whether it wants previews, is not known yet
        urls = [link.get("url") for link in links] if isinstance(links, list) and all(isinstance(link, dict) for link in links) else None
        if not (isinstance(channel, str) and isinstance(ts, str) and urls and all(isinstance(url, str) for url in urls)):
            log.warning("a link_shared event without its channel, message_ts or links; nothing to preview")
            return
        self.later(self.preview, team_of(context), channel, ts, [url[:_URL_CHARS] for url in urls], client)

    def preview(self, team: Team, channel: str, ts: str, urls: list[str], client: WebClient) -> None:
        try:
            self._preview(team, channel, ts, urls, client)
        except StoreError as exc:
            log.warning("no link previews in %s: %s", channel, exc)

    def _preview(self, team: Team, channel: str, ts: str, urls: list[str], client: WebClient) -> None:
        db = self.runtime.db
        if not previews_on(db, team, channel):
            return
        host, known = host_of(self.runtime), followed(self.runtime, team)
        first_url: dict[PR, str] = {}
        for url in urls:
            for pr in linked_prs(url, host, known).prs:
                first_url.setdefault(pr, url)
        now = time.time()
        claimed = claim_previews(db, team, channel, list(first_url)[:MAX_PREVIEWS], now)
        unfurls, unshown = {}, []
        for repo, number in claimed:
            found = find_pr(self.runtime, repo, number)
            if found is None:
                unshown.append((repo, number))
            else:
                unfurls[first_url[repo, number]] = preview_unfurl(preview_of(self.runtime, found))
        if unfurls:
            try:
                client.chat_unfurl(channel=channel, ts=ts, unfurls=unfurls)
            except SlackApiError as exc:
                log.warning("Slack refused the previews in %s: %s", channel, exc.response.get("error") or exc.response.status_code)
                unshown = claimed
        # A PR not shown may be previewed the next time it is linked (once stored, or once Slack is back).
        release_previews(db, team, channel, unshown, now)
