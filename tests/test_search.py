import json
import re
from datetime import datetime

import pytest
from conftest import LA
from pr_factory import REPO, make_pr

from store.model import Summary
from store.retrieval.fts import match_expression
from store.retrieval.search import read_question, search_prs
from store.tables.prs import save_pr

# Saturday Mar 14 2026, evening in Los Angeles.
NOW = datetime(2026, 3, 14, 18, 0, tzinfo=LA)


def _at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=LA)


def _summary(what: str, risks: str = "") -> Summary:
    return Summary(what, "", risks, "", "imported")


CORPUS = [
    make_pr(501, "[Scheduler] Admit short prompts one step earlier", merged_at=_at(13, 9), author="grace-h",
            merged_by="linus-t", areas=["core"], files=["engine/core/scheduler.py"],
            summary=_summary("The scheduler now admits short prompts one step earlier to cut queueing.")),
    make_pr(502, "[ROCm] Enable the fused attention kernel on MI300", merged_at=_at(13, 11), author="ada-l",
            merged_by="grace-h", areas=["rocm", "attention"], files=["csrc/rocm/attention.cu"],
            summary=_summary("Turns on the fused attention kernel for MI300 GPUs.")),
    make_pr(503, "[EAGLE] Support draft models with tied embeddings", merged_at=_at(12, 15), author="ken-t",
            merged_by="linus-t", areas=["speculative-decoding"], files=["engine/spec_decode/eagle.py"],
            summary=_summary("Draft models that tie input and output embeddings load correctly.",
                             risks="Nightly builds drifting from the pinned image could mask failures.")),
    make_pr(504, "[Frontend] Stream usage stats in chat completions", merged_at=_at(12, 16), author="grace-h",
            merged_by="ada-l", areas=["frontend"], files=["engine/entrypoints/openai/serving_chat.py"],
            summary=_summary("The OpenAI-compatible server reports token usage while streaming.")),
    make_pr(505, "[Quantization] FP8 KV cache for the Triton backend", merged_at=_at(11, 10), author="ken-t",
            merged_by="ada-l", areas=["quantization", "kernels"], files=["engine/layers/quantization/fp8.py"],
            summary=_summary("Adds an FP8 KV cache path to the Triton attention backend.")),
    make_pr(506, "[CI] Pin the docker base image", merged_at=_at(10, 8), author="linus-t", merged_by="linus-t",
            areas=["ci"], files=[".buildkite/test-pipeline.yaml"],
            summary=_summary("Pins the CI docker base image so nightly builds stop drifting.",
                             risks="A stale pin may hide scheduler regressions in CI.")),
    make_pr(507, "Revert #501", merged_at=_at(13, 20), author="linus-t", merged_by="linus-t", areas=["core"],
            files=["engine/core/scheduler.py"],
            summary=_summary("Reverts the earlier admission change because it starved long prompts.")),
    make_pr(508, "[Bugfix] Fix MI300 hang broken by #502", merged_at=_at(14, 9), author="ada-l", merged_by="ken-t",
            areas=["rocm"], files=["csrc/rocm/attention.cu"],
            summary=_summary("Restores the barrier that #502 removed, which hung MI300 under load.")),
    make_pr(509, "[Doc] Explain the scheduler knobs", merged_at=_at(2, 10), author="grace-h", merged_by="linus-t",
            areas=["docs", "core"], files=["docs/scheduler.md"],
            summary=_summary("Documents every scheduler setting with examples.")),
]


@pytest.fixture
def store(db):
    for pr in CORPUS:
        save_pr(db, pr)
    # Another repository's PR never shows up in answers about this one.
    save_pr(db, make_pr(501, "[Scheduler] Elsewhere", repo="other/repo", url="https://github.com/other/repo/pull/501",
                        merged_at=_at(13), summary=_summary("scheduler scheduler scheduler")))
    return db


def _numbers(db, query: str, limit: int = 10) -> list[int]:
    return search_prs(db, query, REPO, LA, limit=limit, now=NOW).numbers


def test_free_text_ranks_titles_above_passing_mentions(store):
    assert _numbers(store, "drifting") == [506, 503]  # 503 says it only among its risks
    # An area word ranks the PRs that say it above the rest of the area.
    assert set(_numbers(store, "scheduler")[:2]) == {501, 509}
    assert 506 not in _numbers(store, "scheduler")


