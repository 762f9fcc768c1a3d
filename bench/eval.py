"""How well search and ask find the PRs a person expects: recall@5, recall@10 and MRR for search, hit@3 for ask.

    python bench/eval.py [--questions tests/eval/questions.json] [--seeds ../shared/seeds] [--misses]

Imports the seed reports into a fresh store, asks every question of the set
(without a model) and compares with the PRs a person reading the reports
expects. recall@k is the share of the expected PRs in the first k results,
out of at most k (a question expecting 27 PRs is fully answered by 10 right
ones). MRR is the mean of 1/rank of the first expected PR. hit@3: one of the
answer's first three citations is expected. Skips (exit 0) without the seeds.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.answer import answer_question, read_in_thread  # noqa: E402
from bot.config import Settings  # noqa: E402
from store.db import open_db  # noqa: E402
from store.importer import import_file  # noqa: E402
from store.search import search  # noqa: E402

QUESTIONS = ROOT / "tests" / "eval" / "questions.json"
SEEDS = ROOT.parent / "shared" / "seeds"


@dataclass
class Scores:
    count: int = 0
    recall5: float = 0.0
    recall10: float = 0.0
    mrr: float = 0.0
    hit3: float = 0.0

    def add(self, recall5: float, recall10: float, rr: float, hit3: float) -> None:
        self.count += 1
        self.recall5 += recall5
        self.recall10 += recall10
        self.mrr += rr
        self.hit3 += hit3

    def mean(self) -> dict[str, float]:
        n = max(self.count, 1)
        return {
            "questions": self.count,
            "recall@5": self.recall5 / n,
            "recall@10": self.recall10 / n,
            "mrr": self.mrr / n,
            "ask hit@3": self.hit3 / n,
        }


@dataclass
class Report:
    overall: Scores = field(default_factory=Scores)
    by_kind: dict[str, Scores] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)


def recall(found: list[int], expected: set[int], k: int) -> float:
    return len(set(found[:k]) & expected) / min(k, len(expected))


def reciprocal_rank(found: list[int], expected: set[int]) -> float:
    return next((1 / rank for rank, number in enumerate(found, 1) if number in expected), 0.0)


def evaluate(seeds: list[Path], questions_path: Path = QUESTIONS) -> Report:
    spec = json.loads(questions_path.read_text(encoding="utf-8"))
    tz = ZoneInfo(spec["timezone"])
    repo = spec["repo"]
    settings = Settings.from_env({"PRDIGEST_REPOS": repo, "PRDIGEST_TIMEZONE": tz.key, "PRDIGEST_DB": "unused"})
    report = Report()
    with tempfile.TemporaryDirectory() as folder:
        db = open_db(Path(folder) / "eval.db")
        for path in seeds:
            import_file(db, path, tz, repo)
        for item in spec["questions"]:
            now = datetime.fromisoformat(item.get("now", spec["now"]))
            expected = set(item["expected"])
            history = item.get("history", [])
            question = read_in_thread(db, item["q"], history, repo, tz, now)
            found = search(db, repo, question, limit=10).numbers
            cited = answer_question(db, settings, item["q"], history=history, now=now, repo=repo).citations
            scores = (recall(found, expected, 5), recall(found, expected, 10), reciprocal_rank(found, expected),
                      float(bool(set(cited[:3]) & expected)))
            report.overall.add(*scores)
            report.by_kind.setdefault(item["kind"], Scores()).add(*scores)
            if scores[1] < 1 or not scores[3]:
                report.misses.append(
                    f"[{item['kind']}] {item['q']!r}: recall@10 {scores[1]:.2f}, ask hit@3 {int(scores[3])}; "
                    f"search {found}, ask {cited[:3]}, expected {sorted(expected)}"
                )
        db.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--seeds", type=Path, default=SEEDS)
    parser.add_argument("--misses", action="store_true", help="list the questions not fully answered")
    args = parser.parse_args()
    seeds = sorted(args.seeds.glob("*.md")) if args.seeds.is_dir() else []
    if not seeds:
        print(f"no seed reports in {args.seeds}; skipping the evaluation")
        return
    report = evaluate(seeds, args.questions)
    print(f"{'kind':<10} {'n':>3} {'recall@5':>9} {'recall@10':>10} {'MRR':>6} {'ask hit@3':>10}")
    rows = [*sorted(report.by_kind.items()), ("all", report.overall)]
    for kind, scores in rows:
        m = scores.mean()
        print(f"{kind:<10} {m['questions']:>3} {m['recall@5']:>9.3f} {m['recall@10']:>10.3f} {m['mrr']:>6.3f} {m['ask hit@3']:>10.3f}")
    if args.misses:
        print("\n".join(["", *report.misses]))


if __name__ == "__main__":
    main()
