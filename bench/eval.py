"""How well search finds and answers choose: search recall@10 and hit@3, and the precision and recall of citations.

    python bench/eval.py [--set own|tune|tune2|measure|measure32 ...] [--questions FILE] [--seeds ../shared/seeds] [--misses]
    python bench/eval.py --questions feedback.jsonl [--db PATH] [--misses]
    python bench/eval.py --model [--set ...] [--db PATH]
    python bench/eval.py --write-floors [--set ...]

Imports the seed reports and our own reports (store/sources/sample_reports) into a fresh
store, asks every question of the set without a model, and compares with the
PRs a careful person would cite. For search: recall@10 is the share of the
expected PRs in the first 10 results, out of at most 10; hit@3 is whether one
of the first three is expected. For answers: precision is the share of cited
PRs that are expected, recall the share of expected PRs cited (a question
expecting none is answered right by citing none). "first line" is the share of
questions with a known answer (yes/no, who, how many) whose first line gives it.
The baseline is plain BM25 over the question's words, citing its top 8 as the
answers once did. Skips (exit 0) without the seeds.

Sets are scored apart: our own questions (`own`); the first blind set
(tests/eval/blind), written from the reports by someone who had not read the
code, in the half that tuning may look at (`tune`) and the half it never did
(`measure`); a second blind batch written later for tuning (`tune2`); two more
in halves (`tune3` and `measure3`, `tune4` and `measure4`); a fifth, all for
measuring (`measure5`); then thirty more, two or three at a time, each read
once as a whole when it arrived and then tuned on (`measure6` to `measure31`
and `measure34` to `measure37`). Two (`measure32`, `measure33`) were written
when a round of tuning began and read once after it ended; tuning has read them
since. Of the ten written for the latest round, six were read once each on
arrival and then tuned on (`measure40` to `measure43`, `measure46`,
`measure47`), and four (`measure38`, `measure39`, `measure44`, `measure45`)
were kept unread until the round's code was final. Batches 3 and 5-47 bring
days of reports of their own. "said none merged" counts first lines that say no
PR merged in the time asked while PRs did. Sets named together are also scored
as one. The figures to quote are those four's, together, which nothing was
tuned on; docs/answers.md says which sets were read and how often.

A team's own questions come from `prdigest feedback export --format jsonl`: one line per answer
its people marked 👎, {"q", "cited", "expected", "comment", "repo", "now"}. They are asked of a
copy of the team's store (--db, default PRDIGEST_DB) as it stood when each was asked. A line
whose "expected" lists PRs is scored like any question; one whose "expected" is null (the person
did not say which PRs) counts as fixed when the answer no longer cites exactly what it cited then.

Every tests/eval/blindN folder is a set as soon as it is there: named measureN,
or tuneN and measureN for a batch whose questions are marked in halves. A
question asked in a thread is asked after its earlier questions, each answered
in its turn, as in Slack. The reports every set shares are imported once per
run; each store as of a time is a copy of them with its set's own days.

tests/eval/floors.toml holds each set's floors (see bench/floors.py), and
tests/eval/test_eval.py fails a set out of them. A set kept unread there
("unread") is asked only when named with --set, and its folder is not opened
otherwise. `--write-floors` measures every set that has floors again and
rewrites their lines, or the sets named with --set (a new set, or one kept
unread, is given floors only so).

`--model` answers with the model configured as the bot reads it
(PRDIGEST_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY). Its replies are kept in the
store (--db, default PRDIGEST_DB) by model, prompt version and the exact
request, so asking again costs nothing; the run ends with the calls and tokens
spent and the replies the store served. A failed call is answered without the
model, as in Slack.

`--dump FILE` writes, for every question scored, one JSON line: its set, the
question and its thread, the first 10 PRs search ranks, the PRs the answer
cites, the answer's first line and a digest of its whole text. Two dumps of
the same sets compare two versions of the code question by question.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from floors import floors_of, read_floors, unread, write_floors  # noqa: E402

from bot.answers.answer import answer_question, answer_reading  # noqa: E402
from bot.answers.answered import Answer  # noqa: E402
from bot.config import Settings  # noqa: E402
from store.days import to_utc_text  # noqa: E402
from store.db import open_db  # noqa: E402
from store.retrieval.search import search_shown  # noqa: E402
from store.retrieval.thread import Reading, Turn, read_in_thread  # noqa: E402
from store.sources.importer import import_file  # noqa: E402
from store.sources.sample import SAMPLE_DIR  # noqa: E402

if TYPE_CHECKING:
    from bot.model.client import LLM

EVAL = ROOT / "tests" / "eval"
QUESTIONS = EVAL / "questions.json"
FLOORS = EVAL / "floors.toml"


def _batches(kept_unread: set[str]) -> dict[str, tuple[Path, str | None]]:
    """Every blind batch in tests/eval, in the order they came, as sets: name -> (questions, the half asked).

    The first blind batch is in halves; a second, written later by someone else who had not read the code, is all
    for tuning; a third (over two more days of reports of its own) and a fourth are in halves. From the fifth on,
    each batch brings one more day of reports and is all for measuring. A batch's questions say which half each
    is in (none: measure); a batch with one half is one set, named after it. A batch with a set kept unread is not
    opened: its sets are the ones kept unread.
    """
    sets: dict[str, tuple[Path, str | None]] = {}
    folders = [folder for folder in EVAL.glob("blind*") if (folder / "questions.json").is_file()]
    for folder in sorted(folders, key=lambda folder: int(folder.name.removeprefix("blind") or 1)):
        batch = folder.name.removeprefix("blind")
        questions = folder / "questions.json"
        blind = [half for half in ("tune", "measure") if f"{half}{batch}" in kept_unread]
        if blind:
            halves = blind
        else:
            items = json.loads(questions.read_text(encoding="utf-8"))["questions"]
            halves = sorted(dict.fromkeys(item.get("half") or "measure" for item in items), reverse=True)
        sets.update({f"{half}{batch}": (questions, half if blind or len(halves) > 1 else None) for half in halves})
    return sets


# Sets kept unread (tests/eval/floors.toml): asked only when named, their folders not opened otherwise.
UNREAD = unread(read_floors(FLOORS))
# name: (questions, the half of them asked; None for all)
SETS: dict[str, tuple[Path, str | None]] = {"own": (QUESTIONS, None), **_batches(UNREAD)}
REPORTS = SAMPLE_DIR  # our own reports, which prdigest also ships as its examples
SEEDS = ROOT.parent / "shared" / "seeds"
BASELINE_CITES = 8
METRICS = ("recall@10", "hit@3", "precision", "recall")


@dataclass
class Scores:
    count: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(METRICS, 0.0))
    searched: int = 0  # questions that expect PRs: search is scored on those only
    lines: int = 0  # questions with a known first-line answer
    lines_right: int = 0
    false_empty: int = 0  # first lines saying nothing merged in a time that has PRs

    def add(self, figures: dict[str, float | None], line_right: bool | None) -> None:
        self.count += 1
        self.searched += figures["recall@10"] is not None
        for name in METRICS:
            self.sums[name] += figures[name] or 0.0
        if line_right is not None:
            self.lines += 1
            self.lines_right += line_right

    def merge(self, other: Scores) -> None:
        self.count += other.count
        self.searched += other.searched
        for name in METRICS:
            self.sums[name] += other.sums[name]
        self.lines += other.lines
        self.lines_right += other.lines_right
        self.false_empty += other.false_empty

    def mean(self) -> dict[str, float]:
        means = {"questions": self.count}
        for name in METRICS:
            n = self.searched if name in ("recall@10", "hit@3") else self.count
            means[name] = self.sums[name] / n if n else float("nan")
        means["first line"] = self.lines_right / self.lines if self.lines else float("nan")
        means["said none merged"] = self.false_empty
        return means


@dataclass
class Report:
    overall: Scores = field(default_factory=Scores)
    baseline: Scores = field(default_factory=Scores)
    by_kind: dict[str, Scores] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    unspecified: int = 0  # answers marked wrong without the PRs they should have cited
    repeated: int = 0  # of those, the ones still answered with exactly the same citations
    # What each question got, in the order asked, for --dump.
    answered: list[dict] = field(default_factory=list)

    def merge(self, other: Report) -> None:
        self.overall.merge(other.overall)
        self.baseline.merge(other.baseline)
        for kind, scores in other.by_kind.items():
            self.by_kind.setdefault(kind, Scores()).merge(scores)
        self.misses.extend(other.misses)
        self.unspecified += other.unspecified
        self.repeated += other.repeated
        self.answered.extend(other.answered)


def search_figures(found: list[int], expected: set[int]) -> dict[str, float | None]:
    if not expected:
        return {"recall@10": None, "hit@3": None}
    return {
        "recall@10": len(set(found[:10]) & expected) / min(10, len(expected)),
        "hit@3": float(bool(set(found[:3]) & expected)),
    }


def citation_figures(cited: list[int], expected: set[int]) -> dict[str, float]:
    right = len(set(cited) & expected)
    return {
        "precision": right / len(set(cited)) if cited else float(not expected),
        "recall": right / len(expected) if expected else float(not cited),
    }


def first_line_right(item: dict, text: str) -> bool | None:
    """Whether the answer's first line gives the known answer; None when the question has none to check."""
    if "answer" not in item:
        return None
    line = text.split("\n", 1)[0]
    form, known = item.get("form"), item["answer"]
    if form == "yesno":
        return line.startswith("Yes") if known in (True, "yes") else line.startswith("No")
    if form == "who":
        logins = [known] if isinstance(known, str) else known
        return all(re.search(rf"\b{re.escape(login)}\b", line, re.IGNORECASE) for login in logins)
    if form == "count":
        return bool(re.search(rf"(?<![\d#]){int(known)}(?!\d)", line))
    return None


