"""What summarizing a day of PRs costs: model calls, tokens and failures, per day and per PR,
at several diff budgets, and on both reply paths (structured output, and Markdown text).

    .venv/bin/python bench/summary_cost.py [--prs 40] [--budgets 3000,6000,12000]

The PRs are a real day's titles and changed files (the first report in ../shared/seeds
when present, else made up), with made-up descriptions in vLLM's template and diffs
whose sizes follow a long-tailed spread (most PRs small, a few huge). The model is
the fake Chat Completions server of the tests on 127.0.0.1, replying with summaries as
long as the seed reports' (about 1,450 characters). It counts tokens as characters / 4,
the same estimate the budget uses; real tokenizers differ by about 20%.

The paths table runs the default budget through two servers that rotate every reply
shape real models use and answer every 9th call with a 500: one takes the JSON
schema (json_schema path), one refuses it with a 400 (text path).
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from servers.openai_api import FakeOpenAI, rotating_responder, summary_sections  # noqa: E402

from bot.config import Settings  # noqa: E402
from bot.model.client import LLM  # noqa: E402
from bot.model.summarize import summarize_prs  # noqa: E402
from store.db import open_db  # noqa: E402
from store.model import PullRequest  # noqa: E402
from store.sources.importer import read_report  # noqa: E402
from store.tables.prs import save_pr  # noqa: E402
from store.understanding.summary import classify_type, extractive_summary  # noqa: E402

SEEDS = ROOT.parent / "shared" / "seeds"
TZ = ZoneInfo("America/Los_Angeles")
BODY = """<!-- markdownlint-disable -->
## Purpose

{purpose}

## Test Plan

```
pytest tests/{area}/ -q
```

## Test Result

All tests pass; throughput within noise ({tput} tok/s before and after).

---
<details>
<summary> Essential Elements of an Effective PR Description Checklist </summary>

- [x] The purpose of the PR.
- [x] The test plan.
</details>
"""
WORDS = ["scheduler", "budget", "cache", "block", "request", "batch", "kernel", "token", "prefix", "decode", "prefill", "worker", "tensor", "layer", "config", "sampler", "stream", "metric", "queue", "buffer"]


def seed_sized_sections(pr_number: str) -> dict[str, str]:
    """Sections as long as the seed reports' summaries (about 1,450 characters in all)."""
    return {key: " ".join([text] * 4) for key, text in summary_sections(pr_number).items()}


def day_of_prs(count: int, rng: random.Random) -> tuple[list[PullRequest], str]:
    reports = sorted(SEEDS.glob("*.md")) if SEEDS.is_dir() else []
    if reports:
        prs = read_report(reports[0], TZ).prs
        prs = (prs * (count // len(prs) + 1))[:count]
        origin = f"titles and files from {reports[0].name}"
    else:
        start = datetime(2026, 3, 7, 17, tzinfo=UTC)
        prs = [
            PullRequest("acme/engine", 1000 + i, f"[Core] Change {i} to the {rng.choice(WORDS)} path",
                        f"https://github.com/acme/engine/pull/{1000 + i}", "dev", None, start + timedelta(minutes=i),
                        "substantial", [f"engine/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{k}.py" for k in range(rng.randint(1, 8))])
            for i in range(count)
        ]
        origin = "made-up titles and files"
    for index, pr in enumerate(prs):
        pr.number = 50_000 + index  # repeated seed PRs must stay distinct
        pr.summary = None
        purpose = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 120))).capitalize() + "."
        pr.body = BODY.format(purpose=purpose, area=rng.choice(WORDS), tput=rng.randint(1000, 9000))
    return prs, origin


