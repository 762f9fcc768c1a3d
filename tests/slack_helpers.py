"""Helpers for the Slack tests: a runtime over the test store, PRs made to order, the fake Slack."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Iterator

import pytest

from bot.config import Settings
from bot.runtime import Runtime
from conftest import FIXTURES, LA
from store.importer import import_file
from store.model import PullRequest, Summary
from store.prs import save_prs
from servers.github_api import FakeGitHub
from servers.slack_api import FakeSlack
from pr_factory import REPO, make_pr as base_pr

LOUD_TITLE = "<!channel>"  # in report-2026-03-08.md: must reach Slack as inert text


def make_pr(number: int, merged_at: datetime, title: str | None = None, **fields) -> PullRequest:
    """A PR with a summary, as the Slack side shows them."""
    what = fields.pop("what", f"Change {number} makes the engine better in one specific way.")
    source = fields.pop("source", "imported")
    fields.setdefault("author", "ada-l")
    fields.setdefault("files", ["engine/core.py"])
    fields.setdefault("areas", ["core"])
    return base_pr(
        number,
        title or f"[Core] Change number {number}",
        merged_at=merged_at,
        merged_by="merge-bot",
        summary=Summary(what, "Impact.", "Risks.", "Insights.", source),
        **fields,
    )


def seed_day(db, day: date, count: int, start: int = 1000, **fields) -> list[PullRequest]:
    """`count` PRs merged on local day `day`, a few minutes apart from 08:00."""
    base = datetime.combine(day, time(8, 0), tzinfo=LA)
    prs = [make_pr(start + i, base + timedelta(minutes=5 * i), **fields) for i in range(count)]
    save_prs(db, prs)
    return prs


def import_fixtures(db) -> None:
    for name in ("report-2026-03-07.md", "report-2026-03-08.md"):
        import_file(db, FIXTURES / name, LA, REPO)


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    """A GitHub holding no PRs yet; with PRDIGEST_REPOS set, ingesting talks to it and nothing else."""
    with FakeGitHub({REPO: []}) as server:
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", server.url)
        yield server


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> Iterator[Runtime]:
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    rt = Runtime(Settings.from_env())
    yield rt
    rt.close()


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server
