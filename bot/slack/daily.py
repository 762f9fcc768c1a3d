"""Posting a subscription's report (a day, the weekdays since the last one, a week) as a thread, exactly once,
within Slack's rate limits; to a channel, or to a person by direct message."""
from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

from slack_sdk import WebClient
from sqlite_utils import Database

from bot.config import Settings
from bot.ingest import describe, describe_releases, github_client
from bot.messages.blocks import Message, daily_report_messages, filter_scope
from bot.runtime import Runtime
from bot.slack.posted import ThreadReader, ambiguous, metadata
from store.db import StoreError
from store.report.day import DailyReport, load_report
from store.sources.ingest import ingest_repo, plan_window
from store.sources.releases import ingest_releases
from store.subscription.cadence import WEEKLY
from store.tables.people import dm_channel, remember_dm_channel
from store.tables.posts import (
    EMPTY,
    DailyPost,
    PostKey,
    begin_send,
    claim_post,
    last_covered,
    record_done,
    record_parent,
    record_replies,
    release,
    renew,
)
from store.tables.subscriptions import Subscription, chosen_by, is_user, report_key
from store.tables.teams import Team

log = logging.getLogger(__name__)

# chat.postMessage allows about one message a second per channel.
PACE_SECONDS = 1.0


class Pacer:
    """Spaces messages to one channel (of one workspace) at least `interval` seconds apart."""

    def __init__(self, interval: float = PACE_SECONDS) -> None:
        self.interval = interval
        self._last: dict[Hashable, float] = {}
        self._lock = threading.Lock()

    def wait(self, channel: Hashable) -> None:
        with self._lock:  # reserve the channel's next slot; sleep outside so other channels go on
            now = time.monotonic()
            slot = max(now, self._last.get(channel, float("-inf")) + self.interval)
            self._last[channel] = slot
        time.sleep(slot - now)


def subscription_report(db: Database, settings: Settings, sub: Subscription, last: date) -> DailyReport:
    """The subscription's report ending on `last`: the days its cadence covers, and the PRs its filter keeps."""
    first = sub.cadence.first_day(last, last_covered(db, report_key(sub, last)))
    report = load_report(db, sub.repo, first, settings.timezone, last=last)
    rule = chosen_by(db, sub)
    return replace(report, prs=rule.select(report.prs, settings.bots) if rule else [])


def report_messages(report: DailyReport, sub: Subscription) -> list[Message]:
    """The parent and its replies; nothing at all for days without PRs (nobody is told daily that nothing happened)."""
    if not report.prs:
        return []
    return daily_report_messages(report, scope=filter_scope(sub.filter), week=sub.cadence.name == WEEKLY)


@dataclass
class Outcome:
    key: PostKey
    post: DailyPost | None  # None: another process holds it
    sent: int  # messages sent by this call

    def describe(self) -> str:
        post, key = self.post, self.key
        span = f"the week ending {key.date.isoformat()}" if key.kind == WEEKLY else key.date.isoformat()
        where = f"{key.channel} for {span}"
        if post is None:
            return f"being posted to {where} by another process; nothing sent"
        if post.state == EMPTY:
            return f"nothing merged on {span} for {key.channel}; nothing posted"
        if not self.sent:
            return f"already posted to {where}; nothing sent"
        return f"posted {self.sent} message(s) to {where} (thread {post.parent_ts}, {post.replies_sent} replies)"


class ClaimLost(Exception):
    """Another process took the post over (this one stalled past its lease)."""


# A message whose answer was lost is looked for in the channel, then sent again, this many times in all.
SEND_ATTEMPTS = 3


