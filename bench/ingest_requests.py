"""How many GitHub requests ingest spends, REST (no token) against GraphQL (token), for a busy day,
and with --releases for releases: listing them, mapping one new release's range, fetching its PRs.

Runs the real client and store against the fake GitHub of the tests on 127.0.0.1:
    .venv/bin/python bench/ingest_requests.py [--prs 40]
    .venv/bin/python bench/ingest_requests.py --releases [--prs 450]
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

from servers.github_api import FakeGitHub, FakeHistory, FakePull, FakeRelease, day_of_pulls  # noqa: E402

from store.db import open_db  # noqa: E402
from store.sources.github import GitHubClient  # noqa: E402
from store.sources.ingest import ingest_repo, plan_window  # noqa: E402
from store.sources.releases import fetch_missing, ingest_releases  # noqa: E402
from store.tables.releases import range_numbers  # noqa: E402

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


def release_run(count: int, picks: int, graphql: bool) -> list[tuple[str, int]]:
    """Requests for: a poll with no new release, a patch release of `picks` cherry-picks, a minor release
    of `count` PRs, and the notes of that minor release when the store holds none of its PRs."""
    history, pulls = FakeHistory(REPO), []
    start = datetime(2026, 1, 5, tzinfo=UTC)

    def merge(number: int) -> None:
        pull = FakePull(number, f"[Core] Change {number}", start + timedelta(minutes=10 * len(pulls)),
                        files=["vllm/config.py", f"tests/test_{number % 7}.py"])
        pulls.append(pull)
        history.merge(pull)

    figures = []
    with FakeGitHub(token=TOKEN) as github, tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "bench.db")
        with GitHubClient(github.url, TOKEN if graphql else None, max_wait=900) as client:
            def measure(label: str, work) -> None:
                before = client.requests
                work()
                figures.append((label, client.requests - before))

            def release(tag: str, branch: str) -> None:
                github.tag(REPO, tag, history.head(branch))
                github.publish(REPO, FakeRelease(tag, start + timedelta(days=len(github.releases.get(REPO, [])) + 1)))

            for number in range(1, 31):
                merge(number)
            history.cut("releases/v0.9")
            release("v0.9.0", "releases/v0.9")
            ingest_releases(db, client, REPO, start)  # the first release maps its whole (short) history
            measure("poll, no new release", lambda: ingest_releases(db, client, REPO, start))
            for number in range(100, 100 + count):
                merge(number)
            for commit in history.main[-picks:]:
                history.cherry_pick("releases/v0.9", commit)
            release("v0.9.1", "releases/v0.9")
            measure(f"a patch release of {picks} cherry-picks", lambda: ingest_releases(db, client, REPO, start))
            history.cut("releases/v0.10")
            history.commit("Bump the version to 0.10.0", "releases/v0.10")
            release("v0.10.0", "releases/v0.10")
            measure(f"a minor release of {count} PRs", lambda: ingest_releases(db, client, REPO, start))
            github.add(REPO, *pulls)
            numbers = range_numbers(db, REPO, "v0.10.0")
            measure(f"release-notes fetching its {len(numbers)} PRs", lambda: fetch_missing(db, client, REPO, numbers))
        db.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, help="merged PRs in the day (default 40), or in the minor release (default 450)")
    parser.add_argument("--releases", action="store_true", help="count the requests of releases instead of a day's PRs")
    parser.add_argument("--picks", type=int, default=20, help="cherry-picks in the patch release (default 20)")
    options = parser.parse_args()
    if options.releases:
        count = options.prs or 450
        print(f"GitHub requests to read releases: a minor release of {count} PRs, a patch of {options.picks} cherry-picks")
        print(f"  {'run':44} {'REST':>6} {'GraphQL':>8}")
        for (label, rest), (_, gql) in zip(release_run(count, options.picks, False), release_run(count, options.picks, True)):
            print(f"  {label:44} {rest:>6} {gql:>8}")
        return
    count = options.prs or 40
    print(f"GitHub requests per ingest of a day with {count} merged PRs (and {count // 5} closed unmerged)")
    for name, big in scenarios(count).items():
        pulls = day_of_pulls(DAY, count, TZ, big=big, unmerged_every=5)
        print(f"\n{name}")
        print(f"  {'run':38} {'REST':>6} {'GraphQL':>8}   {'REST s':>7} {'GraphQL s':>9}")
        for (label, rest, rest_s), (_, gql, gql_s) in zip(run(pulls, False), run(pulls, True)):
            print(f"  {label:38} {rest:>6} {gql:>8}   {rest_s:>7.2f} {gql_s:>9.2f}")


if __name__ == "__main__":
    main()