def test_synonyms_and_areas_find_other_words(store):
    assert _numbers(store, "speculative decoding")[0] == 503
    assert set(_numbers(store, "anything for AMD GPUs?")) == {502, 508}
    assert _numbers(store, "OpenAI-compatible server")[0] == 504


def test_time_filter_lists_newest_first(store):
    assert _numbers(store, "what merged yesterday?") == [507, 502, 501]
    assert _numbers(store, "what merged on Mar 12") == [504, 503]
    assert _numbers(store, "between Mar 10 and Mar 11") == [505, 506]


def test_a_listing_comes_in_the_order_asked(store):
    """Who has the most of the PRs asked about, the largest, the first to merge: their PRs lead, not the newest."""
    assert _numbers(store, "what merged yesterday?") == [507, 502, 501]
    assert _numbers(store, "who merged the most yesterday?") == [507, 501, 502]  # linus-t merged two of the three
    assert _numbers(store, "which area was busiest yesterday?") == [507, 501, 502]  # two in core
    assert _numbers(store, "first merge yesterday?") == [501, 502, 507]
    save_pr(store, make_pr(521, "[Build] Split the wheel", merged_at=_at(13, 10), files=["setup.py", "CMakeLists.txt"]))
    assert _numbers(store, "which pr touched the most files yesterday?")[0] == 521


def test_areas_named_together_rank_their_shared_members_first(store):
    save_pr(store, make_pr(530, "[CI] Retry the flaky ROCm jobs on ROCm runners", merged_at=_at(13, 15), areas=["ci"],
                           files=[".buildkite/rocm.yaml"], summary=_summary("Retries the ROCm jobs that flake on ROCm runners.")))
    save_pr(store, make_pr(531, "[Build] Pin the compiler image", merged_at=_at(11, 9), areas=["rocm", "ci"],
                           files=["docker/Dockerfile.rocm"], summary=_summary("Pins the compiler image the AMD agents build with.")))
    assert _numbers(store, "rocm ci changes")[0] == 531


def test_what_got_reverted_lists_each_revert_with_what_it_undid(store):
    save_pr(store, make_pr(532, "Revert #505", merged_at=_at(14, 10), areas=["quantization"],
                           summary=_summary("Reverts the FP8 KV cache path: it broke the Triton backend on older GPUs.")))
    assert _numbers(store, "what got reverted today?")[:2] == [532, 505]
    assert 505 not in _numbers(store, "how many reverts today?")  # a count counts the reverts


def test_was_it_relanded_lists_what_followed_the_pr_found(store):
    save_pr(store, make_pr(533, "[Scheduler] Reland #501 with a cap for long prompts", merged_at=_at(14, 11),
                           areas=["core"], summary=_summary("Brings back the earlier change, capped so long prompts still run.")))
    found = _numbers(store, "the short prompt admission change got reverted on mar 13, was it ever relanded?")
    assert found.index(533) == found.index(501) + 1  # merged after the day asked


def test_the_one_weekday_of_a_month_is_the_one_prs_merged_on(store):
    assert _numbers(store, "what merged on the monday in march?") == [509]  # Mar 2 had 509, last Monday nothing


def test_people_filter_authored_first(store):
    assert _numbers(store, "what did grace-h do this week?") == [501, 504, 502]
    assert _numbers(store, "merged by ada-l") == [504, 505]


def test_people_left_out_and_the_type_asked_narrow_the_search_itself(store):
    save_pr(store, make_pr(520, "[Misc] Bump a pin", merged_at=_at(13, 22), author="dependabot[bot]", merged_by="linus-t",
                           type="trivial"))
    assert _numbers(store, "what merged yesterday besides linus-t?") == [502]  # 507 and 520 involve linus-t
    assert _numbers(store, "what merged yesterday, not counting bots?") == [507, 502, 501]
    assert _numbers(store, "trivial prs yesterday") == [520]


def test_area_with_time_and_text(store):
    assert _numbers(store, "ROCm fixes today") == [508]
    assert _numbers(store, "scheduler changes since Mar 13")[:2] in ([507, 501], [501, 507])


def test_named_pr_brings_its_revert_and_fix(store):
    result = search_prs(store, "why was #501 reverted?", REPO, LA, now=NOW)
    assert result.numbers == [501, 507]
    assert result.hits[1].link.sentence() == "[#507] reverts [#501]"
    assert _numbers(store, "what broke after https://github.com/acme/engine/pull/502")[:2] == [502, 508]


