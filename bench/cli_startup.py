"""Wall time of whole `prdigest` processes on a 10k-PR store: start, open the store, answer, exit.

    python bench/cli_startup.py [--size 10000] [--rounds 10]

Uses the merge-order store of bench/search_latency.py (built on first use) and
the installed `prdigest` beside this Python. No model is configured. The
project's modules are byte-compiled first, as installing them does.
"""
from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_latency import REPO, TZ, percentile, store_for

# Each command's arguments; `ask` without a question is a usage error, which exits 2 before the store opens.
COMMANDS = {
    "ask (no question)": ["ask"],
    "ask QUESTION": ["ask", "what changed in the scheduler this week?"],
    'run "today"': ["run", "today"],
    'run "yesterday"': ["run", "yesterday"],
    "--version": ["--version"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    store = store_for(args.size, "merge", rebuild=False)
    root = Path(__file__).resolve().parents[1]
    for package in ("bot", "store"):
        compileall.compile_dir(root / package, quiet=1)
    program = Path(sys.executable).with_name("prdigest")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PRDIGEST_", "OPENAI_", "SLACK_"))}
    env.update({"PRDIGEST_DB": str(store), "PRDIGEST_REPOS": REPO, "PRDIGEST_TIMEZONE": TZ.key})
    print(f"{'command':<20} {'p50 s':>6} {'p95 s':>6}")
    for name, argv in COMMANDS.items():
        timings = []
        for _ in range(args.rounds + 1):
            started = time.perf_counter()
            done = subprocess.run([str(program), *argv], env=env, capture_output=True)
            if done.returncode not in (0, 2):
                raise SystemExit(f"{name} exited {done.returncode}: {done.stderr.decode()}")
            timings.append(time.perf_counter() - started)
        timings = sorted(timings[1:])  # the first run warms the disk cache
        print(f"{name:<20} {statistics.median(timings):>6.3f} {percentile(timings, 0.95):>6.3f}")


if __name__ == "__main__":
    main()
