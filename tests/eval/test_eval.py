"""Every evaluation set, run as a test: each must stay within the floors it measured (tests/eval/floors.toml), so a
change that loses answers fails. Sets kept unread there are never asked."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from conftest import seed_reports

ROOT = Path(__file__).resolve().parents[2]


def _bench_eval():
    spec = importlib.util.spec_from_file_location("bench_eval", ROOT / "bench" / "eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _bench_eval()
import floors  # noqa: E402  (bench/floors.py, on the path bench/eval.py sets)

LINES = floors.read_floors(bench.FLOORS)
GUARDED = [name for name in bench.SETS if isinstance(LINES.get(name), dict)]


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory):
    """Each set's report, asked once per session of stores that copy one import of the shared reports."""
    stores = bench.Stores(tmp_path_factory.mktemp("eval"), bench.shared_reports(seed_reports()))
    reports = {}

    def report(name: str):
        if name not in reports:
            questions, half = bench.SETS[name]
            reports[name] = bench.evaluate(stores, questions, half=half, search=False)
        return reports[name]

    return report


@pytest.mark.parametrize("name", GUARDED)
def test_each_set_stays_within_its_floors(evaluated, name):
    report = evaluated(name)
    out = floors.out_of_bounds(report.overall.mean(), LINES[name])
    assert not out, f"{name} {out}; `python bench/eval.py --set {name} --misses` lists what it missed, first:\n" + "\n".join(
        report.misses[:20])


def test_every_set_has_floors_or_is_kept_unread():
    unlisted = [name for name in bench.SETS if name not in LINES]
    assert not unlisted, (
        f"{', '.join(unlisted)}: no line in tests/eval/floors.toml. Guard a set with "
        f"`python bench/eval.py --write-floors --set NAME`, or keep it blind with the line NAME = \"unread\"")
    assert set(LINES) <= set(bench.SETS), f"floors for sets that are not there: {sorted(set(LINES) - set(bench.SETS))}"


def test_the_project_s_own_questions_cover_every_question_shape(evaluated):
    report = evaluated("own")
    assert report.overall.count >= 120
    assert {kind for kind, scores in report.by_kind.items() if scores.count >= 8} >= {
        "yesno", "who", "count", "relation", "time", "person", "area-time", "generic", "text",
    }


def test_a_set_kept_unread_is_not_even_opened(monkeypatch, tmp_path):
    for batch in ("blind7", "blind8"):
        (tmp_path / batch).mkdir()
        (tmp_path / batch / "questions.json").write_text("not read", encoding="utf-8")
    (tmp_path / "blind9").mkdir()
    (tmp_path / "blind9" / "questions.json").write_text(json.dumps({"questions": [{"q": "?"}]}), encoding="utf-8")
    monkeypatch.setattr(bench, "EVAL", tmp_path)
    sets = bench._batches({"measure7", "measure8"})
    assert sets == {"measure7": (tmp_path / "blind7" / "questions.json", "measure"),
                    "measure8": (tmp_path / "blind8" / "questions.json", "measure"),
                    "measure9": (tmp_path / "blind9" / "questions.json", None)}
    with pytest.raises(json.JSONDecodeError):
        bench._batches({"measure7"})


def test_floors_are_the_figures_less_the_margin_and_a_ceiling_on_saying_none_merged():
    measured = {"questions": 90, "precision": 0.899, "recall": 0.9204, "first line": float("nan"), "said none merged": 1}
    assert floors.floors_of(measured) == {"precision": 0.879, "recall": 0.9, "said none merged": 1}
    bounds = floors.floors_of(measured)
    assert floors.out_of_bounds(measured, bounds) == {}
    assert floors.out_of_bounds({**measured, "precision": 0.838, "said none merged": 2}, bounds) == {
        "precision": "0.838 < 0.879", "said none merged": "2 > 1"}


def test_the_floors_file_is_one_line_a_set_and_keeps_unread_sets(tmp_path):
    path = tmp_path / "floors.toml"
    lines = {"measure50": "unread", "own": {"precision": 0.93, "recall": 0.947, "first line": 0.961, "said none merged": 0}}
    floors.write_floors(path, lines, ["own", "measure50"])
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[-2:] == ['own = {precision = 0.930, recall = 0.947, "first line" = 0.961, "said none merged" = 0}',
                                      'measure50 = "unread"']
    assert floors.read_floors(path) == lines
    path.write_text(text + 'measure51 = "later"\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="measure51 is neither floors"):
        floors.read_floors(path)


def test_sets_scored_together_weigh_every_question_the_same():
    one, two = bench.Report(), bench.Report()
    one.overall.add({"recall@10": 1.0, "hit@3": 1.0, "precision": 1.0, "recall": 1.0}, True)
    for _ in range(3):
        two.overall.add({"recall@10": None, "hit@3": None, "precision": 0.0, "recall": 0.0}, None)
    together = bench.Report()
    together.merge(one)
    together.merge(two)
    figures = together.overall.mean()
    assert (figures["questions"], figures["precision"], figures["recall@10"], figures["first line"]) == (4, 0.25, 1.0, 1.0)
