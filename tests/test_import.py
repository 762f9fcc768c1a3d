import json

from conftest import FIXTURES


def _count(db) -> int:
    return db.execute("select count(*) from prs").fetchone()[0]


def _dump(db) -> list:
    return [dict(row) for row in db["prs"].rows_where(order_by="id", select="repo, number, title, what_changed, merged_at, files")]


def test_import_twice_never_duplicates(run_cli, db):
    path = str(FIXTURES / "report-2026-03-08.md")
    assert run_cli("import", path).code == 0
    first = _dump(db)
    result = run_cli("import", path, path)
    assert result.code == 0 and result.out.count("updated 3 PRs") == 2
    assert _count(db) == 3 and _dump(db) == first


def test_newer_version_of_a_report_updates(run_cli, db, tmp_path):
    newer = tmp_path / "report.md"
    text = (FIXTURES / "report-2026-03-08.md").read_text()
    newer.write_text(text.replace("Corrects a misspelled flag name", "Corrects two misspelled flag names"))
    run_cli("import", str(FIXTURES / "report-2026-03-08.md"))
    assert run_cli("import", str(newer)).code == 0
    row = db.execute("select what_changed, summary_source from prs where number = 4099").fetchone()
    assert row == ("Corrects two misspelled flag names in the quickstart guide.", "imported")
    assert _count(db) == 3


