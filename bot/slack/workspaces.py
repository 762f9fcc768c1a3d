"""Which workspaces the bot posts to, and with which bot token: SLACK_BOT_TOKEN's one workspace, or each
workspace that installed the app (its token rotated when it is about to expire).

A single-workspace store learns its workspace at the first start with a bot token (auth.test): the rows it
holds of no workspace become that workspace's (store.tables.teams.claim_home).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby

from slack_sdk import WebClient
from slack_sdk.errors import SlackTokenRotationError

from bot.runtime import Runtime
from bot.slack.install import ROTATE_MINUTES, StoreInstallations, rotator
from store.tables.subscriptions import Subscription
from store.tables.teams import Team, claim_home

log = logging.getLogger(__name__)


class Workspaces:
    """The Slack client that posts in a team's workspace; None for a team the bot may not post in."""

    def client(self, team: Team) -> WebClient | None:
        raise NotImplementedError


class OneWorkspace(Workspaces):
    """The workspace of SLACK_BOT_TOKEN: the rows of any other (a store that once served several) are left alone."""

    def __init__(self, team: Team, client: WebClient) -> None:
        self.team = team
        self.team_client = client

    def client(self, team: Team) -> WebClient | None:
        return self.team_client if team == self.team else None


class Installed(Workspaces):
    """The workspaces that installed the app, each with its own bot token; one that uninstalled has none."""

    def __init__(self, runtime: Runtime, make_client: Callable[[str | None], WebClient]) -> None:
        self.runtime = runtime
        self.make_client = make_client
        self.installations = StoreInstallations(runtime)
        self.rotator = rotator(runtime, make_client(None))

    def client(self, team: Team) -> WebClient | None:
        installation = self.installations.find_installation(enterprise_id=team.enterprise_id or None, team_id=team.team_id or None)
        if installation is None or not installation.bot_token:
            return None
        if installation.bot_refresh_token and self.rotator is not None:
            try:
                rotated = self.rotator.perform_token_rotation(installation=installation, minutes_before_expiration=ROTATE_MINUTES)
            except SlackTokenRotationError as exc:
                log.warning("could not refresh the bot token of workspace %s; nothing is posted there until it is: %s", team, exc)
                return None
            if rotated is not None:
                self.installations.save(rotated)
                installation = rotated
        return self.make_client(installation.bot_token)


def each_workspace(workspaces: Workspaces, subs: Sequence[Subscription]) -> Iterator[tuple[WebClient, list[Subscription]]]:
    """The subscriptions (a workspace's together, as all_subscriptions gives them) of each workspace the bot may
    post in, with that workspace's client. Those of a workspace it may not post in (uninstalled, or not the one of
    SLACK_BOT_TOKEN) are skipped, and kept: they go on if the workspace installs the app again."""
    for team, mine in groupby(subs, key=lambda sub: sub.team):
        client = workspaces.client(team)
        if client is not None:
            yield client, list(mine)


def one_workspace(runtime: Runtime, client: WebClient) -> OneWorkspace:
    """SLACK_BOT_TOKEN's workspace, read with auth.test; the store's rows of no workspace become its rows."""
    answer = client.auth_test()
    team = Team.of(answer.get("team_id"), answer.get("enterprise_id"))
    home, moved = claim_home(runtime.db, team)
    if home != team:
        log.warning("this store's rows belong to workspace %s, and SLACK_BOT_TOKEN is of workspace %s: "
                    "the bot serves %s with none of them", home, team, team)
    elif moved:
        log.info("the store's %d rows of no workspace are now workspace %s's", moved, team)
    return OneWorkspace(team, client)
