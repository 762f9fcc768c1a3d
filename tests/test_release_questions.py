"""Questions about releases, asked through `prdigest ask` and `prdigest run` of a store that knows releases:
which release shipped a PR, whether a release has it, what a release or a span of releases holds, what merged
since the last one, and the same asked again in a thread."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from pr_factory import REPO, make_pr
from slack_helpers import WORKSPACE

from bot.config import Settings
from bot.runtime import Runtime
from store.model import Summary
from store.retrieval.reading.kept import query_data, query_from_data
from store.retrieval.search import read_question
from store.retrieval.thread import Turn, answered_text, read_in_thread, turn_from_store
from store.tables.prs import save_prs
from store.tables.releases import Release, get_release, record_range, save_listed

T0 = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 6, 17, 0, tzinfo=UTC)


def at(days: float) -> datetime:
    return T0 + timedelta(days=days)


def pr(number: int, title: str, days: float, areas: list[str], what: str = "", **fields):
    summary = Summary(what or f"{title.split('] ')[-1]}.", "", "", "", "imported")
    return make_pr(number, title, merged_at=at(days), areas=areas, summary=summary, author=f"dev-{number % 4}", **fields)


# A line of releases cut from main: v0.10.1 patches v0.10.0 with a cherry-picked fix (#207), which main's next
# range names again; v0.11.0rc1 previews v0.11.0; #216 merged after v0.11.0 was cut, before it was published.
PRS = [
    pr(201, "[Core] Add the block manager", 1, ["core"]),
    pr(202, "[ROCm] Enable the MI300 build", 2, ["rocm"]),
    pr(203, "[Frontend] Accept the seed parameter", 3, ["frontend"]),
    pr(204, "[Doc] Describe the scheduler", 4, ["docs"], type="trivial"),
    pr(205, "[Kernel] Fuse the top-k kernel", 10, ["kernels"], files=["csrc/topk.cu", "csrc/topk.h", "tests/k.py"]),
    pr(206, "[Core] Rework preemption", 11, ["core"]),
    pr(207, "[ROCm][Bugfix] Fix paged attention on MI300", 12, ["rocm", "attention"],
       what="Fixes a wrong stride in the ROCm paged attention kernel on MI300."),
    pr(208, "[Frontend] Stream tool calls", 16, ["frontend", "tool-calling"]),
    pr(209, "[Core] Speed up prefix caching", 17, ["core"]),
    pr(210, "[ROCm] Add the FP8 MoE path for MI325", 18, ["rocm", "moe"]),
    pr(211, "[Spec Decode] Add EAGLE metrics", 19, ["speculative-decoding"]),
    pr(212, "[ROCm][Bugfix] Fix the FP8 hang on MI325", 30, ["rocm"],
       what="Fixes a hang in the FP8 GEMM on MI325 when the batch is empty."),
    pr(213, "[Core] Drop the legacy scheduler", 31, ["core"]),
    pr(214, "[Frontend] Add the responses API", 40, ["frontend"]),
    pr(215, "[Kernel] Faster rotary embedding", 41, ["kernels"]),
    pr(216, "[CI] Retry flaky downloads", 47, ["ci"], type="trivial"),
    pr(217, "[ROCm] Tune the MI300 attention blocks", 52, ["rocm", "attention"]),
    pr(218, "[Core] Count preemptions", 55, ["core"]),
]
# tag: (published, days after T0; prerelease; the PR numbers its range names, stored or not)
RELEASES = {
    "v0.10.0": (6, False, [201, 202, 203, 204, 150]),
    "v0.10.1": (14, False, [207]),
    "v0.11.0rc1": (35, True, [205, 206, 207, 208, 209, 210, 211, 212]),
    "v0.11.0": (48, False, [205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215]),
}


def fill(db) -> None:
    save_prs(db, PRS)
    releases = [Release(REPO, tag, tag, f"https://github.com/{REPO}/releases/tag/{tag}", at(days), pre)
                for tag, (days, pre, _) in RELEASES.items()]
    save_listed(db, REPO, releases, complete=True)
    previous = {"v0.10.0": None, "v0.10.1": "v0.10.0", "v0.11.0rc1": "v0.10.1", "v0.11.0": "v0.10.1"}
    for tag, (_, _, numbers) in RELEASES.items():
        assert record_range(db, get_release(db, REPO, tag), previous[tag], numbers, commits=len(numbers))


@pytest.fixture
def store(db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    fill(db)
    return db


@pytest.fixture
def ask(store, run_cli):
    """The answer `prdigest ask` prints for a question, as JSON."""

    def asked(question: str) -> dict:
        done = run_cli("ask", "--json", question)
        assert done.code == 0, done.err
        answer = json.loads(done.out)
        return {"text": answer["answer"], "citations": answer["citations"]}

    return asked


def first(answer: dict) -> str:
    return answer["text"].split("\n")[0]


# ---------------------------------------------------------------- which release shipped a PR


@pytest.mark.parametrize("question", ["which release shipped #207?", "is #207 released yet?", "when was PR 207 released?"])
def test_a_released_pr_is_answered_with_its_first_release(ask, question):
    answer = ask(question)
    assert first(answer) == "Yes: in v0.10.1, published Jan 19."
    assert answer["citations"] == [207]


def test_a_pr_first_in_a_prerelease_names_its_first_full_release_too(ask):
    assert first(ask("which release shipped #212?")) == (
        "Yes: in v0.11.0rc1, published Feb 9, a prerelease; the first full release with it is v0.11.0, published Feb 22."
    )


def test_a_pr_merged_after_the_last_release_is_not_yet_released(ask):
    assert first(ask("is #217 released yet?")) == "Not yet: merged Feb 26, after v0.11.0; it will be in the next release."
    # Merged before v0.11.0 came out, after it was cut.
    assert first(ask("is #216 released?")) == (
        "Not yet: merged Feb 21, but v0.11.0 (published Feb 22) does not have it; it will be in the next release."
    )


@pytest.mark.parametrize(("question", "line"), [
    ("did #209 make it into v0.11?", "Yes: in v0.11.0, published Feb 22."),
    ("did #209 make it into 0.11.0?", "Yes: in v0.11.0, published Feb 22."),
    ("is #207 in v0.11.0?", "Yes: it first shipped in v0.10.1, published Jan 19, and v0.11.0 has it too."),
    ("did #201 make it into v0.11?", "Yes: it shipped earlier, in v0.10.0, published Jan 11, so v0.11.0 has it."),
    ("did #209 make it into v0.10.1?", "No: it first shipped in v0.11.0rc1, published Feb 9, after v0.10.1."),
    ("did #216 make it into v0.11?", "Not yet: merged Feb 21, but v0.11.0 (published Feb 22) does not have it;"
                                     " it will be in the next release."),
    ("is #217 in the latest release?", "Not yet: merged Feb 26, after v0.11.0; it will be in the next release."),
    ("did #212 make it into a 0.11.x release?", "Yes: in v0.11.0rc1, published Feb 9."),
    ("did #212 make it into 0.10.x?", "No: it first shipped in v0.11.0rc1, published Feb 9, after v0.10.1."),
])
def test_whether_a_release_has_a_pr(ask, question, line):
    assert first(ask(question)) == line


def test_a_release_the_store_does_not_know_names_those_it_knows(ask):
    assert first(ask("did #209 make it into v0.12?")) == (
        "The store knows no release v0.12 of acme/engine; it knows v0.11.0, v0.11.0rc1, v0.10.1 and v0.10.0"
        " (`/prdigest releases` lists them)."
    )


def test_a_pr_not_in_the_store_is_one_line(ask):
    assert ask("is #999 released yet?")["text"] == "Not known: #999 is not in the store, and no release it has mapped names it."
    # The range names #150, which the store lacks: its release is still known.
    assert first(ask("which release shipped #150?")) == "Yes: in v0.10.0, published Jan 11."


def test_a_release_not_mapped_yet_is_said_rather_than_guessed(ask, store):
    save_listed(store, REPO, [Release(REPO, "v0.11.1", "v0.11.1", "", at(56))], complete=True)
    assert first(ask("is #217 released yet?")) == (
        "Can't tell yet: v0.11.1, published since it merged, is not mapped yet; the next `prdigest ingest` maps it."
    )
    assert first(ask("what merged since the last release?")).endswith(
        "(v0.11.1 is not mapped yet, so its PRs are not counted.)"
    )


def test_several_prs_are_answered_one_by_one(ask):
    lines = ask("did #209, #216 and #201 make it into v0.11?")["text"].split("\n")
    assert lines[0] == "2 of these 3 PRs are in v0.11.0:"
    assert lines[1] == "#209 [Core] Speed up prefix caching: Yes: in v0.11.0, published Feb 22."
    assert lines[2].startswith("#216 [CI] Retry flaky downloads: Not yet: merged Feb 21")


def test_a_fix_named_by_what_it_does_is_found_then_looked_up(ask):
    answer = ask("did the ROCm fix for the MI325 hang make it into v0.11?")
    assert answer["citations"] == [212]
    assert first(answer) == "Yes: in v0.11.0, published Feb 22."
    assert answer["text"].split("\n")[1].startswith("#212 [ROCm][Bugfix] Fix the FP8 hang on MI325")
    assert first(ask("did the MI300 attention tuning make it into v0.11?")).startswith("Not yet: merged Feb 26, after v0.11.0")


# ---------------------------------------------------------------- what a release holds


def test_whats_new_in_a_release_since_an_earlier_one(ask):
    answer = ask("what's new in v0.11 since v0.10.1?")
    lines = answer["text"].split("\n")
    # #207 shipped in v0.10.1 already: it is not new, though v0.11.0's range names it again.
    assert lines[0] == (
        "10 PRs shipped in v0.11.0 (published Feb 22) since v0.10.1: 3 in core, 2 in rocm, 2 in frontend, 2 in kernels"
        " and 1 more area."
    )
    assert 207 not in answer["citations"] and len(answer["citations"]) == 10
    assert lines[1] == "By area:"


def test_what_changed_between_two_releases_is_short_with_highlights_and_the_command(ask, store):
    many = [pr(300 + k, f"[Core] Change {k}", 42 + k / 10, ["core"]) for k in range(20)]
    save_prs(store, many)
    store.execute("insert into release_prs (repo, tag, number) select ?, 'v0.11.0', value from json_each(?)",
                  [REPO, json.dumps([p.number for p in many])])
    answer = ask("what changed between v0.10 and v0.11?")
    lines = answer["text"].split("\n")
    # v0.11.0rc1 is left out of a span of full releases; its PRs are v0.11.0's too.
    assert lines[0].startswith("31 PRs shipped in v0.11.0 since v0.10.0 (v0.10.1 and v0.11.0): 23 in core, 3 in rocm")
    assert lines[1] == "Highlights, by area:"
    assert len(answer["citations"]) == 10
    assert lines[-1] == (
        "\u2026and 21 more: `/prdigest release v0.10.1` and `/prdigest release v0.11.0` list them by area."
    )


def test_a_release_alone_is_its_range(ask):
    lines = ask("what's in v0.10.0?")["text"].split("\n")
    assert lines[0] == (
        "5 PRs shipped in v0.10.0, published Jan 11 (1 of them not in the store): 1 in rocm, 1 in docs, 1 in frontend"
        " and 1 in core."
    )


def test_a_topic_in_a_release_picks_among_its_prs(ask):
    answer = ask("anything on ROCm in v0.11?")
    assert first(answer) == "3 PRs in rocm shipped in v0.11.0, published Feb 22:"
    assert answer["citations"] == [212, 210, 207]
    assert ask("anything on TPU in v0.10.0?")["text"] == "No PR in tpu shipped in v0.10.0, published Jan 11."


# ---------------------------------------------------------------- since the last release


def test_what_merged_since_the_last_release(ask):
    answer = ask("what merged since the last release?")
    assert first(answer) == (
        "3 PRs merged that no release has yet (the last is v0.11.0, published Feb 22): 1 in rocm, 1 in ci and 1 in core."
    )
    assert sorted(answer["citations"]) == [216, 217, 218]
    rocm = ask("what's unreleased in rocm?")
    assert first(rocm) == "1 PR in rocm merged that no release has yet (the last is v0.11.0, published Feb 22):"


def test_without_releases_the_store_says_so(db, monkeypatch, run_cli):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    save_prs(db, PRS)
    done = run_cli("ask", "is #207 released yet?")
    assert "The store holds no release of acme/engine yet: `prdigest ingest` reads them with the PRs." in done.out


def test_run_answers_a_release_question_as_slack_shows_it(store, run_cli):
    done = run_cli("run", "/prdigest ask which release shipped #207?")
    assert done.code == 0 and "Yes: in v0.10.1, published Jan 19." in done.out


# ---------------------------------------------------------------- in a thread


def _thread(db, questions: list[str]) -> list[str]:
    """Each question's first line, asked in turn in one thread, each turn kept as the store keeps it."""
    from bot.answers.answer import answer_question

    settings = Settings.from_env()
    turns: list[Turn] = []
    lines = []
    for question in questions:
        answer = answer_question(db, settings, question, turns, now=NOW)
        lines.append(answer.text.split("\n")[0])
        turns.append(turn_from_store(question, answered_text({REPO: answer.answered})))
    return lines