def test_unknown_pr_number_says_so_and_searches_the_words(store):
    result = search_prs(store, "is #9999 about the scheduler?", REPO, LA, now=NOW)
    assert result.note == "#9999 is not in the store of acme/engine."
    assert 501 in result.numbers


def test_empty_filters_are_relaxed_with_a_note(store):
    result = search_prs(store, "ROCm on Mar 2", REPO, LA, now=NOW)
    assert result.note.startswith("No PRs merged on Mon Mar 2 in rocm; showing the nearest matches")
    assert set(result.numbers) == {502, 508}
    # Nearest in time first when nothing merged that day.
    nothing = search_prs(store, "what merged on Mar 5?", REPO, LA, now=NOW)
    assert nothing.note and nothing.numbers[:2] == [509, 506]
    assert _numbers(store, "what did grace-h merge on Mar 7", limit=2) == [509, 504]


def test_words_no_pr_uses_are_dropped_not_fatal(store):
    result = search_prs(store, "what did grace-h frobnicate yesterday?", REPO, LA, now=NOW)
    assert result.numbers == [501, 502] and result.note is None
    dropped = search_prs(store, "scheduler zyxxy changes", REPO, LA, now=NOW)
    assert [c.said for c in dropped.question.unknown] == ["zyxxy"] and 501 in dropped.numbers


def test_nonsense_finds_nothing_and_says_so(store):
    result = search_prs(store, "zyxxy quorple", REPO, LA, now=NOW)
    assert result.hits == [] and result.note == 'No PRs merged about "zyxxy", "quorple".'


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "NEAR(scheduler prompts)", "scheduler*", "-scheduler", "title:scheduler", "a OR b AND NOT c",
     "'; drop table prs; --", "{title}: x", "^scheduler", "schedul\u00e9r \u2603"],
)
def test_user_text_never_reaches_fts_unquoted(store, query):
    search_prs(store, query, REPO, LA, now=NOW)  # no error is the point
    expression = match_expression(read_question(store, query, REPO, LA, NOW)) or ""
    outside_quotes = re.sub(r'"(?:[^"]|"")*"', " ", expression)
    syntax = {"(", ")", "OR", "AND", ":", "{areas}", "{title", "what_changed", "impact}"}
    assert set(outside_quotes.replace("(", " ( ").replace(")", " ) ").split()) <= syntax, expression


def test_limit_and_scores(store):
    hits = search_prs(store, "scheduler", REPO, LA, limit=2, now=NOW).hits
    assert len(hits) == 2 and 0 < hits[1].score <= hits[0].score < 1
    named = search_prs(store, "#501", REPO, LA, now=NOW).hits
    assert named[0].score == 1.0 and named[1].score < 1.0


def _plan(db, query: str) -> str:
    return " | ".join(row[3] for row in db.execute("explain query plan " + query[0], query[1]).fetchall())


def test_queries_use_indexes(store):
    """Every shape of query search runs reaches rows through an index or FTS, never a table scan."""
    statements: list[tuple[str, list]] = []
    store.conn.set_trace_callback(lambda sql: statements.append(sql))
    for query in ("what merged yesterday?", "merged by ada-l this week", "grace-h", "ROCm fixes today", "scheduler", "#501"):
        search_prs(store, query, REPO, LA, now=NOW)
    store.conn.set_trace_callback(None)
    selects = {sql for sql in statements if sql.lstrip().lower().startswith(("select", "with"))}
    assert selects
    for sql in selects:
        plan = " | ".join(row[3] for row in store.execute("explain query plan " + sql).fetchall())
        assert "SCAN prs " not in plan + " " and not plan.endswith("SCAN prs"), (sql, plan)


def test_rarity_sample_is_counted_through_an_index(store, monkeypatch):
    """Past RARITY_SAMPLE PRs a word's rarity is counted among the newest ones, and so is their number: without
    ANALYZE's statistics (nothing runs it), that count must not read a whole index or table."""
    from store.retrieval import evidence

    monkeypatch.setattr(evidence, "RARITY_SAMPLE", 3)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    search_prs(store, "scheduler prompts", REPO, LA, now=NOW)
    store.conn.set_trace_callback(None)
    counts = [sql for sql in statements if sql.lstrip().lower().startswith("select count(*)")]
    assert counts
    for sql in counts:
        plan = " | ".join(row[3] for row in store.execute("explain query plan " + sql).fetchall())
        # FTS5 shows as a scan of its virtual table, which reads only the matching doclists.
        assert "SCAN" not in plan.replace("SCAN prs_fts VIRTUAL TABLE", ""), (sql, plan)


