"""The App Home's listeners: the tab opened, and each control on it (link a login, add, change the cadence or
the areas of, or remove a personal subscription). Each change is one block_actions handler that writes the
store and publishes the tab again (views.publish); a change that cannot be made says why at the top."""
from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_sdk import WebClient

from bot.answers.commands import help_text
from bot.answers.scope import followed
from bot.messages.mrkdwn import escape
from bot.slack.home_view import (
    ADD_ACTION,
    AREAS_ACTION,
    CADENCE_ACTION,
    GITHUB_ACTION,
    REMOVE_ACTION,
    ROW,
    SEP,
    Home,
    home_view,
)
from bot.slack.listening import Listening, team_of
from store.days import local_day
from store.db import StoreError, StoreFull, StoreReadOnly, write_transaction
from store.report.day import DailyReport, load_report
from store.subscription.cadence import CADENCES, MY_PRS, Cadence
from store.subscription.filter import AUTHOR, EVERYTHING
from store.subscription.logins import is_login
from store.tables.people import github_login, link_github
from store.tables.prs import latest_merge
from store.tables.subscriptions import (
    SLOTS,
    Subscription,
    channel_subscriptions,
    get_subscription,
    is_user,
    team_subscriptions,
)
from store.tables.subscriptions import subscribe as store_subscribe
from store.tables.subscriptions import unsubscribe as store_unsubscribe
from store.tables.teams import Team
from store.understanding.areas import area_names

log = logging.getLogger(__name__)

# A control's change: made for the person (a user ID) of the workspace (the Team) that used it.
Change = Callable[[Team, str], None]


class NotMade(Exception):
    """A change that cannot be made; the message says why, at the top of the tab."""


@dataclass(frozen=True)
class Target:
    """The subscription a control belongs to: its repository and slot."""

    repo: str
    slot: str