def says_none_merged(db, repo: str, question, text: str) -> bool:
    """Whether the first line says no PR merged in the time asked (with nothing else to narrow it but the type
    asked, "no trivial PR merged …") while some did."""
    line = text.split("\n", 1)[0]
    if question.time is None or not re.match(r"No (?:\w+ )?PRs? ", line) or question.time.label not in line:
        return False
    if re.search(r"\b(?:about|by|in|touching|leaving\s+out)\b", line.replace(question.time.label, "")):
        return False  # nothing merged about the words, by the person, in the area asked: no claim about the day
    start, end = question.time.start, question.time.end
    return db.execute(
        "select 1 from prs where repo = ? and merged_at >= ? and merged_at < ? and (? is null or type = ?) limit 1",
        [repo, to_utc_text(start) if start else "", to_utc_text(end) if end else "9999", question.pr_type, question.pr_type],
    ).fetchone() is not None


def baseline_ranking(db, repo: str, text: str) -> list[int]:
    """Plain BM25 over every word of the question, no filters, synonyms or fields."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    if not words:
        return []
    expression = " OR ".join(f'"{word}"' for word in words)
    rows = db.execute(
        "select prs.number from prs_fts join prs on prs.id = prs_fts.rowid "
        "where prs_fts match ? and prs.repo = ? order by bm25(prs_fts) limit 10",
        [expression, repo],
    )
    return [row[0] for row in rows]


class Stores:
    """The stores questions are asked of, in `folder`: the reports every set shares (`shared`) are imported once
    per repository and time zone, and each store as of a time is a copy of that with its set's own days."""

    def __init__(self, folder: Path, shared: list[Path]) -> None:
        self.folder = folder
        self.shared = shared
        self._bases: dict[tuple[str, str], Path] = {}
        self._numbers = itertools.count()

    @contextmanager
    def as_of(self, now: datetime, tz: ZoneInfo, repo: str, own: list[Path]) -> Iterator:
        """A store holding what had merged by `now`: a question never sees PRs merged after it was asked."""
        path = self.folder / f"eval-{next(self._numbers)}.db"
        _copy(self._base(tz, repo), path)
        db = open_db(path)
        try:
            for file in own:
                import_file(db, file, tz, repo)
            db.execute("delete from prs where merged_at > ?", [to_utc_text(now)])
            db.conn.commit()
            yield db
        finally:
            db.close()
            for written in (path, path.with_name(f"{path.name}-wal"), path.with_name(f"{path.name}-shm")):
                written.unlink(missing_ok=True)

    def _base(self, tz: ZoneInfo, repo: str) -> Path:
        key = (tz.key, repo)
        if key not in self._bases:
            path = self.folder / f"base-{len(self._bases)}.db"
            db = open_db(path)
            for file in self.shared:
                import_file(db, file, tz, repo)
            db.close()
            self._bases[key] = path
        return self._bases[key]


