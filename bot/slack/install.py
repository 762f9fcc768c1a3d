"""Installing the app in many workspaces: bolt's OAuth flow, with its installations and states kept in our store.

bolt's OAuthSettings serve the Add to Slack page (/slack/install) and Slack's redirect back
(/slack/oauth_redirect): the page sets a cookie holding a fresh state, and the redirect is taken only with
that state, from that browser, once and before it expires; the code is then exchanged with oauth.v2.access
through our own Slack client, so PRDIGEST_SLACK_API_URL points that call (and the authorize page) at another
Slack too. The installation lands in store.tables.installations through slack_sdk's InstallationStore
interface, and bolt's authorize finds each request's token there, rotating it when the app rotates tokens.
"""
from __future__ import annotations

import logging
import secrets
import time
from logging import Logger
from typing import Any
from urllib.parse import urljoin

from slack_bolt.authorization.authorize import InstallationStoreAuthorize
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore
from slack_sdk.oauth.token_rotation import TokenRotator

from bot.runtime import Runtime
from bot.slack.manifest import BOT_SCOPES
from store.tables.installations import (
    consume_state,
    find_installation,
    forget_user_token,
    issue_state,
    remove_installation,
    save_installation,
)
from store.tables.teams import Team

log = logging.getLogger(__name__)

INSTALL_PATH, REDIRECT_PATH = "/slack/install", "/slack/oauth_redirect"
# An install must come back from Slack within this long of its Add to Slack page.
STATE_SECONDS = 10 * 60
# A token that rotates is refreshed this long before it expires (bolt's default).
ROTATE_MINUTES = 120


def authorize_url(api_url: str) -> str:
    """Slack's authorize page, beside its Web API: https://slack.com/oauth/v2/authorize for https://slack.com/api/."""
    return urljoin(api_url if api_url.endswith("/") else api_url + "/", "../oauth/v2/authorize")


def oauth_settings(runtime: Runtime, client: WebClient) -> tuple[OAuthSettings, InstallationStoreAuthorize]:
    """bolt's settings for installing the app, and the authorize that finds each request's token; both keep
    what they write in the store, and call Slack through `client`."""
    settings = runtime.settings
    assert settings.slack_client_id and settings.slack_client_secret, "OAuth is on only with both"
    installations = StoreInstallations(runtime)
    oauth = OAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret,
        scopes=list(BOT_SCOPES),  # manifest.yml's
        user_scopes=[],
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        authorization_url=authorize_url(settings.slack_api_url),
        installation_store=installations,
        installation_store_bot_only=False,
        token_rotation_expiration_minutes=ROTATE_MINUTES,
        state_store=StoreStates(runtime, STATE_SECONDS),
        state_expiration_seconds=STATE_SECONDS,
        logger=log,
    )
    authorize = InstallationStoreAuthorize(
        logger=log,
        installation_store=installations,
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret,
        token_rotation_expiration_minutes=ROTATE_MINUTES,
        # auth.test of a token once, not at every request; an uninstalled team's token is no longer found first.
        cache_enabled=True,
        client=client,  # token rotation calls oauth.v2.access where the other calls go
    )
    return oauth, authorize


def rotator(runtime: Runtime, client: WebClient) -> TokenRotator | None:
    settings = runtime.settings
    if not (settings.slack_client_id and settings.slack_client_secret):
        return None
    return TokenRotator(client_id=settings.slack_client_id, client_secret=settings.slack_client_secret, client=client)