def test_cli_search_json(run_cli, store):
    result = run_cli("search", "scheduler", "--limit", "3", "--json", "--repo", REPO)
    assert result.code == 0, result.err
    rows = json.loads(result.out)
    assert len(rows) == 3 and set(rows[0]) == {"number", "title", "url", "score", "areas", "merged_at"}
    assert rows[0]["score"] >= rows[1]["score"] >= rows[2]["score"]
    plain = run_cli("search", "#501", "--repo", REPO)
    assert plain.code == 0 and plain.out.splitlines()[0].split()[1] == "#501"


def test_cli_search_errors_are_one_line(run_cli, store):
    for args in (["search", "   "], ["search", "x", "--limit", "0"], ["search"], ["search", "x", "--repo", "nope"],
                 ["search", "Feb 30", "--repo", REPO]):
        result = run_cli(*args)
        assert result.code == 2 and len(result.err.strip().splitlines()) == 1, (args, result.err)
    assert "Feb 30 is not a date" in run_cli("search", "Feb 30").err
    unknown = run_cli("search", "#9999", "--repo", REPO, "--json")
    assert unknown.code == 0 and json.loads(unknown.out) == []
    assert unknown.err.strip() == "prdigest: note: #9999 is not in the store of acme/engine."


def test_big_store_ranking_finds_the_same_prs(store, monkeypatch):
    """Stores past LOCAL_FROM rank a window's matches in a table of their own; the answers stay the same."""
    from store.retrieval.finding import ranking

    queries = ["scheduler", "speculative decoding", "ROCm fixes today", "drifting", "OpenAI-compatible server", "MI300"]
    small = {query: _numbers(store, query) for query in queries}
    monkeypatch.setattr(ranking, "LOCAL_FROM", 0)
    for query in queries:
        big = _numbers(store, query)
        assert big[0] == small[query][0] and set(big) == set(small[query]), query
    assert not store.conn.in_transaction  # the scratch table's writes are committed, no snapshot is held
    assert store.execute("select count(*) from temp.search_window").fetchone()[0] > 0


def test_big_store_window_scores_as_if_indexed_afresh(store, isolated_env):
    """The window table keeps the PRs the last ranking indexed: each set ranked next scores as if indexed afresh,
    also after a PR's text changed in the store."""
    from store.db import open_db
    from store.retrieval.finding.ranking import _score_locally

    ids = {number: pr_id for number, pr_id in store.execute("select number, id from prs where repo = ?", [REPO])}
    windows = [(501, 502, 503, 505, 506, 508), (502, 503, 505, 506, 508), (502, 505, 506, 508, 509), (501, 502)]
    expression = '"attention" OR "scheduler" OR "pin"'

    def scored(db, numbers):
        return [(row["number"], row["score"]) for row in _score_locally(db, expression, [ids[n] for n in numbers], 10)]

    for numbers in windows:
        scored(store, numbers)
    save_pr(store, make_pr(502, "[ROCm] Enable the fused attention kernel on MI300", merged_at=_at(13, 11),
                           author="ada-l", merged_by="grace-h", areas=["rocm", "attention"], files=["csrc/rocm/attention.cu"],
                           summary=_summary("Attention on MI300: the fused attention kernel, attention at last.")))
    fresh = open_db(isolated_env)
    try:
        for numbers in [windows[-1], *windows]:  # the changed PR is in the last window
            assert scored(store, numbers) == scored(fresh, numbers), numbers
            fresh.execute("insert into temp.search_window (search_window) values ('delete-all')")
            fresh.execute("delete from temp.search_window_rows")
    finally:
        fresh.close()


