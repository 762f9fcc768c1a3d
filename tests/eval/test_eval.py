"""The evaluation set, run as a test: finding and choosing must not fall below what they measured when last tuned."""
import importlib.util
import sys
from pathlib import Path

from conftest import seed_reports

ROOT = Path(__file__).resolve().parents[2]
# Measured on the seed reports and store/sources/sample_reports (see the README's figures); the floors leave a little room.
FLOORS = {"recall@10": 0.95, "hit@3": 0.95, "precision": 0.85, "recall": 0.92, "first line": 0.9}


def _bench_eval():
    spec = importlib.util.spec_from_file_location("bench_eval", ROOT / "bench" / "eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_eval_meets_its_floors():
    report = _bench_eval().evaluate(seed_reports())
    figures = report.overall.mean()
    below = {name: round(figures[name], 3) for name, floor in FLOORS.items() if not figures[name] >= floor}
    assert not below, f"{below}; misses:\n" + "\n".join(report.misses)


def test_eval_covers_every_question_shape():
    report = _bench_eval().evaluate(seed_reports())
    assert report.overall.count >= 120
    assert {kind for kind, scores in report.by_kind.items() if scores.count >= 8} >= {
        "yesno", "who", "count", "relation", "time", "person", "area-time", "generic", "text",
    }


def test_sets_scored_together_weigh_every_question_the_same():
    bench = _bench_eval()
    one, two = bench.Report(), bench.Report()
    one.overall.add({"recall@10": 1.0, "hit@3": 1.0, "precision": 1.0, "recall": 1.0}, True)
    for _ in range(3):
        two.overall.add({"recall@10": None, "hit@3": None, "precision": 0.0, "recall": 0.0}, None)
    together = bench.Report()
    together.merge(one)
    together.merge(two)
    figures = together.overall.mean()
    assert (figures["questions"], figures["precision"], figures["recall@10"], figures["first line"]) == (4, 0.25, 1.0, 1.0)
