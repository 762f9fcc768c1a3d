"""Posting a day's report to a channel as a thread, exactly once, within Slack's rate limits."""
from __future__ import annotations

import logging
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any, Callable, Sequence

from slack_sdk import WebClient
from sqlite_utils import Database

from bot.config import Settings
from bot.ingest import describe, github_client
from bot.runtime import Runtime
from bot.slack_render import Message, daily_report_messages
from bot.summarize import summarize_ingested
from store.ingest import ingest_repo, plan_window
from store.posts import EMPTY, DailyPost, get_post, plan_post, record_done, record_parent, record_reply
from store.reports import DailyReport, load_report
from store.subscriptions import get_subscription

log = logging.getLogger(__name__)

# chat.postMessage allows about one message a second per channel.
PACE_SECONDS = 1.0


class Pacer:
    """Spaces messages to one channel at least `interval` seconds apart."""

    def __init__(self, interval: float = PACE_SECONDS) -> None:
        self.interval = interval
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, channel: str) -> None:
        with self._lock:  # reserve the channel's next slot; sleep outside so other channels go on
            now = time.monotonic()
            slot = max(now, self._last.get(channel, float("-inf")) + self.interval)
            self._last[channel] = slot
        time.sleep(slot - now)


def channel_report(db: Database, settings: Settings, repo: str, day: date, areas: Sequence[str] = ()) -> DailyReport:
    """The day's report as a channel sees it: only PRs in one of `areas`, when it names any."""
    report = load_report(db, repo, day, settings.timezone)
    if not areas:
        return report
    return replace(report, prs=[pr for pr in report.prs if set(pr.areas) & set(areas)])


def report_messages(report: DailyReport, areas: Sequence[str] = ()) -> list[Message]:
    """The parent and its replies; nothing at all for a day without PRs (a channel is not told daily that nothing happened)."""
    if not report.prs:
        return []
    return daily_report_messages(report, scope=f"in {', '.join(areas)}" if areas else None)


@dataclass
class Outcome:
    post: DailyPost | None
    sent: int  # messages sent by this call

    def describe(self) -> str:
        post = self.post
        if post is None:
            return "another poster is on it; nothing sent"
        where = f"{post.channel} for {post.date.isoformat()}"
        if post.state == EMPTY:
            return f"nothing merged on {post.date.isoformat()} for {post.channel}; nothing posted"
        if not self.sent:
            return f"already posted to {where}; nothing sent"
        return f"posted {self.sent} message(s) to {where} (thread {post.parent_ts}, {post.replies_sent} replies)"


class DailyPoster:
    """Posts the report of a day to a channel: the parent, then every reply in its thread.

    The planned messages and each sent one are recorded in the store, so that a
    second run posts nothing and a run after a crash continues the same thread.
    """

    def __init__(self, client: WebClient, db: Database, settings: Settings, pacer: Pacer | None = None) -> None:
        self.client = client
        self.db = db
        self.settings = settings
        self.pacer = pacer or Pacer()

    def post(self, channel: str, repo: str, day: date, areas: Sequence[str] = ()) -> Outcome:
        post = get_post(self.db, channel, repo, day)
        if post is None:
            messages = report_messages(channel_report(self.db, self.settings, repo, day, areas), areas)
            try:
                post = plan_post(self.db, channel, repo, day, [asdict(message) for message in messages])
            except sqlite3.IntegrityError:
                return Outcome(None, 0)  # planned by another process between our read and write
        sent = 0
        if post.parent_ts is None and not post.finished:
            record_parent(self.db, post, self._send(channel, post.messages[0]))
            sent += 1
        for reply in post.replies[post.replies_sent:]:
            self._send(channel, reply, thread_ts=post.parent_ts)
            record_reply(self.db, post)
            sent += 1
        if not post.finished:
            record_done(self.db, post)
            log.info("daily report of %s for %s posted to %s", repo, day, channel)
        return Outcome(post, sent)

    def _send(self, channel: str, message: dict[str, Any], thread_ts: str | None = None) -> str:
        self.pacer.wait(channel)
        response = self.client.chat_postMessage(
            channel=channel,
            text=message["text"],
            blocks=message["blocks"],
            thread_ts=thread_ts,
            unfurl_links=False,
            unfurl_media=False,
        )
        return response["ts"]


def repo_ingester(runtime: Runtime) -> Callable[[str], None] | None:
    """Ingest one repository from where the last run stopped, before its reports go out.

    None unless PRDIGEST_REPOS was set: a store filled by `prdigest import` is posted as it is.
    """
    if not runtime.settings.repos_configured:
        return None

    def ingest(repo: str) -> None:
        settings = runtime.settings
        with github_client(settings) as client:
            window = plan_window(runtime.db, repo, settings.timezone, None, None, runtime.now())
            before = client.requests
            done = ingest_repo(runtime.db, client, repo, window)
            log.info("%s", describe(done, settings.timezone, client.requests - before))
            summarized = summarize_ingested(runtime.db, settings, repo, window.start, window.end, client, runtime.llm)
            if summarized and summarized.calls:
                log.info("%s: %s", repo, summarized.describe())

    return ingest


def channel_areas(db: Database, channel: str, repo: str) -> list[str]:
    """The areas the channel's subscription filters on (none: the whole report)."""
    sub = get_subscription(db, channel, repo)
    return list(sub.areas) if sub else []
