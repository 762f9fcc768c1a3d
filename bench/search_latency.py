"""Latency of `search` and `ask` (without a model) on synthetic stores of 1k, 10k and 100k merged PRs.

    python bench/search_latency.py [--sizes 1000,10000,100000] [--orders merge,backfill,random] [--rounds 3] [--rebuild]

Each store is filled in one of three orders: in merge order, as a newest-first
backfill (the most recent day first, then each older day), or in random order.
Stores are generated once into $TMPDIR/prdigest-bench/ and reused. PRs look
like a busy repository's: 40 merges a day (100k PRs span almost seven years),
bracketed title tags, model and component names, file paths, four-section
summaries drawn from a shared vocabulary with a Zipf-like skew, a long tail of
authors, a bot that merges a third of everything, reverts and regression fixes.
They are written by save_prs, a day (or, in random order, 40 PRs) at a time.
Figures are p50 and p95 in milliseconds per query kind, then the 100k/1k ratio
of each kind for each order.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.answers.answer import answer_question
from bot.config import Settings
from store.days import local_day
from store.db import open_db
from store.model import PullRequest, Summary
from store.retrieval.search import search_prs
from store.tables.prs import save_prs
from store.understanding.areas import classify

REPO = "acme/engine"
TZ = ZoneInfo("America/Los_Angeles")
END = datetime(2026, 2, 14, 18, 0, tzinfo=TZ)
PER_DAY = 40
GENERATOR_VERSION = 7
ORDERS = ("merge", "backfill", "random")
KINDS = ("day", "week", "person", "area", "text", "text+time", "number", "yesno", "ask")

TAGS = [
    "Bugfix", "Core", "ROCm", "CI", "CI/Build", "Frontend", "Kernel", "Model", "Perf", "Doc", "Misc", "Spec Decode",
    "V1", "Model Runner V2", "Quantization", "Hardware", "XPU", "CPU", "TPU", "LoRA", "Multimodal", "Distributed",
    "torch.compile", "Attention", "MoE", "KVConnector", "Structured Output", "Tool Calling", "Feature", "Refactor",
]
VERBS = ["Fix", "Add", "Support", "Refactor", "Remove", "Optimize", "Update", "Enable", "Disable", "Clean up",
         "Move", "Avoid", "Use", "Improve", "Handle", "Skip", "Bump", "Deprecate", "Allow", "Reduce"]
MODELS = ["Qwen3", "Qwen3-Next", "Llama 4", "DeepSeek V3", "DeepSeek R1", "GLM-4.5", "Mistral", "Mixtral", "Gemma 3",
          "Phi-4", "Kimi K2", "gpt-oss", "Whisper", "InternVL", "LLaVA", "Nemotron-H", "Granite", "MiniMax", "Step3",
          "Jamba", "Falcon-H1", "OLMo", "Pixtral", "Voxtral", "ColBERT", "BERT"]
COMPONENTS = [
    "scheduler", "detokenizer", "tokenizer", "KV cache manager", "block pool", "prefix caching", "chunked prefill",
    "attention backend", "FlashInfer backend", "Triton attention", "MLA", "fused MoE", "EPLB", "all-reduce",
    "pipeline parallel", "data parallel", "tensor parallel", "CUDA graphs", "torch.compile", "Inductor pass",
    "sampler", "logits processor", "structured outputs", "xgrammar", "tool parser", "reasoning parser",
    "OpenAI server", "chat completions", "Responses API", "realtime API", "embedding endpoint", "LoRA adapters",
    "multimodal processor", "image preprocessing", "audio encoder", "speculative decoding", "EAGLE3 drafter",
    "MTP head", "ngram proposer", "NIXL connector", "LMCache connector", "P/D disaggregation", "weight loader",
    "safetensors iterator", "FP8 quantization", "NVFP4 GEMM", "AWQ kernels", "GPTQ Marlin", "CPU backend",
    "XPU worker", "TPU runner", "model runner", "engine core", "async scheduling", "metrics", "benchmarks",
    "docker image", "buildkite pipeline", "pre-commit hooks", "docs", "examples", "config validation",
]
PROBLEMS = ["crash", "hang", "memory leak", "OOM", "accuracy drop", "illegal memory access", "race condition",
            "deadlock", "wrong output", "slow startup", "timeout", "flaky test", "regression", "NaN outputs",
            "shape mismatch", "import error", "segfault", "precision loss"]
PLATFORMS = ["H100", "H200", "B200", "MI300X", "MI355X", "A100", "L40S", "Gaudi", "TPU v6e", "Arc B580", "x86", "Arm"]
DIRS = [
    "vllm/v1/core/sched", "vllm/v1/core", "vllm/v1/engine", "vllm/v1/worker", "vllm/v1/worker/gpu", "vllm/v1/attention/backends",
    "vllm/v1/spec_decode", "vllm/model_executor/models", "vllm/model_executor/layers/quantization",
    "vllm/model_executor/layers/fused_moe", "vllm/entrypoints/openai", "vllm/entrypoints", "vllm/distributed",
    "vllm/distributed/kv_transfer", "vllm/multimodal", "vllm/lora", "vllm/compilation", "vllm/platforms",
    "vllm/v1/structured_output", "vllm/tool_parsers", "vllm/reasoning", "csrc/attention", "csrc/moe", "csrc/quantization",
    "csrc/rocm", "tests/v1/core", "tests/kernels", "tests/models", "tests/entrypoints", "tests/v1/spec_decode", "docs/features",
    "examples/online_serving", ".buildkite", "docker", "requirements", "benchmarks",
]
STEMS = ["scheduler", "utils", "config", "layer", "backend", "runner", "worker", "manager", "processor", "loader",
         "kernels", "ops", "api_server", "serving_chat", "protocol", "registry", "interface", "cache", "metadata", "common"]
FILLER = ["the", "a", "this", "that", "change", "changes", "code", "path", "request", "requests", "tokens", "batch", "batches", "step", "steps", "memory", "performance", "behaviour", "behavior", "users", "user", "default", "option", "flag", "argument", "value", "values", "method", "function", "class", "module", "test", "tests", "case", "cases", "logic", "support", "existing", "new", "previous", "current", "call", "calls", "data", "shape", "tensor", "tensors", "layer", "layers", "model", "models", "kernel", "kernels", "output", "outputs", "input", "inputs", "state", "states", "size", "sizes", "error", "errors", "check", "checks", "issue", "issues", "handling", "configuration", "config", "setting", "settings", "runtime", "startup", "overhead", "latency", "throughput", "correctness", "compatibility", "edge", "path", "paths", "version", "versions"]
CONNECT = ["when", "because", "so", "that", "which", "while", "after", "before", "during", "without", "with", "for", "in", "on", "of", "to", "by", "from", "across"]


_CUMULATIVE: dict[tuple[int, float], list[float]] = {}


def _zipf_pick(rng: random.Random, items: list[str], skew: float = 1.1) -> str:
    """An item, the first ones far more often than the last, like words in real text."""
    key = (id(items), skew)
    if key not in _CUMULATIVE:
        total, cumulative = 0.0, []
        for rank in range(len(items)):
            total += 1 / (rank + 1) ** skew
            cumulative.append(total)
        _CUMULATIVE[key] = cumulative
    return rng.choices(items, cum_weights=_CUMULATIVE[key])[0]


def _sentence(rng: random.Random, topic: str, words: int = 18) -> str:
    body = [_zipf_pick(rng, FILLER) if rng.random() < 0.8 else rng.choice(CONNECT) for _ in range(words)]
    body.insert(rng.randrange(len(body)), topic)
    if rng.random() < 0.4:
        body.insert(rng.randrange(len(body)), rng.choice(COMPONENTS))
    if rng.random() < 0.2:
        body.insert(rng.randrange(len(body)), rng.choice(MODELS))
    return " ".join(body).capitalize() + "."


def _logins(rng: random.Random, count: int) -> list[str]:
    syllables = ["ka", "ro", "mi", "lu", "xi", "an", "ze", "to", "hu", "li", "wen", "jo", "sa", "de", "ni", "yu"]
    names = set()
    while len(names) < count:
        name = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if rng.random() < 0.3:
            name += str(rng.randint(1, 999))
        if rng.random() < 0.15:
            name += "-" + rng.choice(["dev", "ai", "nv", "amd", "redhat", "intel"])
        names.add(name)
    return sorted(names)


def generate(count: int, seed: int = 7) -> list[PullRequest]:
    rng = random.Random(seed)
    authors = _logins(rng, max(50, count // 60))
    maintainers = authors[:40]
    prs: list[PullRequest] = []
    first_number = 10000
    start = END - timedelta(days=count / PER_DAY)
    for i in range(count):
        number = first_number + i
        merged_at = start + timedelta(seconds=(END - start).total_seconds() * i / count + rng.randint(0, 600))
        component = rng.choice(COMPONENTS)
        tags = rng.sample(TAGS, rng.choice([1, 1, 1, 2, 2, 3]))
        verb = rng.choice(VERBS)
        if rng.random() < 0.3:
            title = f"{verb} {rng.choice(PROBLEMS)} in {component} on {rng.choice(PLATFORMS)}"
        elif rng.random() < 0.3:
            title = f"{verb} {component} for {rng.choice(MODELS)}"
        else:
            title = f"{verb} {component} {_zipf_pick(rng, FILLER)} {_zipf_pick(rng, FILLER)}"
        title = "".join(f"[{tag}]" for tag in tags) + " " + title
        what = " ".join(_sentence(rng, component) for _ in range(rng.randint(2, 3)))
        if prs and rng.random() < 0.03:
            target = prs[-rng.randint(1, min(200, len(prs)))]
            title = f"Revert #{target.number}"
            what = f"Reverts #{target.number} because it caused a {rng.choice(PROBLEMS)}. " + what
        elif prs and rng.random() < 0.03:
            target = prs[-rng.randint(1, min(500, len(prs)))]
            what = f"Fixes a {rng.choice(PROBLEMS)} broken by #{target.number}. " + what
        elif prs and rng.random() < 0.03:
            what = f"Follow-up to #{prs[-rng.randint(1, min(300, len(prs)))].number}. " + what
        directory = rng.choice(DIRS)
        files = sorted({f"{directory}/{rng.choice(STEMS)}.py" for _ in range(rng.randint(1, 8))})
        author = _zipf_pick(rng, authors, 0.9)
        merger = "vllm-bot" if rng.random() < 0.33 else rng.choice(maintainers)
        summary = Summary(
            what_changed=what,
            impact=" ".join(_sentence(rng, component) for _ in range(2)),
            risks=_sentence(rng, rng.choice(PROBLEMS)),
            insights=_sentence(rng, rng.choice(COMPONENTS)),
            source="imported",
        )
        prs.append(
            PullRequest(
                repo=REPO, number=number, title=title, url=f"https://github.com/{REPO}/pull/{number}",
                author=author, merged_by=merger, merged_at=merged_at.astimezone(UTC),
                type="trivial" if rng.random() < 0.15 else "substantial", files=files,
                areas=classify(title, files), summary=summary,
                additions=rng.randint(1, 800), deletions=rng.randint(0, 400),
            )
        )
    return prs


def arrival(prs: list[PullRequest], order: str) -> list[list[PullRequest]]:
    """The batches PRs reach the store in: day by day, oldest or newest day first, or 40 at a time at random."""
    if order == "random":
        shuffled = random.Random(11).sample(prs, len(prs))
        return [shuffled[i:i + PER_DAY] for i in range(0, len(shuffled), PER_DAY)]
    days: dict[object, list[PullRequest]] = {}
    for pr in prs:
        days.setdefault(local_day(pr.merged_at, TZ), []).append(pr)
    batches = list(days.values())
    return batches[::-1] if order == "backfill" else batches


def build_store(path: Path, count: int, order: str) -> None:
    path.unlink(missing_ok=True)
    db = open_db(path)
    for batch in arrival(generate(count), order):
        save_prs(db, batch)
    # No ANALYZE: nothing in prdigest runs it, so a real store's query plans are made without statistics.
    db.close()


def store_for(count: int, order: str, rebuild: bool) -> Path:
    folder = Path(tempfile.gettempdir()) / "prdigest-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"store-v{GENERATOR_VERSION}-{order}-{count}.db"
    if rebuild or not path.exists():
        started = time.perf_counter()
        build_store(path, count, order)
        print(f"built {path} ({count} PRs, {order} order) in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return path


def queries(db) -> dict[str, list[str]]:
    """Several instances of each kind of question, drawn from the store itself."""
    logins = [row[0] for row in db.execute("select author from prs group by author order by count(*) desc limit 200")]
    numbers = [row[0] for row in db.execute("select number from prs where number % 97 = 0 order by number limit 5")]
    reverted = [row[0] for row in db.execute("select target from pr_relations where kind = 'reverts' order by target limit 5")]
    people = [logins[0], logins[len(logins) // 10], logins[len(logins) // 2], logins[-1], "vllm-bot"]
    return {
        "day": ["what merged yesterday?", "what merged on Feb 10?", "what merged today", "PRs from Feb 3"],
        "week": ["anything last week", "since Monday", "between Feb 2 and Feb 6", "what merged this week"],
        "person": [f"what did {login} merge?" for login in people] + [f"PRs by {people[1]} this week", "merged by vllm-bot yesterday"],
        "area": ["anything on ROCm?", "spec decode changes this week", "what changed in the scheduler this week?",
                 "MRV2", "CI fixes yesterday", "quantization last month"],
        "text": ["memory leak in the detokenizer", "flashinfer backend crash on B200", "OpenAI-compatible server",
                 "fix accuracy drop for Qwen3", "why did startup get slow", "nixl connector hang", "fix", "tokens batch memory"],
        "text+time": ["memory leak yesterday", "EAGLE3 drafter fixes last week", "segfault since Feb 1",
                      "fused MoE OOM this month"],
        "number": [f"#{n}" for n in numbers] + [f"why was #{n} reverted?" for n in reverted],
        "yesno": ["did anyone fix the scheduler hang?", "was the detokenizer memory leak fixed?",
                  "did the flashinfer crash on B200 get fixed last week?", "any fix for tokens batch memory?"],
    }


def measure(fn, samples: list[str], rounds: int) -> list[float]:
    for text in samples:
        fn(text)  # warm: caches, pages
    timings = []
    for _ in range(rounds):
        for text in samples:
            started = time.perf_counter()
            fn(text)
            timings.append((time.perf_counter() - started) * 1000)
    return sorted(timings)


def percentile(timings: list[float], share: float) -> float:
    return timings[min(len(timings) - 1, int(len(timings) * share))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--orders", default=",".join(ORDERS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    settings = Settings.from_env({"PRDIGEST_REPOS": REPO, "PRDIGEST_TIMEZONE": TZ.key, "PRDIGEST_DB": "unused"})
    sizes = [int(size) for size in args.sizes.split(",")]
    figures: dict[tuple[str, int, str], tuple[float, float]] = {}
    for order in args.orders.split(","):
        print(f"\n{order} order: p50 / p95 ms")
        print(f"{'size':>7}  " + "  ".join(f"{kind:>13}" for kind in KINDS))
        for size in sizes:
            db = open_db(store_for(size, order, args.rebuild))
            cells = []
            for kind, (fn, texts) in runs(db, settings).items():
                timings = measure(fn, texts, args.rounds)
                figures[order, size, kind] = (statistics.median(timings), percentile(timings, 0.95))
                cells.append("{:>6.1f} /{:>5.1f}".format(*figures[order, size, kind]))
            db.close()
            print(f"{size:>7}  " + "  ".join(cells))
        if len(sizes) > 1:
            low, high = min(sizes), max(sizes)
            ratios = [figures[order, high, kind][1] / figures[order, low, kind][1] for kind in KINDS]
            print(f"{f'{high // 1000}k/{low // 1000}k':>7}  " + "  ".join(f"{ratio:>13.2f}" for ratio in ratios) + "   (p95)")
    if args.json:
        rows = [{"order": o, "size": n, "kind": k, "p50": v[0], "p95": v[1]} for (o, n, k), v in figures.items()]
        print(json.dumps(rows, indent=2))



def runs(db, settings: Settings) -> dict[str, tuple]:
    """Each kind's call and question texts; `ask` answers a mix of every kind."""
    kinds = queries(db)
    found = {kind: (lambda text: search_prs(db, text, REPO, TZ, now=END), texts) for kind, texts in kinds.items()}
    mix = [text for texts in kinds.values() for text in texts]
    found["ask"] = (lambda text: answer_question(db, settings, text, now=END, repo=REPO), mix)
    return {kind: found[kind] for kind in KINDS}


if __name__ == "__main__":
    main()