class HomeTab(Listening):
    def register(self, app: App) -> None:
        app.event("app_home_opened")(self.on_opened)
        app.action(GITHUB_ACTION)(self.on_github)
        app.action(ADD_ACTION)(self.on_add)
        app.action(CADENCE_ACTION)(self.on_cadence)
        app.action(AREAS_ACTION)(self.on_areas)
        app.action(REMOVE_ACTION)(self.on_remove)

    # -- the tab

    def on_opened(self, event: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        if event.get("tab") != "home":
            return
        if not isinstance(event.get("user"), str):
            log.warning("a Home tab opened by no user; nothing to publish")
            return
        self.later(self.publish, team_of(context), event["user"], client)

    def publish(self, team: Team, user: str, client: WebClient, notice: str | None = None) -> None:
        client.views_publish(user_id=user, view=home_view(self.home(team, user, notice)))

    def home(self, team: Team, user: str, notice: str | None = None) -> Home:
        db, settings = self.runtime.db, self.runtime.settings
        repos = settings.repos
        return Home(
            login=github_login(db, team, user),
            mine=channel_subscriptions(db, team, user),
            channels=[sub for sub in team_subscriptions(db, team) if not sub.personal],
            reports=[report for report in map(self._latest_report, repos) if report is not None],
            repos=repos, tz=settings.timezone, help=help_text(repos), notice=notice,
        )

    def _latest_report(self, repo: str) -> DailyReport | None:
        """The report of `repo`'s latest day with merges; None when it has none or it cannot be read."""
        db, tz = self.runtime.db, self.runtime.settings.timezone
        try:
            latest = latest_merge(db, repo)
            return None if latest is None else load_report(db, repo, local_day(latest, tz), tz)
        except Exception:  # the rest of the Home tab is still useful
            log.exception("could not read the latest report of %s for the Home tab", repo)
            return None

    # -- the controls: one handler each

    def on_github(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        self._changing(ack, body, action, client, context, lambda team, user: self.link(team, user, _text(action.get("value"))))

    def on_add(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        repo, _, name = _selected(action).rpartition(SEP)
        self._changing(ack, body, action, client, context, lambda team, user: self.add(team, user, repo, name))

    def on_cadence(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        target, name = _target(action.get("block_id")), _selected(action)
        self._changing(ack, body, action, client, context, lambda team, user: self.change_cadence(team, user, target, name))

    def on_areas(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        target, areas = _target(action.get("block_id")), _all_selected(action)
        self._changing(ack, body, action, client, context, lambda team, user: self.change_areas(team, user, target, areas))

    def on_remove(self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        repo, _, slot = _text(action.get("value")).rpartition(SEP)
        self._changing(ack, body, action, client, context, lambda team, user: self.remove(team, user, Target(repo, slot)))

    def _changing(
        self, ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext,
        change: Change,
    ) -> None:
        ack()
        user = (body.get("user") or {}).get("id") if isinstance(body.get("user"), dict) else None
        if not isinstance(user, str) or not is_user(user):
            log.warning("a Home tab action %.40r by no user; nothing changed", action.get("action_id"))
            return
        self.later(self._change, team_of(context), user, client, change)

    def _change(self, team: Team, user: str, client: WebClient, change: Change) -> None:
        notice = None
        try:
            change(team, user)
        except NotMade as exc:
            notice = str(exc)
        except (StoreReadOnly, StoreFull) as exc:  # not a moment's trouble: say what it is, as a command does
            notice = f"That was not changed: {escape(str(exc))}"
        except (StoreError, sqlite3.OperationalError) as exc:
            log.warning("a Home tab change by %s was not made: %s", user, exc)
            notice = "Sorry, the store is busy or unavailable right now, so that was not changed; try again in a minute."
        self.publish(team, user, client, notice)

    # -- what each control does

    def link(self, team: Team, user: str, login: str) -> None:
        login = login.strip().removeprefix("@")
        if not is_login(login):
            raise NotMade("That is not a GitHub login (letters, digits and hyphens): nothing was changed.")
        link_github(self.runtime.db, team, user, login)

    def add(self, team: Team, user: str, repo: str, name: str) -> None:
        if name not in CADENCES or repo not in followed(self.runtime, team):
            raise NotMade("That subscription cannot be added here; `/prdigest me subscribe` can.")
        existing = get_subscription(self.runtime.db, team, user, repo, Cadence(name).slot)
        rule = existing.filter if existing else EVERYTHING
        store_subscribe(self.runtime.db, team, user, repo, rule,
                        _moved(existing.cadence if existing else Cadence(), name), user, self.runtime.now())

    def change_cadence(self, team: Team, user: str, target: Target | None, name: str) -> None:
        db = self.runtime.db
        with write_transaction(db):
            sub = self._mine(team, user, target)
            if name not in CADENCES:
                raise NotMade("That cadence is not one prdigest knows.")
            if name == MY_PRS and sub.filter.has(AUTHOR):
                raise NotMade("My PRs are the PRs you wrote: take the `author:` terms out of its filter first.")
            cadence = _moved(sub.cadence, name)
            if cadence.slot != sub.slot:
                store_unsubscribe(db, team, user, sub.repo, sub.slot)
            store_subscribe(db, team, user, sub.repo, sub.filter, cadence, user, self.runtime.now())

    def change_areas(self, team: Team, user: str, target: Target | None, areas: list[str] | None) -> None:
        db = self.runtime.db
        with write_transaction(db):
            sub = self._mine(team, user, target)
            if areas is None or not set(areas) <= set(area_names(sub.repo)):
                raise NotMade("Those are not areas of that repository: nothing was changed.")
            store_subscribe(db, team, user, sub.repo, sub.filter.with_areas(areas, sub.repo), sub.cadence, user,
                            self.runtime.now())

    def remove(self, team: Team, user: str, target: Target) -> None:
        if target.slot in SLOTS:
            store_unsubscribe(self.runtime.db, team, user, target.repo, target.slot)

    def _mine(self, team: Team, user: str, target: Target | None) -> Subscription:
        sub = get_subscription(self.runtime.db, team, user, target.repo, target.slot) if target else None
        if sub is None:
            raise NotMade("That subscription is gone (removed meanwhile, perhaps from another window).")
        return sub


def _moved(cadence: Cadence, name: str) -> Cadence:
    """The cadence `name`, keeping the time and the day the subscription had."""
    return replace(cadence, name=name)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _target(block_id: object) -> Target | None:
    parts = _text(block_id).split(SEP)
    if len(parts) != 3 or parts[0] != ROW or parts[2] not in SLOTS:
        return None
    return Target(parts[1], parts[2])


def _selected(action: dict[str, Any]) -> str:
    chosen = action.get("selected_option")
    return _text(chosen.get("value")) if isinstance(chosen, dict) else ""


def _all_selected(action: dict[str, Any]) -> list[str] | None:
    """The values of a multiple select; None when the payload is not one."""
    chosen = action.get("selected_options")
    if not isinstance(chosen, list) or not all(isinstance(item, dict) for item in chosen):
        return None
    values = [item.get("value") for item in chosen]
    return [value for value in values if isinstance(value, str)] if all(isinstance(v, str) for v in values) else None
