"""How many GitHub requests ingest spends, REST (no token) against GraphQL (token), for a busy day.

Runs the real client and store against the fake GitHub of the tests on 127.0.0.1:
    .venv/bin/python bench/ingest_requests.py [--prs 40]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers.github_api import FakeGitHub, FakePull, day_of_pulls  # noqa: E402

from store.db import open_db  # noqa: E402
from store.sources.github import GitHubClient  # noqa: E402
from store.sources.ingest import ingest_repo, plan_window  # noqa: E402

REPO = "vllm-project/vllm"
TZ = ZoneInfo("America/Los_Angeles")
DAY = date(2026, 3, 7)
TOKEN = "bench-token"


def scenarios(count: int) -> dict[str, dict[int, int]]:
    """PR index -> file count, for the PRs whose files take more than one page."""
    return {"every PR under 100 files": {}, "two big PRs (150 and 320 files)": {5: 150, count - 3: 320}}


def run(pulls: list[FakePull], graphql: bool) -> list[tuple[str, int, float]]:
    """Requests and seconds for: the day's first ingest, the same day again, a continuing run after 3 merges."""
    figures = []
    with FakeGitHub({REPO: pulls}, token=TOKEN) as github, tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "bench.db")
        with GitHubClient(github.url, TOKEN if graphql else None, max_wait=900) as client:
            def measure(label: str, since: date | None) -> None:
                before, started = client.requests, time.perf_counter()
                window = plan_window(db, REPO, TZ, since, DAY, datetime.now(UTC))
                ingest_repo(db, client, REPO, window)
                figures.append((label, client.requests - before, time.perf_counter() - started))

            measure("first ingest of the day", DAY)
            measure("same day again, nothing changed", DAY)
            last = max(pull.merged_at for pull in pulls if pull.merged_at)
            github.add(REPO, *(
                FakePull(90000 + k, f"[Bugfix] Late fix {k}", last + timedelta(minutes=k + 1), files=["vllm/config.py"])
                for k in range(3)
            ))
            measure("continuing run after 3 new merges", None)
        db.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=40, help="merged PRs in the day (default 40)")
    count = parser.parse_args().prs
    print(f"GitHub requests per ingest of a day with {count} merged PRs (and {count // 5} closed unmerged)")
    for name, big in scenarios(count).items():
        pulls = day_of_pulls(DAY, count, TZ, big=big, unmerged_every=5)
        print(f"\n{name}")
        print(f"  {'run':38} {'REST':>6} {'GraphQL':>8}   {'REST s':>7} {'GraphQL s':>9}")
        for (label, rest, rest_s), (_, gql, gql_s) in zip(run(pulls, False), run(pulls, True)):
            print(f"  {label:38} {rest:>6} {gql:>8}   {rest_s:>7.2f} {gql_s:>9.2f}")


if __name__ == "__main__":
    main()
