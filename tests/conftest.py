"""Shared test fixtures: an isolated environment, a store, and the CLI run in-process."""
from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.cli import main
from bot.config import VARIABLES
from store.db import open_db

# The Slack tests' fixtures (fake Slack and GitHub, a runtime), available to every test module.
pytest_plugins = ["slack_helpers"]

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
LA = ZoneInfo("America/Los_Angeles")



def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `processes` tests first, the rest in their usual order. They are the longest (most of their time spent
    waiting on their processes), so with `-n 2` they run beside the many short tests instead of ending the run."""
    items.sort(key=lambda item: item.get_closest_marker("processes") is None)


def seed_reports() -> list[Path]:
    """The real reports beside the project; the calling test skips when they are absent, and fails in CI
    (CI=true), where a skip would pass every test that needs them without running one."""
    reports = sorted(SEEDS.glob("*.md")) if SEEDS.is_dir() else []
    if not reports:
        missing = "../shared/seeds is not present" if not SEEDS.is_dir() else "../shared/seeds holds no reports"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"{missing}: CI runs the tests that read the real reports, so it needs them", pytrace=False)
        pytest.skip(missing)
    return reports


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Every test gets its own store and none of the developer's tokens, and reaches no GitHub on its own: a test
    that ingests brings a fake one (the `github` fixture turns polling back on)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRDIGEST_POLL_MINUTES", "0")
    db_path = tmp_path / "prdigest.db"
    monkeypatch.setenv("PRDIGEST_DB", str(db_path))
    return db_path


@pytest.fixture
def db(isolated_env: Path):
    database = open_db(isolated_env)
    yield database
    database.close()


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):
    """Run `prdigest ARGS...` in-process through the real entry point."""

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def hang_guard():
    """Fail a test that runs for minutes: the symptom of a regex backtracking on crafted text."""

    # Backtracking on crafted text takes minutes or more; a busy machine takes a few seconds at most.
    def stop(*_):
        raise TimeoutError("text rules took over 60s on one input")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