def _copy(source: Path, target: Path) -> None:
    """A copy of the store at `source`, through SQLite's backup: its write-ahead log included."""
    reading, writing = sqlite3.connect(source), sqlite3.connect(target)
    try:
        reading.backup(writing)
    finally:
        reading.close()
        writing.close()


def shared_reports(seeds: list[Path]) -> list[Path]:
    """The reports every set is asked over: the seed reports, then our own."""
    return [*seeds, *sorted(REPORTS.glob("*.md"))]


def evaluate(stores: Stores, questions_path: Path = QUESTIONS, half: str | None = None, *, search: bool = True,
             llm: LLM | None = None) -> Report:
    """The questions of a set (of its `half`, when named) asked of `stores`; `search` scores search and the BM25
    baseline beside the answers, and `llm` answers with that model."""
    spec = json.loads(questions_path.read_text(encoding="utf-8"))
    tz = ZoneInfo(spec["timezone"])
    repo = spec["repo"]
    settings = Settings.from_env({"PRDIGEST_REPOS": repo, "PRDIGEST_TIMEZONE": tz.key, "PRDIGEST_DB": "unused"})
    report = Report()
    by_now: dict[datetime, list[dict]] = {}
    for item in spec["questions"]:
        if half is not None and (item.get("half") or "measure") != half:
            continue
        by_now.setdefault(datetime.fromisoformat(item.get("now", spec["now"])), []).append(item)
    # A set may bring reports of its own (one folder or several), beside the ones every set shares.
    folders = spec.get("reports", [])
    own_reports = [file for folder in ([folders] if isinstance(folders, str) else folders)
                   for file in sorted((questions_path.parent / folder).glob("*.md"))]
    for now, items in sorted(by_now.items()):
        with stores.as_of(now, tz, repo, own_reports) as db:
            for item in items:
                ask(db, settings, repo, now, item, report, search=search, llm=llm)
    return report


