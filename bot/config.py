"""Settings from the environment: every variable prdigest reads is named here."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from store.db import BUSY_TIMEOUT_SECONDS
from store.subscription.logins import is_login

DEFAULT_REPO = "vllm-project/vllm"
DEFAULT_TIMEZONE = "America/Los_Angeles"  # vLLM's reports are written in Pacific time
GITHUB_MAX_WAIT_SECONDS = 900  # a GitHub rate limit may be waited out this long before ingest gives up
LLM_TIMEOUT_SECONDS = 120  # per model call, before the client's own retries
# Every prompt fits PRDIGEST_SUMMARY_TOKENS, and below this not even the instructions with a PR's framing
# and a repair turn do (tests/test_prompt_budget.py holds the prompts to it).
SMALLEST_SUMMARY_TOKENS = 1000

# Every environment variable prdigest reads; Settings.from_env reads no other.
VARIABLES = (
    "PRDIGEST_DB", "PRDIGEST_TIMEZONE", "PRDIGEST_REPOS", "PRDIGEST_GITHUB_API_URL", "GITHUB_TOKEN",
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "PRDIGEST_MODEL", "PRDIGEST_SUMMARY_TOKENS",
    "PRDIGEST_LLM_CONCURRENCY", "PRDIGEST_LLM_TIMEOUT", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET",
    "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "PRDIGEST_SLACK_API_URL", "PRDIGEST_POLL_MINUTES", "PRDIGEST_GITHUB_MAX_WAIT",
    "PRDIGEST_BUSY_TIMEOUT", "PRDIGEST_POST_LEASE", "PRDIGEST_POST_PACE", "PRDIGEST_SUMMARY_MAX_FAILURES",
    "PRDIGEST_AREAS", "PRDIGEST_VOCABULARY", "PRDIGEST_BOTS", "PRDIGEST_LOG_FORMAT", "PRDIGEST_HEALTH_PORT", "XDG_DATA_HOME",
)
LOG_FORMATS = ("text", "json")  # text for a person, one JSON object a line for a log collector
# The setting each variable gives (XDG_DATA_HOME gives none of its own: it places PRDIGEST_DB's default).
_FIELD_OF = {
    "PRDIGEST_DB": "db_path", "PRDIGEST_TIMEZONE": "timezone", "PRDIGEST_REPOS": "repos",
    "PRDIGEST_GITHUB_API_URL": "github_api_url", "GITHUB_TOKEN": "github_token", "OPENAI_API_KEY": "openai_api_key",
    "OPENAI_BASE_URL": "openai_base_url", "PRDIGEST_MODEL": "model", "PRDIGEST_SUMMARY_TOKENS": "summary_tokens",
    "PRDIGEST_LLM_CONCURRENCY": "llm_concurrency", "PRDIGEST_LLM_TIMEOUT": "llm_timeout",
    "SLACK_BOT_TOKEN": "slack_bot_token", "SLACK_APP_TOKEN": "slack_app_token",
    "SLACK_SIGNING_SECRET": "slack_signing_secret", "SLACK_CLIENT_ID": "slack_client_id",
    "SLACK_CLIENT_SECRET": "slack_client_secret",
    "PRDIGEST_SLACK_API_URL": "slack_api_url", "PRDIGEST_POLL_MINUTES": "poll_minutes",
    "PRDIGEST_GITHUB_MAX_WAIT": "github_max_wait", "PRDIGEST_BUSY_TIMEOUT": "busy_timeout",
    "PRDIGEST_POST_LEASE": "post_lease", "PRDIGEST_POST_PACE": "post_pace",
    "PRDIGEST_SUMMARY_MAX_FAILURES": "summary_max_failures", "PRDIGEST_AREAS": "areas_file", "PRDIGEST_BOTS": "bots",
    "PRDIGEST_LOG_FORMAT": "log_format", "PRDIGEST_HEALTH_PORT": "health_port",
}
SECRET_VARIABLES = ("GITHUB_TOKEN", "OPENAI_API_KEY", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET",
                    "SLACK_CLIENT_SECRET")
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class ConfigError(ValueError):
    """A setting has a bad value; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    db_path: Path
    timezone: ZoneInfo
    repos: tuple[str, ...]
    github_api_url: str
    github_token: str | None
    openai_api_key: str | None
    openai_base_url: str | None
    model: str | None
    summary_tokens: int
    llm_concurrency: int
    slack_bot_token: str | None
    slack_app_token: str | None
    slack_signing_secret: str | None
    slack_api_url: str
    poll_minutes: int
    github_max_wait: int = GITHUB_MAX_WAIT_SECONDS
    llm_timeout: int = LLM_TIMEOUT_SECONDS
    summary_max_failures: int = 3  # failed attempts after which only --force summarizes a PR again
    # PRDIGEST_REPOS, GITHUB_TOKEN or PRDIGEST_GITHUB_API_URL was set: commands that read the store may ask GitHub too
    github_configured: bool = False
    busy_timeout: float = BUSY_TIMEOUT_SECONDS  # seconds a writer waits for another process's write to finish
    post_lease: float = 30.0  # seconds a daily post's claim outlives its holder's last sign of life
    post_pace: float = 1.0  # seconds between messages to one channel (Slack allows about one a second)
    areas_file: Path | None = None  # areas laid over the shipped store/areas.toml (per-repository areas)
    vocabulary_file: Path | None = None  # words laid over the shipped lexicon, store/understanding/vocabulary.toml
    bots: frozenset[str] = frozenset()  # lowercase GitHub logins that `-bots` leaves out, besides every *[bot]
    slack_client_secret: str | None = None  # the app's OAuth client secret, for installing it in workspaces
    slack_client_id: str | None = None  # the app's OAuth client ID, likewise
    log_format: str = LOG_FORMATS[0]
    health_port: int | None = None  # `serve --health-port`'s default: /healthz and /readyz on a port of their own

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every configured credential: masked by value in whatever prdigest stores, logs, posts or prints."""
        values = (getattr(self, _FIELD_OF[name]) for name in SECRET_VARIABLES)
        return tuple(value for value in values if value)

    @property
    def installable(self) -> bool:
        """Whether workspaces install the app through its Add to Slack page (OAuth), rather than it serving the one
        workspace of SLACK_BOT_TOKEN."""
        return bool(self.slack_client_id and self.slack_client_secret and not self.slack_bot_token)

    @property
    def ingests(self) -> bool:
        """Whether prdigest fetches from GitHub on its own: `serve` polls, `post-daily` ingests before it posts, and
        a link preview fetches a PR the store lacks. PRDIGEST_POLL_MINUTES=0 turns all three off."""
        return self.poll_minutes > 0

    @property
    def default_repo(self) -> str:
        return self.repos[0]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        get = lambda name: (env.get(name) or "").strip() or None
        return cls(
            db_path=Path(get("PRDIGEST_DB") or default_db_path(env)).expanduser(),
            timezone=_zone(get("PRDIGEST_TIMEZONE") or DEFAULT_TIMEZONE),
            repos=parse_repos(get("PRDIGEST_REPOS") or DEFAULT_REPO, "PRDIGEST_REPOS"),
            github_api_url=(get("PRDIGEST_GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            github_token=get("GITHUB_TOKEN"),
            openai_api_key=get("OPENAI_API_KEY"),
            openai_base_url=get("OPENAI_BASE_URL"),
            model=get("PRDIGEST_MODEL"),
            summary_tokens=_positive_int(env, "PRDIGEST_SUMMARY_TOKENS", 6000, least=SMALLEST_SUMMARY_TOKENS),
            llm_concurrency=_positive_int(env, "PRDIGEST_LLM_CONCURRENCY", 4),
            slack_bot_token=get("SLACK_BOT_TOKEN"),
            slack_app_token=get("SLACK_APP_TOKEN"),
            slack_signing_secret=get("SLACK_SIGNING_SECRET"),
            slack_api_url=get("PRDIGEST_SLACK_API_URL") or "https://slack.com/api/",
            poll_minutes=_positive_int(env, "PRDIGEST_POLL_MINUTES", 10, least=0),
            github_max_wait=_positive_int(env, "PRDIGEST_GITHUB_MAX_WAIT", cls.github_max_wait),
            llm_timeout=_positive_int(env, "PRDIGEST_LLM_TIMEOUT", cls.llm_timeout),
            summary_max_failures=_positive_int(env, "PRDIGEST_SUMMARY_MAX_FAILURES", cls.summary_max_failures),
            github_configured=any(get(name) for name in ("PRDIGEST_REPOS", "GITHUB_TOKEN", "PRDIGEST_GITHUB_API_URL")),
            busy_timeout=_seconds(env, "PRDIGEST_BUSY_TIMEOUT", cls.busy_timeout),
            post_lease=_seconds(env, "PRDIGEST_POST_LEASE", cls.post_lease, least=1.0),
            post_pace=_seconds(env, "PRDIGEST_POST_PACE", cls.post_pace, least=0.0),
            areas_file=Path(areas).expanduser() if (areas := get("PRDIGEST_AREAS")) else None,
            vocabulary_file=Path(words).expanduser() if (words := get("PRDIGEST_VOCABULARY")) else None,
            bots=parse_logins(get("PRDIGEST_BOTS") or "", "PRDIGEST_BOTS"),
            slack_client_secret=get("SLACK_CLIENT_SECRET"),
            slack_client_id=get("SLACK_CLIENT_ID"),
            log_format=_choice(env, "PRDIGEST_LOG_FORMAT", LOG_FORMATS),
            health_port=_port(env, "PRDIGEST_HEALTH_PORT"),
        )

    def in_effect(self, env: Mapping[str, str] | None = None) -> list[tuple[str, str, bool]]:
        """Every variable with the value in effect, as text, and whether the environment gave it (else the
        default did; `--db` replaces PRDIGEST_DB's value). A secret's value is never given: only whether it is set."""
        env = os.environ if env is None else env
        shown = []
        for name in VARIABLES:
            given = bool((env.get(name) or "").strip())
            value = getattr(self, _FIELD_OF[name]) if name in _FIELD_OF else env.get(name)
            if name in SECRET_VARIABLES:
                text = "set" if value else "unset"
            elif isinstance(value, ZoneInfo):
                text = value.key
            elif isinstance(value, tuple | frozenset):
                text = ",".join(sorted(value) if isinstance(value, frozenset) else value) or "none"
            else:
                text = "unset" if value is None else str(value)
            shown.append((name, text, given))
        return shown

    def with_db(self, path: str | Path | None) -> Settings:
        if path is None:
            return self
        return replace(self, db_path=Path(path).expanduser())


def default_db_path(env: Mapping[str, str]) -> Path:
    """A file in the user's data directory (XDG on Linux)."""
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "prdigest" / "prdigest.db"


def parse_repos(text: str, source: str) -> tuple[str, ...]:
    repos = tuple(part.strip() for part in text.split(",") if part.strip())
    bad = [repo for repo in repos if not _REPO.match(repo)]
    if bad or not repos:
        raise ConfigError(f"{source}: expected OWNER/NAME[,OWNER/NAME...], got {text!r}")
    return repos


def parse_logins(text: str, source: str) -> frozenset[str]:
    """Comma-separated GitHub logins, lowercase (GitHub compares them without case)."""
    logins = [part.strip().removeprefix("@") for part in text.split(",") if part.strip()]
    bad = [login for login in logins if not is_login(login)]
    if bad:
        raise ConfigError(f"{source}: expected GitHub logins separated by commas, got {bad[0]!r}")
    return frozenset(login.lower() for login in logins)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"PRDIGEST_TIMEZONE: unknown timezone {name!r}") from None


def _positive_int(env: Mapping[str, str], name: str, default: int, least: int = 1) -> int:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or int(raw) < least:
        expected = "a positive whole number" if least == 1 else f"a whole number of at least {least:,}"
        raise ConfigError(f"{name}: expected {expected}, got {raw!r}")
    return int(raw)


def _port(env: Mapping[str, str], name: str) -> int | None:
    """A TCP port, 1 to 65535; None when unset."""
    if not (env.get(name) or "").strip():
        return None
    port = _positive_int(env, name, 0)
    if port > 65535:
        raise ConfigError(f"{name}: expected a port from 1 to 65535, got {port}")
    return port


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (the first when unset), in any case."""
    raw = (env.get(name) or "").strip()
    if raw.lower() in choices:
        return raw.lower()
    if not raw:
        return choices[0]
    raise ConfigError(f"{name}: expected {' or '.join(choices)}, got {raw!r}")


def _seconds(env: Mapping[str, str], name: str, default: float, least: float = 0.1) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= least or value == float("inf"):
        raise ConfigError(f"{name}: expected a number of seconds of at least {least:g}, got {raw!r}")
    return value
