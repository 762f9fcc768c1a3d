"""Cost of each kind of line in one `prdigest shell` session, on the synthetic stores of search_latency.py.

    python bench/shell_session.py [--sizes 1000,100000] [--order backfill] [--rounds 5]

Runs the shell's own loop (what `prdigest shell` runs, start-up left out) over
one session, one thread of questions: searches of three common words with no
time, two-word questions with no time, questions of rare words that the PRs of
every year say, then the mixed questions of search_latency's kinds. Each line
is timed from the moment the shell asks for it to the moment it asks for the
next, its answer printed, in CPU time of the process by default: the store's
pages are in memory after a first session, so CPU time is the cost, and it
moves far less than elapsed time when other work shares the machine. Each round runs the session on every size in turn,
in the same process, so a busy machine weighs on both sides of a ratio alike.
Prints, per kind, the median milliseconds a line takes at each size (the
median over rounds of each round's mean), and the ratio of the largest store
to the smallest; "session" is the whole session's mean.
"""
from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search_latency import REPO, TZ, queries, store_for

from bot.answers.mentions import FAILED
from bot.config import Settings
from bot.runtime import Runtime
from bot.terminal.shell import shell
from store.db import open_db

# Words most PRs of the synthetic stores say, three to a search.
SEARCHES = [
    "search memory tokens batch",
    "search request latency config",
    "search kernel output tensor",
    "search scheduler error handling",
    "search cache startup overhead",
    "search model layers performance",
]
# Two words, no time.
QUESTIONS = [
    "scheduler crash?",
    "any tokenizer hang?",
    "sampler timeout?",
    "detokenizer OOM?",
    "xgrammar regression?",
    "what about MLA deadlock?",
]
# A model and a platform: each rare, together said by a PR every few weeks, in every year of the store.
RARE = [
    "Jamba on Gaudi?",
    "Whisper segfault on MI355X",
    "anything about Voxtral on Arm?",
    "Pixtral with TPU v6e",
    "ColBERT precision loss on L40S?",
    "Falcon-H1 on Arc B580?",
]
KINDS = ("search", "question", "rare", "mixed")


def session_lines(mixed: list[str]) -> list[tuple[str, str]]:
    """The session: each kind's lines interleaved, one thread, as a person moves from one thing to the next."""
    kinds = {"search": SEARCHES, "question": QUESTIONS, "rare": RARE}
    lines = [(kind, texts[i]) for i in range(len(SEARCHES)) for kind, texts in kinds.items()]
    return lines + [("mixed", text) for text in mixed]


def run_session(db_path: Path, lines: list[tuple[str, str]], clock: Callable[[], float]) -> dict[str, list[float]]:
    """Milliseconds each line took on `clock`, by kind, in one shell session on the store at `db_path`."""
    settings = Settings.from_env({"PRDIGEST_DB": str(db_path), "PRDIGEST_REPOS": REPO, "PRDIGEST_TIMEZONE": TZ.key})
    runtime = Runtime(settings, create=False)
    took: dict[str, list[float]] = {kind: [] for kind in KINDS}

    def timed() -> Iterator[str]:
        for kind, text in lines:
            started = clock()
            yield text  # the shell answers it before it asks for the next line
            took[kind].append((clock() - started) * 1000)

    runtime.db.execute("select 1")  # the store opened, as at the shell's start
    out = io.StringIO()
    shell(runtime, timed(), out, io.StringIO())
    runtime.close()
    if FAILED in out.getvalue():
        raise SystemExit(f"a question failed in the session on {db_path}")
    return took


def _mixed(path: Path) -> list[str]:
    db = open_db(path)
    mixed = [text for texts in queries(db).values() for text in texts]
    db.close()
    return mixed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--order", default="backfill")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="the process's CPU time (steady on a shared machine; the default), or elapsed time")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    paths = {size: store_for(size, args.order, rebuild=False) for size in sizes}
    # The mixed questions are drawn from each store, as search_latency.py draws them (its people, its reverts).
    sessions = {size: session_lines(_mixed(paths[size])) for size in sizes}
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rounds: dict[int, list[dict[str, float]]] = {size: [] for size in sizes}
    for size in sizes:
        run_session(paths[size], sessions[size], clock)  # warm: the pages the session reads
    for _ in range(args.rounds):
        for size in sizes:
            took = run_session(paths[size], sessions[size], clock)
            means = {kind: statistics.mean(times) for kind, times in took.items()}
            means["session"] = statistics.mean(t for times in took.values() for t in times)
            rounds[size].append(means)
    columns = (*KINDS, "session")
    lines = sessions[min(sizes)]
    counts = {kind: sum(1 for k, _ in lines if k == kind) for kind in KINDS}
    print(f"{args.order} order, {args.clock} ms a line (median of {args.rounds} sessions of {len(lines)} lines: "
          + ", ".join(f"{counts[kind]} {kind}" for kind in KINDS) + ")")
    print(f"{'size':>8}  " + "  ".join(f"{column:>9}" for column in columns))
    figures = {size: {c: statistics.median(r[c] for r in rounds[size]) for c in columns} for size in sizes}
    for size in sizes:
        print(f"{size:>8}  " + "  ".join(f"{figures[size][c]:>9.1f}" for c in columns))
    if len(sizes) > 1:
        low, high = min(sizes), max(sizes)
        ratios = [figures[high][c] / figures[low][c] for c in columns]
        print(f"{f'{high // 1000}k/{low // 1000}k':>8}  " + "  ".join(f"{ratio:>9.2f}" for ratio in ratios))

if __name__ == "__main__":
    main()