def read_lines(path: Path) -> list[dict]:
    """The evaluation lines of a JSON Lines file (`prdigest feedback export`); SystemExit naming a bad line."""
    lines = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            assert isinstance(line, dict) and isinstance(line["q"], str) and isinstance(line["repo"], str)
            assert line.get("expected") is None or all(isinstance(n, int) for n in line["expected"])
            datetime.fromisoformat(line["now"])
        except (ValueError, KeyError, TypeError, AssertionError):
            raise SystemExit(f"{path}:{number}: not an evaluation line with q, repo, now and expected (null or PR numbers)") from None
        lines.append(line)
    return lines


def is_lines(path: Path) -> bool:
    """Whether `path` holds evaluation lines, one JSON object a line, rather than one questions file."""
    if path.suffix == ".jsonl":
        return True
    try:
        return not isinstance(json.loads(path.read_text(encoding="utf-8")).get("questions"), list)
    except (ValueError, AttributeError):
        return True


def evaluate_lines(lines: list[dict], store: Path, llm: LLM | None = None) -> Report:
    """The lines asked of a copy of `store`, each as the store stood when it was asked: newest first, the copy
    losing the PRs merged after each time in turn, so one copy serves every line."""
    report = Report()
    tz = Settings.from_env().timezone
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "feedback.db"
        source = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        target = sqlite3.connect(copy)
        source.backup(target)
        source.close()
        target.close()
        db = open_db(copy)
        for line in sorted(lines, key=lambda line: datetime.fromisoformat(line["now"]), reverse=True):
            now = datetime.fromisoformat(line["now"])
            db.execute("delete from prs where merged_at > ?", [to_utc_text(now)])
            db.conn.commit()
            settings = Settings.from_env({"PRDIGEST_REPOS": line["repo"], "PRDIGEST_TIMEZONE": tz.key, "PRDIGEST_DB": "unused"})
            if line.get("expected") is None:
                ask_again(db, settings, line, now, report, llm)
            else:
                ask(db, settings, line["repo"], now, {**line, "kind": "feedback"}, report, llm=llm)
        db.close()
    return report


