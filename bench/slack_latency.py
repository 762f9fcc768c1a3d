"""How fast the Slack bot acknowledges and answers, and how long a daily report takes to post.

    python bench/slack_latency.py [--days 200] [--rounds 20] [--burst 30]

Runs the real `prdigest serve --http` against the fake Slack of tests/servers on
a synthetic store (50 merged PRs a day), sends signed slash commands and
mentions over HTTP, and prints per command: the time to Slack's HTTP answer
(the ack, which must stay under 3 s) and the time until the reply reached
response_url (or chat.update for mentions). Then a burst of concurrent commands,
and the daily report of a busy day posted with the production pacing.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from datetime import time as clock
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx  # noqa: E402
from servers.slack_api import (  # noqa: E402
    BOT_TOKEN,
    SIGNING_SECRET,
    FakeSlack,
    mention_event,
    signed_headers,
    slash_command,
)

from bot.config import Settings  # noqa: E402
from bot.runtime import Runtime  # noqa: E402
from bot.slack.app import slack_client  # noqa: E402
from bot.slack.daily import DailyPoster  # noqa: E402
from store.db import open_db  # noqa: E402
from store.model import PullRequest, Summary  # noqa: E402
from store.tables.prs import save_prs  # noqa: E402
from store.understanding.areas import AREAS, classify  # noqa: E402

REPO = "acme/engine"
TZ = ZoneInfo("America/Los_Angeles")
PER_DAY = 50
TAGS = ["Bugfix", "Core", "ROCm", "CI", "Frontend", "Kernel", "Model", "Perf", "Doc", "Spec Decode", "Quantization",
        "Multimodal", "Distributed", "Attention", "MoE", "Tool Calling", "XPU", "CPU", "TPU", "LoRA"]
WORDS = ["scheduler", "attention backend", "fused MoE", "KV cache", "tokenizer", "sampler", "CUDA graphs",
         "prefix caching", "chat completions", "weight loader", "all-reduce", "speculative decoding", "LoRA adapters"]
AUTHORS = [f"dev{n}" for n in range(120)]


def build_store(path: Path, days: int, today: date) -> None:
    rng = random.Random(7)
    db = open_db(path)
    number = 10000
    for offset in range(days, -1, -1):
        day = today - timedelta(days=offset)
        batch = []
        for index in range(PER_DAY):
            number += 1
            title = f"[{rng.choice(TAGS)}] {rng.choice(['Fix', 'Add', 'Speed up', 'Refactor'])} {rng.choice(WORDS)}"
            files = [f"vllm/{rng.choice(['core', 'v1/attention', 'model_executor/layers', 'entrypoints'])}/x{index}.py"]
            what = f"This PR changes the {rng.choice(WORDS)} so that {rng.choice(WORDS)} behaves better under load."
            batch.append(PullRequest(
                repo=REPO, number=number, title=title, url=f"https://github.com/{REPO}/pull/{number}",
                author=rng.choice(AUTHORS), merged_by="merge-bot", type=rng.choice(["substantial"] * 5 + ["trivial"]),
                merged_at=datetime.combine(day, clock(0, 10), tzinfo=TZ) + timedelta(minutes=28 * index),
                files=files, areas=classify(title, files) or [rng.choice(AREAS)],
                summary=Summary(what, "Impact.", "Risks.", "Insights.", "imported"),
            ))
        save_prs(db, batch)
    db.close()


class Bot:
    def __init__(self, db_path: Path, slack: FakeSlack) -> None:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "SLACK_", "OPENAI_", "GITHUB_"))},
               "PRDIGEST_DB": str(db_path), "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
               "PRDIGEST_SLACK_API_URL": slack.api_url}
        # The bench never polls GitHub; the store is named with PRDIGEST_DB.
        env["PRDIGEST_POLL_MINUTES"] = "0"
        self.process = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--http", "0", "--host", "127.0.0.1"],
                                        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            found = re.search(r"serving Slack requests at http://[^:]+:(\d+)", line)
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}/slack/events"
                break
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()
        self.client = httpx.Client(timeout=30)

    def post(self, body: str, kind: str) -> float:
        started = time.perf_counter()
        self.client.post(self.url, content=body.encode(), headers=signed_headers(body, kind)).raise_for_status()
        return time.perf_counter() - started

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def timed_command(bot: Bot, slack: FakeSlack, text: str, hook: str) -> tuple[float, float]:
    started = time.perf_counter()
    ack = bot.post(*slash_command(text, slack.response_url(hook)))
    slack.wait_for(lambda s: s.responses(hook), timeout=60)
    return ack, time.perf_counter() - started


def summary(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
    return f"p50 {statistics.median(values) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  max {values[-1] * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--burst", type=int, default=30)
    args = parser.parse_args()
    today = datetime.now(TZ).date()
    work = Path(tempfile.mkdtemp(prefix="prdigest-slack-bench-"))
    started = time.perf_counter()
    build_store(work / "bench.db", args.days, today)
    total = (args.days + 1) * PER_DAY
    print(f"store: {total} PRs over {args.days + 1} days, built in {time.perf_counter() - started:.1f} s")
    commands = ["today", "yesterday", "week", (today - timedelta(days=30)).isoformat(), "area rocm", "areas",
                "author dev7", "search attention backend", "pr 10042", "ask what changed in the scheduler this week?"]
    with FakeSlack() as slack:
        bot = Bot(work / "bench.db", slack)
        try:
            print(f"{'command':<48} {'ack (HTTP answer)':<44} reply at response_url")
            for text in commands:
                acks, replies = [], []
                for round_ in range(args.rounds):
                    ack, reply = timed_command(bot, slack, text, re.sub(r"\W+", "-", f"{text}-{round_}"))
                    acks.append(ack)
                    replies.append(reply)
                print(f"/prdigest {text:<38} {summary(acks):<44} {summary(replies)}")
            mentions = []
            for round_ in range(args.rounds):
                before = len(slack.calls_to("chat.update"))
                started = time.perf_counter()
                bot.post(*mention_event("<@UPRDIGEST> what changed for ROCm yesterday?", ts=f"1750000000.{round_:06d}"))
                slack.wait_for(lambda s, before=before: len(s.calls_to("chat.update")) > before, timeout=60)
                mentions.append(time.perf_counter() - started)
            print(f"{'@prdigest question (answer in place)':<48} {'':<44} {summary(mentions)}")

            with ThreadPoolExecutor(args.burst) as pool:
                started = time.perf_counter()
                results = list(pool.map(lambda n: timed_command(bot, slack, "week", f"burst-{n}"), range(args.burst)))
            print(f"burst of {args.burst} concurrent `week`: acks {summary([a for a, _ in results])}; "
                  f"all replies in {time.perf_counter() - started:.2f} s")
        finally:
            bot.stop()

        settings = Settings.from_env({"PRDIGEST_DB": str(work / "bench.db"), "SLACK_BOT_TOKEN": BOT_TOKEN,
                                      "PRDIGEST_SLACK_API_URL": slack.api_url, "PRDIGEST_REPOS": REPO})
        started = time.perf_counter()
        outcome = DailyPoster(slack_client(settings), Runtime(settings)).post("CBENCH", REPO, today - timedelta(days=1))
        took = time.perf_counter() - started
        blocks = [len(call.params["blocks"]) for call in slack.posts("CBENCH")]
        print(f"daily report of a {PER_DAY}-PR day: {outcome.sent} messages ({', '.join(map(str, blocks))} blocks), "
              f"posted in {took:.2f} s at one message a second")


if __name__ == "__main__":
    main()
