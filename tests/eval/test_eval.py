"""The evaluation set, run as a test: retrieval must not fall below what it measured when last tuned."""
import importlib.util
import sys
from pathlib import Path

from conftest import seed_reports

ROOT = Path(__file__).resolve().parents[2]
# Measured on the seed reports: recall@5 0.969, recall@10 0.993, MRR 0.992, ask hit@3 1.000.
FLOORS = {"recall@5": 0.93, "recall@10": 0.95, "mrr": 0.93, "ask hit@3": 0.95}


def _bench_eval():
    spec = importlib.util.spec_from_file_location("bench_eval", ROOT / "bench" / "eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_eval_meets_its_floors():
    seeds = seed_reports()
    report = _bench_eval().evaluate(seeds)
    figures = report.overall.mean()
    assert figures["questions"] >= 40
    below = {name: round(figures[name], 3) for name, floor in FLOORS.items() if figures[name] < floor}
    assert not below, f"{below}; misses:\n" + "\n".join(report.misses)