def test_a_questions_later_stage_ranks_beside_what_its_earlier_ones_indexed(store, isolated_env):
    """A question's wider stage adds its matches to the window table: it scores as if both stages' matches were indexed
    afresh, and only its own matches rank."""
    from store.db import open_db
    from store.retrieval.finding.ranking import _score_locally

    ids = {number: pr_id for number, pr_id in store.execute("select number, id from prs where repo = ?", [REPO])}
    expression = '"attention" OR "scheduler" OR "pin"'
    first, wider = [ids[n] for n in (501, 502)], [ids[n] for n in (502, 503, 505, 506, 508)]
    _score_locally(store, expression, first, 10)
    later = _score_locally(store, expression, wider, 10, fresh=False)
    fresh = open_db(isolated_env)
    try:
        _score_locally(fresh, expression, first + wider, 10)
        both = {row["id"]: row["score"] for row in _score_locally(fresh, expression, first + wider, 10, fresh=False)}
    finally:
        fresh.close()
    assert [row["id"] for row in later] and {row["id"] for row in later} <= set(wider)
    assert all(row["score"] == both[row["id"]] for row in later)


def test_listing_counts_stop_at_the_cap(store, monkeypatch):
    from store.retrieval.finding import listing

    monkeypatch.setattr(listing, "COUNT_CAP", 2)
    assert search_prs(store, "merged by linus-t", REPO, LA, now=NOW).total == 2
    assert search_prs(store, "what did grace-h do?", REPO, LA, now=NOW).total == 2


# ---------------------------------------------------------------- row ids in merge-time order


def _merge_order(db) -> list[int]:
    return [row[0] for row in db.execute("select number from prs where repo = ? order by id", [REPO])]


def test_row_ids_follow_merge_time_whatever_order_prs_arrive_in(store):
    by_time = [pr.number for pr in sorted(CORPUS, key=lambda pr: (pr.merged_at, pr.number))]
    assert _merge_order(store) == by_time
    # A time window's text search reads FTS rowids of that window only, and finds its PRs.
    assert sorted(_numbers(store, "scheduler yesterday")) == [501, 507]


def test_same_second_merges_keep_their_own_ids(db):
    moment = _at(13, 9)
    save_pr(db, make_pr(7, "[Core] First", merged_at=moment))
    save_pr(db, make_pr(7, "[Core] Other repository", merged_at=moment, repo="other/repo"))
    save_pr(db, make_pr(7 + (1 << 20), "[Core] Same slot", merged_at=moment))
    ids = [row[0] for row in db.execute("select id from prs")]
    assert len(set(ids)) == 3 and len({row_id >> 20 for row_id in ids}) == 1
    assert search_prs(db, "same slot", REPO, LA, now=NOW).numbers == [7 + (1 << 20)]


def test_a_changed_merge_time_moves_the_pr_and_its_index_entry(db):
    save_pr(db, make_pr(1, "[Core] Tokenizer cache", merged_at=_at(2)))
    save_pr(db, make_pr(2, "[Core] Sampler cleanup", merged_at=_at(10)))
    save_pr(db, make_pr(1, "[Core] Tokenizer cache, merged again", merged_at=_at(12)))
    assert _merge_order(db) == [2, 1]
    assert _numbers(db, "tokenizer this week") == [1]
    assert db.execute("select count(*) from prs_fts").fetchone()[0] == 2


def test_migration_renumbers_a_store_filled_newest_first(tmp_path):
    from sqlite_utils import Database

    from store.db import open_db
    from store.migrations import migrations
    from store.tables.prs import pr_record

    path = tmp_path / "old.db"
    old = Database(path)
    migrations.apply(old, stop_before="m006_merge_time_ids")
    newest_first = sorted(CORPUS, key=lambda pr: pr.merged_at, reverse=True)
    old["prs"].insert_all({**pr_record(pr), "id": i + 1} for i, pr in enumerate(newest_first))
    old.close()
    db = open_db(path)
    assert _merge_order(db) == [pr.number for pr in sorted(CORPUS, key=lambda pr: pr.merged_at)]
    assert _numbers(db, "drifting") == [506, 503]


def test_a_common_word_ranks_the_newest_window_that_holds_enough_matches(db):
    """Twelve scheduler PRs of the last days fill the answer; an older, stronger match needs words that select it."""
    for n in range(12):
        save_pr(db, make_pr(600 + n, f"[Core] Tune scheduler knob {n}", merged_at=_at(13, 20 - n)))
    save_pr(db, make_pr(700, "[Core] Scheduler scheduler scheduler rewrite", merged_at=_at(2)))
    assert 700 not in _numbers(db, "scheduler")
    assert _numbers(db, "scheduler rewrite")[0] == 700
    assert _numbers(db, "scheduler", limit=13)[0] == 700  # an answer of 13 reaches back to it, and it ranks first