def ask_again(db, settings: Settings, line: dict, now: datetime, report: Report, llm: LLM | None = None) -> None:
    """A question marked wrong with no PRs named: it counts as fixed when its citations changed."""
    turns = _thread(db, settings, line["repo"], line, now, llm)
    _, answer = asked_in_thread(db, settings, line["repo"], line["q"], turns, now, llm)
    report.unspecified += 1
    if sorted(set(answer.citations)) == sorted(set(line.get("cited", []))):
        report.repeated += 1
        comment = f" (comment: {line['comment'][:120]!r})" if line.get("comment") else ""
        report.misses.append(f"[feedback, no PRs named] {line['q']!r}: cites {sorted(set(answer.citations))} again{comment}")


def ask(db, settings: Settings, repo: str, now: datetime, item: dict, report: Report, *, search: bool = True,
        llm: LLM | None = None) -> None:
    expected = set(item["expected"])
    turns = _thread(db, settings, repo, item, now, llm)
    reading, answer = asked_in_thread(db, settings, repo, item["q"], turns, now, llm)
    question = reading.asked
    found = search_shown(db, repo, question, limit=10).numbers if search else []
    unsearched = {"recall@10": None, "hit@3": None}
    figures = {**(search_figures(found, expected) if search else unsearched), **citation_figures(answer.citations, expected)}
    line_right = first_line_right(item, answer.text)
    false_empty = says_none_merged(db, repo, question, answer.text)
    for scores in (report.overall, report.by_kind.setdefault(item["kind"], Scores())):
        scores.add(figures, line_right)
        scores.false_empty += false_empty
    report.answered.append({
        "q": item["q"], "history": [turn.text for turn in turns], "now": now.isoformat(), "search": found[:10],
        "cites": answer.citations, "line": answer.text.split("\n", 1)[0], "text": hashlib.sha1(answer.text.encode()).hexdigest()[:16],
    })
    if search:
        ranked = baseline_ranking(db, repo, item["q"])
        report.baseline.add({**search_figures(ranked, expected), **citation_figures(ranked[:BASELINE_CITES], expected)}, None)
    if figures["precision"] < 1 or figures["recall"] < 1 or line_right is False or false_empty or (figures["recall@10"] or 1) < 1:
        extra = sorted(set(answer.citations) - expected)
        missed = sorted(expected - set(answer.citations))
        report.misses.append(
            f"[{item['kind']}] {item['q']!r}: precision {figures['precision']:.2f}, recall {figures['recall']:.2f}, "
            f"search recall@10 {figures['recall@10'] if figures['recall@10'] is None else round(figures['recall@10'], 2)}"
            f"{'' if line_right is not False else ', first line wrong'}{', says none merged' if false_empty else ''}; "
            f"extra {extra}, missed {missed}; "
            f"first line: {answer.text.splitlines()[0][:160]!r}"
        )