def patches(pr: PullRequest, rng: random.Random) -> list[dict]:
    """GitHub file objects with a long-tailed spread of hunk sizes (median ~25 changed lines a file)."""
    files = []
    for path in pr.files:
        hunks, added, removed = [], 0, 0
        for start in range(rng.randint(1, 4)):
            changed = max(1, int(rng.lognormvariate(2.3, 1.2)))
            plus = [f"+    {' '.join(rng.choice(WORDS) for _ in range(rng.randint(3, 10)))}" for _ in range(changed)]
            minus = [f"-    {rng.choice(WORDS)}()" for _ in range(changed // 3)]
            context = [f"     {rng.choice(WORDS)} = {rng.choice(WORDS)}" for _ in range(3)]
            hunks.append("\n".join([f"@@ -{start * 100},{len(minus) + 6} +{start * 100},{len(plus) + 6} @@",
                                    *context, *minus, *plus, *context]))
            added, removed = added + len(plus), removed + len(minus)
        files.append({"filename": path, "status": "modified", "additions": added, "deletions": removed,
                      "patch": "\n".join(hunks)})
    pr.additions = sum(f["additions"] for f in files)
    pr.deletions = sum(f["deletions"] for f in files)
    return files


def run(budget: int, count: int, concurrency: int, json_schema: str = "take", error_every: int = 0) -> dict:
    """Summarize a day twice; the figures of the first run, and the calls of the second."""
    rng = random.Random(0)
    prs, origin = day_of_prs(count, rng)
    diffs = {pr.number: patches(pr, rng) for pr in prs}
    responder = rotating_responder(seed_sized_sections)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(responder, json_schema=json_schema, error_every=error_every) as api:
        settings = Settings.from_env({
            "PRDIGEST_DB": f"{tmp}/bench.db", "PRDIGEST_SUMMARY_TOKENS": str(budget),
            "PRDIGEST_LLM_CONCURRENCY": str(concurrency), "PRDIGEST_MODEL": "bench-model", "OPENAI_BASE_URL": api.base_url,
        })
        db = open_db(settings.db_path)
        for pr in prs:
            pr.type = classify_type(pr)
            pr.summary = extractive_summary(pr)
            save_pr(db, pr)
        with LLM("bench-model", base_url=api.base_url, concurrency=concurrency) as llm:
            started = time.perf_counter()
            first = summarize_prs(db, settings, prs, llm, diffs=lambda pr: diffs[pr.number])
            seconds = time.perf_counter() - started
            requests = len(api.requests)
            second = summarize_prs(db, settings, prs, llm, diffs=lambda pr: diffs[pr.number])
        partial = db.execute("select count(*) from prs where insights like '%part of the diff%'").fetchone()[0]
        failed_calls = db.execute("select count(*) from model_calls where outcome != 'ok'").fetchone()[0]
        db.close()
    return {"first": first, "second": second, "seconds": seconds, "partial": partial, "origin": origin,
            "requests": requests, "failed_calls": failed_calls}


def budget_row(budget: int, figures: dict) -> str:
    first = figures["first"]
    n = len(first.summarized)
    return (f"{budget:>7,} {first.calls:>6} {first.tokens_in:>10,} {first.tokens_out:>10,} "
            f"{first.tokens_in // n:>7,} {first.tokens_out // n:>7,} {figures['partial']:>8} "
            f"{figures['second'].calls:>11} {figures['seconds']:>8.2f}")


def path_row(path: str, count: int, figures: dict) -> str:
    first = figures["first"]
    return (f"{path:<12} {len(first.summarized):>4}/{count:<4} {first.calls:>6} {figures['requests']:>9} "
            f"{first.calls / count:>8.3f} {first.tokens_in // count:>7,} {first.tokens_out // count:>7,} "
            f"{first.reasoning_tokens // count:>9,} "
            f"{figures['failed_calls']:>7} {figures['failed_calls'] / count:>8.3f} {len(first.failed):>7} "
            f"{figures['second'].calls:>11}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prs", type=int, default=40)
    parser.add_argument("--budgets", default="3000,6000,12000", help="PRDIGEST_SUMMARY_TOKENS values to try")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    budgets = {budget: run(budget, args.prs, args.concurrency) for budget in (int(b) for b in args.budgets.split(","))}
    origin = next(iter(budgets.values()))["origin"]
    print(f"summarizing a day of {args.prs} PRs ({origin}; descriptions and diffs made up)")
    print(f"{'budget':>7} {'calls':>6} {'tokens in':>10} {'tokens out':>10} {'in/PR':>7} {'out/PR':>7} "
          f"{'partial':>8} {'rerun calls':>11} {'seconds':>8}")
    print("\n".join(budget_row(budget, figures) for budget, figures in budgets.items()))
    print("budget = PRDIGEST_SUMMARY_TOKENS; partial = PRs whose diff did not fit whole; "
          "rerun calls = model calls when the same day is summarized again (cached)")
    print()
    default = Settings.from_env({"PRDIGEST_DB": "/unused"}).summary_tokens
    paths = {"json_schema": run(default, args.prs, args.concurrency, "take", error_every=9),
             "text": run(default, args.prs, args.concurrency, "openai", error_every=9)}
    print(f"both reply paths at budget {default:,}, every reply shape in turn, a 500 every 9th call:")
    print(f"{'path':<12} {'summarized':>9} {'calls':>6} {'requests':>9} {'calls/PR':>8} {'in/PR':>7} {'out/PR':>7} "
          f"{'reason/PR':>9} {'failed':>7} {'failed/PR':>8} {'PRs failed':>7} {'rerun calls':>11}")
    print("\n".join(path_row(path, args.prs, figures) for path, figures in paths.items()))
    print("calls = model calls in the ledger; requests = HTTP requests, the client's retries of the 500s included; "
          "out/PR includes reason/PR, the reasoning tokens; failed = calls that failed "
          "(the text path's one refused schema, unreadable replies)")


if __name__ == "__main__":
    main()