def test_follow_ups_ask_the_same_of_another_pr_or_release(store):
    assert _thread(store, ["is #209 released yet?", "and #217?", "is it in v0.10.1?"]) == [
        "Yes: in v0.11.0rc1, published Feb 9, a prerelease; the first full release with it is v0.11.0, published Feb 22.",
        "Not yet: merged Feb 26, after v0.11.0; it will be in the next release.",
        "No: merged Feb 26, and no release has it yet; it will be in the next release.",
    ]
    assert _thread(store, ["is #207 released yet?", "who wrote it?"])[1] == "dev-3 ([#207])."
    assert _thread(store, ["did #209 make it into v0.11?", "what about v0.10.1?"])[1] == (
        "No: it first shipped in v0.11.0rc1, published Feb 9, after v0.10.1."
    )


def test_a_release_question_is_kept_with_its_turn(store):
    settings = Settings.from_env()
    asked = read_question(store, "what's new in v0.11 since v0.10.1?", REPO, settings.timezone, NOW)
    assert query_from_data(json.loads(json.dumps(query_data(asked)))) == asked
    reading = read_in_thread(store, "and in rocm?", [Turn("what's new in v0.11 since v0.10.1?")], REPO, settings.timezone, NOW)
    assert reading.asked.release == asked.release and reading.asked.areas == ("rocm",)


def test_questions_about_release_pipelines_or_versions_of_libraries_are_no_release_questions(store):
    settings = Settings.from_env()
    for question in ("did anything make the release builds slower?", "which PR needs transformers 4.57.1?",
                     "which version of torch do we need?", "what has dev-1 shipped?", "what's new in ROCm this week?",
                     "what did dev-1 ship in april?", "did anyone fix the deepseek v3.1 tool parser crash?"):
        assert read_question(store, question, REPO, settings.timezone, NOW).release_ask is None, question


def test_a_runtime_answers_release_questions_from_the_store(store):
    runtime = Runtime(Settings.from_env())
    try:
        from bot.answers.mentions import answer

        message = answer(runtime, "which release shipped #207?", WORKSPACE, now=NOW)
        assert message.text.startswith("Yes: in v0.10.1, published Jan 19.")
    finally:
        runtime.close()