def _thread(db, settings: Settings, repo: str, item: dict, now: datetime, llm: LLM | None = None) -> list[Turn]:
    """The thread a question was asked in, as it went: each earlier question answered in its turn. Earlier questions
    are text, or {"q": text} (one writer wrote them so)."""
    turns: list[Turn] = []
    for earlier in item.get("history", []):
        text = earlier["q"] if isinstance(earlier, dict) else earlier
        turns.append(Turn(text, {repo: asked_in_thread(db, settings, repo, text, turns, now, llm)[1].answered}))
    return turns


def asked_in_thread(db, settings: Settings, repo: str, text: str, turns: list[Turn], now: datetime,
                    llm: LLM | None = None) -> tuple[Reading, Answer]:
    """A question read after the turns of its thread, and its answer: with `llm` as in Slack with a model, where
    a failed call is answered without it."""
    reading = read_in_thread(db, text, turns, repo, settings.timezone, now)
    if llm is not None:
        from bot.model.client import LLMError  # the client loads openai, which only a model needs

        try:
            return reading, answer_question(db, settings, text, turns, now, llm, repo)
        except LLMError:
            pass  # counted by the model
    return reading, answer_reading(db, settings, repo, reading)


def main() -> None:
    args = _arguments()
    llm = _model(args) if args.model else None
    try:
        if args.questions and args.questions.exists() and is_lines(args.questions):
            _feedback(args, llm)
            return
        seeds = sorted(args.seeds.glob("*.md")) if args.seeds.is_dir() else []
        if not seeds:
            print(f"no seed reports in {args.seeds}; skipping the evaluation")
            return
        with tempfile.TemporaryDirectory() as folder:
            stores = Stores(Path(folder), shared_reports(seeds))
            if args.write_floors:
                _write_floors(args, stores)
            else:
                _measure(args, stores, llm)
    finally:
        if llm is not None:
            print(f"\n{llm.spent()}")
            llm.close()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", choices=sorted(SETS),
                        help="the sets to score (default: all but those kept unread)")
    parser.add_argument("--questions", type=Path, help="score this questions file (or feedback.jsonl) instead of the sets")
    parser.add_argument("--seeds", type=Path, default=SEEDS)
    parser.add_argument("--db", type=Path, help="the store evaluation lines are asked of, and model replies kept in "
                                                "(default: PRDIGEST_DB)")
    parser.add_argument("--misses", action="store_true", help="list the questions not answered exactly")
    parser.add_argument("--dump", type=Path, metavar="FILE", help="write what each question got to FILE, one JSON line each")
    parser.add_argument("--model", action="store_true",
                        help="answer with the configured model (PRDIGEST_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY), its "
                             "replies kept in the store")
    parser.add_argument("--write-floors", action="store_true",
                        help=f"measure the sets with floors (or those named) and write their floors to {FLOORS.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.write_floors and (args.model or args.questions):
        parser.error("--write-floors measures the sets without a model: it takes --set and --seeds only")
    return args


def _model(args: argparse.Namespace):
    """The configured model, its replies kept in the store (--db, or PRDIGEST_DB); SystemExit when none is."""
    from bot.answers.model_prompt import ANSWER_PROMPT_VERSION
    from bot.model.cached import cached_llm_from_settings
    from bot.model.client import unconfigured_reason

    settings = Settings.from_env()
    reason = unconfigured_reason(settings)
    if reason:
        raise SystemExit(f"--model: {reason}")
    store = args.db or settings.db_path
    print(f"answering with {settings.model}; its replies are kept in {store}")
    return cached_llm_from_settings(settings, open_db(store), ANSWER_PROMPT_VERSION)


def _feedback(args: argparse.Namespace, llm: LLM | None) -> None:
    store = args.db or Settings.from_env().db_path
    if not store.exists():
        raise SystemExit(f"there is no store at {store}: give the store the answers came from with --db")
    lines = read_lines(args.questions)
    print(f"\n== {args.questions}: {len(lines)} answers marked wrong, asked of {store}")
    print_report(evaluate_lines(lines, store, llm), args.misses)


def _measure(args: argparse.Namespace, stores: Stores, llm: LLM | None) -> None:
    if args.questions:
        chosen = {str(args.questions): (args.questions, None)}
    else:
        chosen = {name: SETS[name] for name in args.set or [name for name in SETS if name not in UNREAD]}
        left = sorted(name for name in SETS if name in UNREAD and name not in chosen)
        if left:
            print(f"kept unread ({FLOORS.relative_to(ROOT)}), not asked: {', '.join(left)}")
    together, scored = Report(), []
    dumped: list[str] = []
    for name, (questions, half) in chosen.items():
        if not questions.exists():
            print(f"\n== {name}: {questions} is missing; skipped")
            continue
        print(f"\n== {name}: {questions.relative_to(ROOT) if questions.is_relative_to(ROOT) else questions}"
              f"{f', half {half!r}' if half else ''}")
        report = evaluate(stores, questions, half=half, llm=llm)
        print_report(report, args.misses)
        dumped.extend(json.dumps({"set": name, **answered}, ensure_ascii=False) for answered in report.answered)
        together.merge(report)
        scored.append(name)
    if args.dump:
        args.dump.write_text("".join(f"{line}\n" for line in dumped), encoding="utf-8")
        print(f"\n{len(dumped)} questions written to {args.dump}")
    if args.set and len(scored) > 1:
        # Several sets asked by name are also scored as one, every question counting the same.
        print(f"\n== together: {', '.join(scored)}")
        print_report(together, misses=False)


def _write_floors(args: argparse.Namespace, stores: Stores) -> None:
    """Each set's floors from its figures now: the sets named, or every set that has floors. A set kept unread
    is measured only when named, and a set with no line is reported, not measured."""
    lines = read_floors(FLOORS)
    names = args.set or [name for name, value in lines.items() if isinstance(value, dict) and name in SETS]
    for name in names:
        questions, half = SETS[name]
        figures = evaluate(stores, questions, half=half, search=False).overall.mean()
        lines[name] = floors_of(figures)
        measured = ", ".join(f"{figure} {figures[figure]:.3f}" for figure in ("precision", "recall", "first line"))
        print(f"{name} ({figures['questions']} questions): {measured}, said none merged {figures['said none merged']}")
    write_floors(FLOORS, lines, SETS)
    print(f"{len(names)} sets' floors written to {FLOORS.relative_to(ROOT)}")
    unlisted = [name for name in SETS if name not in lines]
    if unlisted:
        print(f"no floors, and not kept unread: {', '.join(unlisted)} (name them with --set to give them floors)")


def print_report(report: Report, misses: bool) -> None:
    print(f"{'kind':<12} {'n':>4} {'recall@10':>10} {'hit@3':>7} {'precision':>10} {'recall':>7} {'first line':>11} "
          f"{'said none merged':>17}")
    rows = [*sorted(report.by_kind.items()), ("all", report.overall), ("BM25 only", report.baseline)]
    for kind, scores in rows:
        m = scores.mean()
        shown = {name: "" if value != value else f"{value:.3f}" for name, value in m.items()}  # NaN: nothing to score
        print(f"{kind:<12} {m['questions']:>4} {shown['recall@10']:>10} {shown['hit@3']:>7} "
              f"{shown['precision']:>10} {shown['recall']:>7} {shown['first line']:>11} {m['said none merged']:>17}")
    if report.unspecified:
        print(f"marked wrong without the PRs to cite: {report.unspecified}; still citing exactly the same: {report.repeated}")
    if misses:
        print("\n".join(["", *report.misses]))


if __name__ == "__main__":
    main()