def test_bad_files_get_one_line_and_leave_the_store_alone(run_cli, db, tmp_path):
    run_cli("import", str(FIXTURES / "report-2026-03-07.md"))
    before = _dump(db)
    good = (FIXTURES / "report-2026-03-08.md").read_text()
    cases = {
        "empty.md": b"",
        "binary.md": bytes(range(256)),
        "latin1.md": "caf\u00e9 report".encode("latin-1"),
        "truncated.md": good[: len(good) // 2].encode(),
        "missing.md": good.replace("- **PR Number:** #4090\n", "").encode(),
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        result = run_cli("import", str(path))
        assert result.code == 1, name
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and name in lines[0] and "Traceback" not in result.err, (name, result.err)
    result = run_cli("import", str(tmp_path / "nope.md"))
    assert result.code == 1 and "nope.md" in result.err and len(result.err.strip().splitlines()) == 1
    assert _dump(db) == before


def test_a_report_is_stored_whole_or_not_at_all(run_cli, db):
    """SQLite refusing the last PR of a report leaves none of the report behind."""
    _refuse_pr_4090(db)
    result = run_cli("import", str(FIXTURES / "report-2026-03-08.md"))
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1
    assert _count(db) == 0
    assert db.execute("select count(*) from reports").fetchone()[0] == 0


def test_a_bad_file_among_good_ones_is_named_and_the_others_are_stored(run_cli, db, tmp_path):
    bad = tmp_path / "notes.md"
    bad.write_text("# Shopping list\n")
    result = run_cli(
        "import", str(FIXTURES / "report-2026-03-07.md"), str(bad), str(FIXTURES / "report-2026-03-08.md")
    )
    assert result.code == 1
    assert [line.split(" from ")[1] for line in result.out.splitlines()] == [
        str(FIXTURES / "report-2026-03-07.md"),
        str(FIXTURES / "report-2026-03-08.md"),
    ]
    assert len(result.err.strip().splitlines()) == 1 and "notes.md" in result.err
    assert _count(db) == 4


def _refuse_pr_4090(db) -> None:
    db.execute(
        "create trigger refuse before insert on prs when new.number = 4090 "
        "begin select raise(abort, 'disk full'); end"
    )


def test_files_said_to_be_imported_are_exactly_the_stored_ones(run_cli, db, monkeypatch, tmp_path):
    """Files share a transaction; a failed write takes back only files not yet reported, and names its file."""
    _refuse_pr_4090(db)
    bad = tmp_path / "notes.md"
    bad.write_text("# Shopping list\n")
    files = [str(FIXTURES / "report-2026-03-07.md"), str(bad), str(FIXTURES / "report-2026-03-08.md")]

    result = run_cli("import", *files)  # one group: 03-07 goes back with 03-08
    assert result.code == 1 and result.out == "" and _count(db) == 0
    assert result.err.splitlines() == [
        f"prdigest: error: {bad}: not a daily report: no 'Report Date' line in the header",
        f"prdigest: error: {files[2]}: cannot store it: disk full",
    ]

    monkeypatch.setattr("store.sources.importer.GROUP_PRS", 1)  # a group a file: 03-07 is committed first
    result = run_cli("import", *files)
    assert result.code == 1 and result.err.splitlines()[-1].endswith(f"{files[2]}: cannot store it: disk full")
    [line] = result.out.splitlines()
    assert line.startswith("imported 1 PR of ") and line.endswith(f"for 2026-03-07 from {files[0]}")
    assert _count(db) == 1


def test_the_write_lock_is_free_while_a_file_is_read(db, isolated_env, tmp_path):
    """A report arriving through a pipe does not keep other processes from writing meanwhile."""
    import os
    import sqlite3
    import threading

    from conftest import LA

    from store.db import open_db
    from store.sources.importer import import_files

    pipe = tmp_path / "report.md"
    os.mkfifo(pipe)
    importer = open_db(isolated_env)
    files = [FIXTURES / "report-2026-03-07.md", pipe]
    done: list = []
    reading = threading.Thread(target=lambda: done.extend(import_files(importer, files, LA, "acme/engine")))
    reading.start()
    other = sqlite3.connect(isolated_env, timeout=1, isolation_level=None)
    with open(pipe, "w") as writer:  # returns once the import opened the pipe to read it, after 03-07
        try:
            other.execute("begin immediate")
            other.execute("rollback")
        finally:
            writer.write((FIXTURES / "report-2026-03-08.md").read_text())
    reading.join(timeout=60)
    other.close()
    importer.close()
    assert [outcome.count for outcome in done] == [1, 3] and _count(db) == 4


def test_seed_reports_import_with_areas(run_cli, db):
    from conftest import seed_reports

    paths = [str(p) for p in seed_reports()]
    assert run_cli("import", *paths).code == 0
    total = _count(db)
    with_area = db.execute("select count(*) from prs where areas != '[]'").fetchone()[0]
    assert with_area / total >= 0.9
    assert json.loads(db.execute("select areas from prs where number = 35052").fetchone()[0])[:1] == ["rocm"]


def test_import_keeps_what_ingest_fetched(run_cli, db):
    """A report has no body, labels or diff size; importing it must not erase them."""
    from conftest import LA

    from store.report.markdown import parse_report
    from store.tables.prs import get_pr, save_pr

    fetched = parse_report((FIXTURES / "report-2026-03-08.md").read_text(), LA).prs[0]
    fetched.body, fetched.labels, fetched.additions, fetched.deletions = "Body text", ["rocm"], 40, 2
    save_pr(db, fetched)
    assert run_cli("import", str(FIXTURES / "report-2026-03-08.md")).code == 0
    stored = get_pr(db, "acme/engine", 4102)
    assert (stored.body, stored.labels, stored.additions, stored.deletions) == ("Body text", ["rocm"], 40, 2)
    assert stored.summary.source == "imported"


def test_importing_a_report_again_reads_prs_by_key(db):
    """Each lookup of an import reaches prs by (repo, number), id or title, never by scanning a repository."""
    from conftest import LA

    from store.sources.importer import import_file

    path = FIXTURES / "report-2026-03-08.md"
    import_file(db, path, LA, "acme/engine")
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    import_file(db, path, LA, "acme/engine")
    db.conn.set_trace_callback(None)
    reads = {sql for sql in statements if sql.lstrip().lower().startswith("select") and " prs " in f"{sql} "}
    assert reads
    for sql in reads:
        plan = " | ".join(row[3] for row in db.execute("explain query plan " + sql).fetchall())
        assert "SCAN prs" not in plan and "(repo=?)" not in plan, (sql, plan)