def test_a_big_stores_window_ranks_exactly_its_own_matches(db, monkeypatch):
    """The newest-first walk that chooses the window also lists its matches, and stops at its edge: older matches
    read with them would change every score's idf."""
    from store.retrieval.finding import ranking

    monkeypatch.setattr(ranking, "LOCAL_FROM", 0)
    recent = [make_pr(600 + n, f"[Core] Tune scheduler knob {n}", merged_at=_at(14 - n // 6, 20 - n % 6)) for n in range(36)]
    older = [make_pr(700 + n, f"[Core] Old scheduler knob {n}", merged_at=_at(1 + n % 5, 10 + n // 5)) for n in range(30)]
    for pr in recent + older:
        save_pr(db, pr)
    question = read_question(db, "knob", REPO, LA, NOW)
    rows = ranking.windowed(ranking.Scope(db, REPO, question), ranking.Stage('"knob"', None, 1), 30)
    assert len(rows) == 30 and {row["number"] for row in rows} <= {pr.number for pr in recent}
    indexed = {row[0] for row in db.execute("select prs.number from temp.search_window_rows kept join prs using (id)")}
    assert indexed == {pr.number for pr in recent}  # the week back from the newest, where the 30th newest merged


def test_store_size_is_read_from_the_index_without_counting(db):
    from store.retrieval.fts import store_size
    from store.tables.prs import save_prs

    assert store_size(db) == 0
    save_prs(db, [make_pr(n, f"[Core] Change {n}", merged_at=_at(1 + n % 13, n % 24)) for n in range(1, 301)])
    db.execute("delete from prs where number <= 10")
    assert store_size(db) == 290 == db.execute("select count(*) from prs").fetchone()[0]


def test_an_index_written_in_many_small_batches_is_merged_and_still_found(db):
    from store.tables.prs import MAX_SEGMENTS, save_prs

    segments = []
    for n in range(1, 301):  # a poller's batches: one PR each
        save_prs(db, [make_pr(n, f"[Core] Change {n} to the detokenizer", merged_at=_at(1 + n % 13, n % 24))])
        segments.append(db.execute("select count(distinct segid) from prs_fts_idx").fetchone()[0])
    assert max(segments) <= MAX_SEGMENTS
    assert 1 in segments[MAX_SEGMENTS:]  # merged into one at least once after it could have grown past the limit
    assert len(_numbers(db, "detokenizer", limit=1000)) == 300


def test_rarity_is_read_among_the_newest_prs(db, monkeypatch):
    from store.retrieval import evidence
    from store.retrieval.reading.query import Concept, Phrases
    from store.tables.prs import save_prs

    # Long ago every PR said "flashinfer"; lately none does, and every one says "scheduler".
    old = [make_pr(n, "[Kernel] FlashInfer tweak", merged_at=_at(2, n), files=["csrc/a.cu"]) for n in range(1, 21)]
    new = [make_pr(100 + n, "[Core] Scheduler tweak", merged_at=_at(12, n), files=["engine/b.py"]) for n in range(1, 11)]
    save_prs(db, old + new)
    concepts = [Concept(word, Phrases((word,), (word,))) for word in ("flashinfer", "scheduler")]
    whole = evidence.rarity(db, REPO, concepts)
    monkeypatch.setattr(evidence, "RARITY_SAMPLE", 10)
    recent = evidence.rarity(db, REPO, concepts)
    assert recent[0] >= 0.5 > whole[0]  # said by no recent PR: as rare as a sample of ten can tell
    assert recent[1] == 0.0 < whole[1]  # said by every recent PR: tells none apart


def test_each_topic_brings_its_own_best_prs_to_the_grading(db):
    from store.tables.prs import save_prs

    # Forty recent PRs say "batch"; one says the rare chatter "sorted"; the answer, older, says "mistral".
    save_prs(db, [make_pr(800 + n, f"[Core] Tune the batch queue {n}", merged_at=_at(13, n % 24)) for n in range(40)])
    save_prs(db, [make_pr(850, "[Misc] Keep sorted batch lists", merged_at=_at(12, 3)),
                  make_pr(851, "[Bugfix] Fix Mistral tokenizer crash on empty system messages", merged_at=_at(2, 9))])
    assert 851 in _numbers(db, "did the mistral batch crash get sorted?", limit=10)
