"""Latency of questions through one `prdigest shell` session, on the synthetic stores of search_latency.py.

    python bench/shell_session.py [--sizes 1000,100000] [--order backfill] [--rounds 3]

Starts the real command, pipes it every question of search_latency's kinds (a
mixed session) and times the whole session, then times the same session with
no questions: the difference over the number of questions is the mean cost of
one question in a live shell, start-up left out. Prints it per size and the
ratio of the largest store to the smallest.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search_latency import REPO, TZ, queries, store_for

from store.db import open_db

PRDIGEST = Path(sys.executable).with_name("prdigest")


def session(db_path: Path, lines: list[str]) -> float:
    """Seconds one shell session takes to answer `lines` and exit."""
    env = {**os.environ, "PRDIGEST_DB": str(db_path), "PRDIGEST_REPOS": REPO, "PRDIGEST_TIMEZONE": TZ.key}
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "PRDIGEST_MODEL"):
        env.pop(name, None)
    started = time.perf_counter()
    done = subprocess.run(
        [str(PRDIGEST), "shell"], input="\n".join(lines) + "\n", capture_output=True, text=True, env=env, timeout=600
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"prdigest shell failed: {done.stderr.strip()[:300]}")
    return took


def per_question(db_path: Path, lines: list[str], rounds: int) -> float:
    """Median milliseconds a question adds to a session."""
    samples = []
    for _ in range(rounds):
        empty = session(db_path, [])
        full = session(db_path, lines)
        samples.append((full - empty) / len(lines) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--order", default="backfill")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    figures = {}
    for size in (int(size) for size in args.sizes.split(",")):
        path = store_for(size, args.order, rebuild=False)
        db = open_db(path)
        lines = [text for texts in queries(db).values() for text in texts]
        db.close()
        figures[size] = per_question(path, lines, args.rounds)
        print(f"{size:>7} PRs: {len(lines)} questions, {figures[size]:.1f} ms a question (median of {args.rounds} sessions)")
    if len(figures) > 1:
        low, high = min(figures), max(figures)
        print(f"{high // 1000}k/{low // 1000}k: {figures[high] / figures[low]:.2f}")


if __name__ == "__main__":
    main()