class DailyPoster:
    """Posts the report of a day to a channel: the parent, then every reply in its thread.

    The planned messages and each sent one are recorded in the store, so that a
    second run posts nothing and a run after a crash continues the same thread.
    A claim in the store keeps two processes from posting the same report at once.
    """

    def __init__(self, client: WebClient, runtime: Runtime, pacer: Pacer | None = None, owner: str | None = None) -> None:
        self.client = client  # with the bot token of the workspace posted to
        self.runtime = runtime
        self.settings = runtime.settings
        self.pacer = pacer or Pacer(runtime.settings.post_pace)
        self.reader = ThreadReader(client)
        self.owner = owner or new_owner()

    @property
    def db(self) -> Database:
        return self.runtime.db

    def post(self, sub: Subscription, last: date) -> Outcome:
        """Post the subscription's report ending on `last`; planned, under the claim, from the store as it is."""

        def plan() -> list[dict[str, Any]]:
            report = subscription_report(self.db, self.settings, sub, last)
            return [asdict(message) for message in report_messages(report, sub)]

        return self.send(report_key(sub, last), plan)

    def room(self, team: Team, channel: str) -> str:
        """Where a post to the team's `channel` goes in Slack: the channel itself, or a person's direct messages,
        which Slack opens once (conversations.open gives the same channel every time)."""
        if not is_user(channel):
            return channel
        known = dm_channel(self.db, team, channel)
        if known:
            return known
        opened = self.client.conversations_open(users=channel)["channel"]["id"]
        remember_dm_channel(self.db, team, channel, opened)
        return opened

    def send(self, key: PostKey, plan: Callable[[], list[dict[str, Any]]]) -> Outcome:
        """Claim the post (planned with `plan` if it is new) and send what it still lacks."""
        post = claim_post(self.db, key, self.owner, plan, self.settings.post_lease, time.time())
        if post is None or post.finished:
            return Outcome(key, post, 0)
        return Outcome(key, post, self.deliver(post))

    def deliver(self, post: DailyPost) -> int:
        """Send the claimed post's missing parts, renewing the claim meanwhile; the number sent."""
        with Heartbeat(self.runtime, post):
            try:
                sent = self._post_thread(post, self.room(post.key.team, post.channel))
            except BaseException:
                release(self.db, post)
                raise
        record_done(self.db, post)
        log.info("post %s sent", post.key.text)
        return sent

    def _post_thread(self, post: DailyPost, room: str) -> int:
        if post.in_flight is not None:  # the last holder sent a part and died before recording it
            self._read_back(post, room)
        sent = 0
        if post.parent_ts is None:
            record_parent(self.db, post, self._deliver(post, 0, room))
            sent += 1
        while post.replies_sent < len(post.replies):
            part = post.replies_sent + 1
            self._deliver(post, part, room)
            record_replies(self.db, post, part)
            sent += 1
        return sent

    def _read_back(self, post: DailyPost, room: str) -> None:
        if post.parent_ts is None and post.sent_at is not None:
            ts = self.reader.find_parent(room, post.key.text, post.sent_at)
            if ts is None:
                return
            record_parent(self.db, post, ts)
        # begin_send notes sent_at with in_flight, and replies are sent only once the parent's ts is recorded.
        assert post.parent_ts is not None, "a part in flight has its parent found above, or recorded before it"
        parts = self.reader.reply_parts(room, post.parent_ts, post.key.text)
        # Replies go out one after another, so the thread holds a prefix of them.
        record_replies(self.db, post, max([post.replies_sent, *parts]))

    def _deliver(self, post: DailyPost, part: int, room: str) -> str:
        """Send one part and return its ts, reading the channel back instead of blindly sending twice."""
        attempt = 0
        while True:  # left by a ts or a raise: attempt SEND_ATTEMPTS raises when it fails
            attempt += 1
            self.pacer.wait((post.key.team, room))
            if not begin_send(self.db, post, part, self.settings.post_lease, time.time()):
                raise ClaimLost(f"the post to {post.channel} was taken over by another process")
            try:
                return self._send(post, part, room)
            except Exception as exc:
                if not ambiguous(exc) or attempt == SEND_ATTEMPTS:
                    raise
                log.warning("Slack's answer to part %d of the post to %s was lost (%s); reading it back", part,
                            post.channel, exc)
                found = self._find(post, part, room)
                if found is not None:
                    return found

    def _find(self, post: DailyPost, part: int, room: str) -> str | None:
        if part == 0:
            return self.reader.find_parent(room, post.key.text, post.sent_at or time.time())
        assert post.parent_ts is not None, "replies are sent only once the parent's ts is recorded"
        return self.reader.reply_parts(room, post.parent_ts, post.key.text).get(part)

    def _send(self, post: DailyPost, part: int, room: str) -> str:
        message = post.messages[part]
        response = self.client.chat_postMessage(
            channel=room,
            text=message["text"],
            blocks=message["blocks"],
            thread_ts=post.parent_ts if part else None,
            metadata=metadata(post.key.text, part),
            unfurl_links=False,
            unfurl_media=False,
        )
        return response["ts"]


def new_owner() -> str:
    """A name for a poster's claims, unique to it: which host and process, and which poster in it."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Heartbeat:
    """Renews the post's lease from a thread of its own while the poster waits on Slack (429s included)."""

    def __init__(self, runtime: Runtime, post: DailyPost) -> None:
        self.runtime = runtime
        self.post = post
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prdigest-lease", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        lease = self.runtime.settings.post_lease
        try:
            while not self._stop.wait(lease / 3):
                try:
                    if not renew(self.runtime.db, self.post, lease, time.time()):
                        return  # taken over; the poster finds out before its next send
                except (sqlite3.Error, StoreError) as exc:  # a busy store: try again at the next beat
                    log.warning("could not renew the claim on the post to %s: %s", self.post.channel, exc)
        finally:
            self.runtime.close()


def repo_ingester(runtime: Runtime) -> Callable[[str], None] | None:
    """Ingest one repository from where the last run stopped, before its reports go out.

    None when PRDIGEST_POLL_MINUTES is 0: a store filled by `prdigest import` is then posted as it is.
    """
    if not runtime.settings.ingests:
        return None

    def ingest(repo: str) -> None:
        from bot.model.summarize import summarize_ingested  # imports the model client: a second that posting alone never needs

        settings = runtime.settings
        with github_client(settings) as client:
            window = plan_window(runtime.db, repo, settings.timezone, None, None, runtime.now())
            before = client.requests
            done = ingest_repo(runtime.db, client, repo, window)
            log.info("%s", describe(done, settings.timezone, client.requests - before))
            summarized = summarize_ingested(runtime.db, settings, repo, window.start, window.end, client, runtime.llm)
            if summarized and summarized.calls:
                log.info("%s: %s", repo, summarized.describe())
            before = client.requests
            releases = ingest_releases(runtime.db, client, repo, window.start)
            log.info("%s", describe_releases(releases, client.requests - before))

    return ingest