def team_of_installation(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> Team:
    """The team an installation is kept under: an organisation-wide one belongs to its organisation alone."""
    return Team.of(None if is_enterprise_install else team_id, enterprise_id)


class StoreInstallations(InstallationStore):
    """slack_sdk's InstallationStore over store.tables.installations: one installation per team, the latest."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @property
    def logger(self) -> Logger:
        return log

    def save(self, installation: Installation) -> None:
        team = team_of_installation(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        fields = {
            "app_id": installation.app_id, "enterprise_name": installation.enterprise_name,
            "team_name": installation.team_name, "is_enterprise_install": int(installation.is_enterprise_install),
            "bot_token": installation.bot_token, "bot_id": installation.bot_id, "bot_user_id": installation.bot_user_id,
            "bot_scopes": ",".join(installation.bot_scopes or []), "bot_refresh_token": installation.bot_refresh_token,
            "bot_token_expires_at": installation.bot_token_expires_at, "installer": installation.user_id,
            "user_token": installation.user_token, "user_scopes": ",".join(installation.user_scopes or []),
            "user_refresh_token": installation.user_refresh_token,
            "user_token_expires_at": installation.user_token_expires_at, "token_type": installation.token_type,
            "installed_at": installation.installed_at,
        }
        if save_installation(self.runtime.db, team, fields):
            log.info("installed in workspace %s (%s)", team, installation.team_name or "unnamed")

    def save_bot(self, bot: Bot) -> None:
        found = self._find(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        if found is None:
            return  # uninstalled meanwhile: a rotated token must not bring it back
        found.bot_token, found.bot_refresh_token = bot.bot_token, bot.bot_refresh_token
        found.bot_token_expires_at = bot.bot_token_expires_at
        self.save(found)

    def find_installation(self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
                          is_enterprise_install: bool | None = False) -> Installation | None:
        found = self._find(enterprise_id, team_id, is_enterprise_install)
        if found is None or (user_id is not None and found.user_id != user_id):
            return None
        return found

    def find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                 is_enterprise_install: bool | None = False) -> Bot | None:
        found = self._find(enterprise_id, team_id, is_enterprise_install)
        return found.to_bot() if found is not None and found.bot_token else None

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self._remove(Team.of(team_id, enterprise_id))

    def delete_installation(self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None) -> None:
        team = Team.of(team_id, enterprise_id)
        if user_id is None:
            self._remove(team)
        else:
            forget_user_token(self.runtime.db, team, user_id)

    def _remove(self, team: Team) -> None:
        if remove_installation(self.runtime.db, team):
            log.info("uninstalled from workspace %s: nothing more is posted there; its history is kept", team)

    def _find(self, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> Installation | None:
        row = find_installation(self.runtime.db, team_of_installation(enterprise_id, team_id, is_enterprise_install))
        return None if row is None else _installation(row)


def _installation(row: dict[str, Any]) -> Installation:
    return Installation(
        app_id=row["app_id"], enterprise_id=row["enterprise_id"] or None, enterprise_name=row["enterprise_name"],
        team_id=row["team_id"] or None, team_name=row["team_name"], bot_token=row["bot_token"], bot_id=row["bot_id"],
        bot_user_id=row["bot_user_id"], bot_scopes=row["bot_scopes"] or "", bot_refresh_token=row["bot_refresh_token"],
        bot_token_expires_at=row["bot_token_expires_at"], user_id=row["installer"], user_token=row["user_token"],
        user_scopes=row["user_scopes"] or "", user_refresh_token=row["user_refresh_token"],
        user_token_expires_at=row["user_token_expires_at"], is_enterprise_install=bool(row["is_enterprise_install"]),
        token_type=row["token_type"], installed_at=row["installed_at"],
    )


class StoreStates(OAuthStateStore):
    """slack_sdk's OAuthStateStore over store.tables.installations: random states, each taken once."""

    def __init__(self, runtime: Runtime, expiration_seconds: int) -> None:
        self.runtime = runtime
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> Logger:
        return log

    def issue(self, *args: Any, **kwargs: Any) -> str:
        state, now = secrets.token_urlsafe(24), time.time()
        issue_state(self.runtime.db, state, now + self.expiration_seconds, now)
        return state

    def consume(self, state: str) -> bool:
        return isinstance(state, str) and consume_state(self.runtime.db, state, time.time())
