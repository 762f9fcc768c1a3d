"""How fast `prdigest import` stores PRs from daily reports, and how many SQL statements each PR costs.

    python bench/import_speed.py [--days 100] [--rounds 3]

Writes --days synthetic daily reports of 40 PRs (the PRs of bench/search_latency.py,
rendered by the report writer) and imports them into a fresh store, oldest day
first, then again newest first into another fresh store (a backfill), through
`import_files`, as the command does. Timing covers reading, parsing, classifying
and storing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_latency import PER_DAY, REPO, TZ, arrival, generate

from store.db import open_db
from store.report.markdown import render_report
from store.sources.importer import Imported, import_files


def write_reports(folder: Path, days: int) -> list[Path]:
    """One report file a day, oldest first."""
    paths = []
    for batch in arrival(generate(days * PER_DAY), "merge"):
        day = batch[0].merged_at.astimezone(TZ).date()
        newest_first = sorted(batch, key=lambda pr: pr.merged_at, reverse=True)
        path = folder / f"report-{day.isoformat()}.md"
        path.write_text(render_report("Engine Merged PR Report", day, "PST", newest_first, TZ))
        paths.append(path)
    return paths


def import_all(paths: list[Path], store: Path, trace: bool = False) -> tuple[float, int, int | None]:
    """Seconds to import every file into a fresh store, PRs imported, and SQL statements run when traced."""
    store.unlink(missing_ok=True)
    db = open_db(store)
    statements: list[str] = []
    if trace:
        # Tracing costs time of its own (SQLite expands every statement's values), so traced runs are not timed.
        db.conn.set_trace_callback(statements.append)
    started = time.perf_counter()
    count = sum(done.count for done in import_files(db, paths, TZ, REPO) if isinstance(done, Imported))
    seconds = time.perf_counter() - started
    db.close()
    return seconds, count, count_statements(statements) if trace else None


def count_statements(traced: list[str]) -> int:
    """Statements our code ran, from what SQLite traced.

    FTS5's own reads and writes of its index show as "-- " comments; they are not
    ours. Each run of a trigger is reported again with the text of the statement
    that fired it, so a text repeated in a row is one statement.
    """
    ours = [sql for sql in traced if not sql.startswith("--")]
    return sum(1 for index, sql in enumerate(ours) if index == 0 or sql != ours[index - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_reports(folder, args.days)
        print(f"{'order':<10} {'PRs':>6} {'PRs/s p50':>10} {'PRs/s min':>10} {'SQL / PR':>9}")
        for order, files in (("oldest", paths), ("newest", paths[::-1])):
            runs = [import_all(files, folder / "store.db") for _ in range(args.rounds)]
            rates = [count / seconds for seconds, count, _ in runs]
            _, count, statements = import_all(files, folder / "store.db", trace=True)
            print(f"{order + ' first':<10} {count:>6} {statistics.median(rates):>10.0f} {min(rates):>10.0f} {statements / count:>9.1f}")


if __name__ == "__main__":
    main()
