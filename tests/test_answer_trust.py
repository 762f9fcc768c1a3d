"""Answers that never mislead, asked through `prdigest ask` of a store filled from our own fixture reports."""
import json

import pytest
from conftest import FIXTURES, LA, seed_reports
from freezegun import freeze_time
from pr_factory import REPO

from store.sources.importer import import_file

# The morning after the busiest fixture day (report-2026-03-20.md: 27 PRs).
NOW = "2026-03-21 17:00:00"


@pytest.fixture
def reports(db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    for report in sorted(FIXTURES.glob("report-*.md")):
        import_file(db, report, LA, REPO)
    return db


def asker(run_cli, now: str):
    """The answer `prdigest ask` gives at `now`, as {"answer", "citations"}, and its first line."""

    def asked(question: str, *options: str) -> tuple[dict, str]:
        with freeze_time(now):
            result = run_cli("ask", "--json", *options, question)
        assert result.code == 0, result.err
        data = json.loads(result.out)
        return data, data["answer"].splitlines()[0]

    return asked


@pytest.fixture
def ask(run_cli, reports):
    return asker(run_cli, NOW)


def test_spec_dec_is_speculative_decoding_and_dec_beside_a_day_is_a_date(ask):
    data, first = ask("spec dec changes on mar 20?")
    assert first == "2 PRs merged on Fri Mar 20 in speculative-decoding:" and data["citations"] == [4313, 4312]
    _, dated = ask("what merged dec 3?")
    assert dated.startswith("No PR merged on Wed Dec 3, 2025")


def test_a_count_gives_the_number_then_ten_prs_then_how_to_list_them_all(ask):
    data, first = ask("how many PRs merged on Mar 20?")
    lines = data["answer"].splitlines()
    assert first == "27 PRs merged on Fri Mar 20."
    assert sum(line.startswith("#") for line in lines) == 10
    assert lines[-1] == "\u2026and 17 more; `ask --limit 27` lists them all."
    assert len(data["citations"]) == 27  # every PR that answers is cited, listed or not
    everything, _ = ask("how many PRs merged on Mar 20?", "--limit", "27")
    assert sum(line.startswith("#") for line in everything["answer"].splitlines()) == 27
    assert "more" not in everything["answer"].splitlines()[-1]


def test_a_whole_set_says_how_many_newest_it_shows_and_a_slash_ask_takes_a_limit(ask, run_cli):
    _, first = ask("what merged on Mar 20?")
    assert first == "27 PRs merged on Fri Mar 20; the 10 newest:"
    with freeze_time(NOW):
        slash = run_cli("run", "--format", "text", "ask --limit 12 what merged on Mar 20?")
    assert slash.code == 0 and "the 12 newest:" in slash.out and "and 15 more" in slash.out


def test_a_subject_no_pr_says_is_an_honest_no_with_the_nearest_as_context(ask):
    data, first = ask("any rocm fixes for the mi250?")
    assert first == "No PR in the store mentions mi250. The nearest, which may not answer it:"
    assert data["citations"] == [] and "#4308 [ROCm][Bugfix]" in data["answer"]  # shown, never cited
    _, both = ask("anything for gaudi or hpu?")
    assert both == "No PR in the store mentions gaudi or hpu."


def test_a_word_no_pr_says_beside_what_prs_do_say_is_chatter_and_owes_no_note(ask):
    data, first = ask("did the cpu backend get quicker int8 matmuls?")
    assert first == "Yes: #4311 [CPU] Prepack int8 weights for the oneDNN matmul." and data["citations"] == [4311]


def test_over_the_seeds_no_rocm_fix_answers_for_the_mi250(run_cli, db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", "vllm-project/vllm")
    for report in seed_reports():
        import_file(db, report, LA, "vllm-project/vllm")
    result = run_cli("ask", "--json", "any rocm fixes for the mi250?")
    data = json.loads(result.out)
    assert data["citations"] == [] and data["answer"].startswith("No PR in the store mentions mi250.")


def test_a_first_line_says_the_answer_in_the_prs_terms_not_the_askers_words(ask):
    _, one = ask("anything making moe layers faster on blackwell cards?")
    assert one == "#4307 \u201cFaster fused MoE layers on Blackwell\u201d:"
    data, several = ask("which prs fix crashes?")
    assert several == "2 PRs merged, closest first: #4308 fixes the paged attention crash on MI300:"
    assert '"crashes"' not in several and data["citations"][0] == 4308


def test_why_a_pr_was_reverted_is_the_reason_the_revert_gives(ask):
    data, first = ask("why was #4301 reverted?")
    assert first == ("#4302 reverts #4301 because async scheduling deadlocked pipeline-parallel runs "
                     "with more than two stages.")
    assert sorted(data["citations"]) == [4301, 4302]


def test_a_risk_question_shows_each_prs_risk_sentence(ask):
    data, _ = ask("what are the risks of #4303?")
    assert "    Risk: Deployments that relied on the old default of 256 reserve more KV cache memory" in data["answer"]
    assert "rises from 256 to 512" not in data["answer"]  # what changed gives way to what could go wrong


def test_what_could_break_on_an_upgrade_reads_defaults_flags_renames_removals_and_pins(ask):
    data, _ = ask("what could break when we upgrade?")
    # None of them says "upgrade": a changed default, a renamed variable, a removed endpoint and a pin do.
    assert sorted(data["citations"]) == [4301, 4303, 4304, 4305, 4306]
    assert data["answer"].count("    Risk: ") == 5


def test_a_revert_that_gives_its_reason_without_because_is_quoted_after_what_it_reverts(run_cli, db):
    from store.sources.sample import SAMPLE_DIR, SAMPLE_REPO

    for report in sorted(SAMPLE_DIR.glob("report-*.md")):
        import_file(db, report, LA, SAMPLE_REPO)
    _, first = asker(run_cli, "2026-03-20 17:00:00")("why was #36102 reverted?")
    # Its text opens "This reverts #36102." and gives the reason in the next sentence, with no "because".
    assert first.startswith("#36187 reverts #36102: After it landed, nightly accuracy runs showed GSM8K")


# A day with two reverts: one of a PR the store holds, one of a PR it does not (tests/fixtures/reverts).
REVERTS_DAY, AFTER_REVERTS = FIXTURES / "reverts" / "report-2026-03-24.md", "2026-03-25 17:00:00"


@pytest.fixture
def ask_after_reverts(run_cli, db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    import_file(db, REVERTS_DAY, LA, REPO)
    return asker(run_cli, AFTER_REVERTS)


def test_a_count_of_reverts_lists_every_revert_it_counts(ask_after_reverts):
    data, first = ask_after_reverts("how many reverts went in yesterday?")
    assert first == ("2 reverts merged yesterday (Tue Mar 24): #4403 reverts #4399; "
                     "#4402 reverts “Upgrade the attention kernel library to 0.9.1” (not in the store).")
    assert sorted(data["citations"]) == [4402, 4403]


def test_why_a_change_named_in_words_was_reverted_is_the_reason_its_revert_gives(ask_after_reverts):
    _, first = ask_after_reverts("why was the kernel library upgrade reverted?")
    # What it reverted is not in the store: the revert still counts, and gives its reason.
    assert first == ("#4402 reverts “Upgrade the attention kernel library to 0.9.1” (not in the store) because the 0.9.1 "
                     "wheels crash on import with CUDA 12.4 drivers.")
    _, stored = ask_after_reverts("why was tool call streaming reverted?")
    assert stored == "#4403 reverts #4399 because clients received tool-call deltas out of order under load."


# A day of a rename, a removed flag, a pin and a Blackwell-only feature (tests/fixtures/trust), after the reverts' day.
TRUST_DAY, AFTER_TRUST = FIXTURES / "trust" / "report-2026-03-26.md", "2026-03-27 17:00:00"


@pytest.fixture
def ask_after_trust(run_cli, db, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    for day in (REVERTS_DAY, TRUST_DAY):
        import_file(db, day, LA, REPO)
    return asker(run_cli, AFTER_TRUST)


@pytest.mark.parametrize(("question", "first"), [
    # A "still" after a removal is no; after a rename that keeps the old name working, yes for now.
    ("can i still pass --legacy-tokenizer?", "No: #4411 removes the deprecated `--legacy-tokenizer` flag."),
    ("after upgrading can i still pass --legacy-tokenizer?", "No: #4411 removes the deprecated `--legacy-tokenizer` flag."),
    ("our launch command has --legacy-tokenizer, can we keep passing it?",
     "No: #4411 removes the deprecated `--legacy-tokenizer` flag."),
    ("does ENGINE_STEP_TIMEOUT still work?", "Yes, for now: #4410 renames ENGINE_STEP_TIMEOUT to ENGINE_ITERATION_TIMEOUT; "
     "the old name is still read, with a deprecation warning, until 2.0."),
    # A yes names the hardware asked: a PR for other hardware is a no.
    ("can we run weight-only fp4 checkpoints on our h100s?",
     "No: the closest is #4413 \u201cWeight-only FP4 linear layers on Blackwell\u201d, and it does not mention h100s."),
    # A PR that names the hardware asked only to leave it out says no, in its own words.
    ("does weight-only fp4 work on our l40s?",
     "No: #4413 \u201cWeight-only FP4 linear layers on Blackwell\u201d. Ada GPUs such as the L40S are not covered and keep "
     "the FP8 path."),
    # A release of a dependency asked about is answered by the newest PR that moves it, not by the releases.
    ("are we still on compiler library 2.5.x?", "No: #4412 pins the compiler library to 2.4.13."),
    ("is the compiler library still pinned to 2.4?", "Yes: #4412 pins the compiler library to 2.4.13."),
    # "Supported now?" of a name no PR says is no, about that name: no revert decides it.
    ("is zephyr-h1 supported now?", "No: no PR in the store mentions zephyr-h1."),
    # What someone has been sending in is what they wrote.
    ("what's ada-l been sending in?", "2 PRs authored by ada-l:"),
    # "Dependency updates" are the PRs that pin or bump one.
    ("any dependency updates on mar 26?", "#4412 pins the compiler library to 2.4.13:"),
    # Why a change was made is the reason it gives, not its title again.
    ("why did we pin the compiler library?", "#4412 pins the compiler library to 2.4.13: Version 2.5.10 of the compiler "
     "library miscompiles the fused attention kernel on Hopper GPUs, and fresh installs were pulling it in."),
    # What a revert reverted is named even when the store lacks it.
    ("what did #4402 revert?",
     "#4402 reverts #4390 (not in the store) because the 0.9.1 wheels crash on import with CUDA 12.4 drivers."),
    # A person asked about in either role is named in the role their PRs show.
    ("how many prs did merge-bot do on mar 26?", "3 PRs merged by merge-bot on Thu Mar 26."),
    ("how many prs did ada-l do on mar 26?", "1 PR authored by ada-l on Thu Mar 26."),
    # A part asked by its name that none of the PRs about the rest says: nothing answers, though another PR says it.
    ("tokenizer changes on mar 26 for mi300x",
     "None of the PRs merged on Thu Mar 26 about tokenizer mentions mi300x. The nearest, which may not answer it:"),
    # "On by default?" is answered by what the PR says of its default.
    ("is weight-only fp4 on by default?",
     "No: #4413 \u201cWeight-only FP4 linear layers on Blackwell\u201d; weight-only FP4 is off by default."),
    # Asked the other way round ("still opt-in?"), the default says yes where it is off.
    ("is weight-only fp4 still opt-in right?",
     "Yes: #4413 \u201cWeight-only FP4 linear layers on Blackwell\u201d; weight-only FP4 is off by default."),
    # What a question asks about is weighed in its own sentence: the background told after it does not outweigh
    # a name no PR says. A quantity ("8-card") is no name.
    ("mooncake connector changes? we move kv cache between our prefill and decode pools and pin the compiler library",
     "No PR in the store mentions mooncake. The nearest, which may not answer it:"),
    ("anything for our 8-card boxes? we pin the compiler library", "#4412 pins the compiler library to 2.4.13:"),
    # A word before a kind of thing ("the zephyr backend"), or said again in another sentence, is a name: when no PR
    # says it, nothing answers, whatever the rest of the question finds.
    ("anything touching the zephyr backend for quantization?",
     "No PR in the store mentions zephyr. The nearest, which may not answer it:"),
    ("any fp4 fixes for zephyr? we run zephyr",
     "No PR in the store mentions zephyr. The nearest, which may not answer it:"),
    # The shape is read from the sentence that asks, after what it tells.
    ("saw some flags got dropped in the cleanup. can i still pass --legacy-tokenizer?",
     "No: #4411 removes the deprecated `--legacy-tokenizer` flag."),
    # "Why" asked as "what's the reason" gets the reason too; a count of someone's PRs names the role they show.
    ("whats the reason the compiler library got pinned", "#4412 pins the compiler library to 2.4.13: Version 2.5.10 of "
     "the compiler library miscompiles the fused attention kernel on Hopper GPUs, and fresh installs were pulling it in."),
    # "Still on 2.5.10?": the newest PR that moves to a version says which one.
    ("are we still on compiler library 2.5.10?", "No: #4412 pins the compiler library to 2.4.13."),
    ("is the compiler library on 2.4.13 now?", "Yes: #4412 pins the compiler library to 2.4.13."),
    # A risk question opens with the closest PR's own risk.
    ("anything risky about the compiler library pin?",
     "#4412 pins the compiler library to 2.4.13: users who need 2.5.10 features must wait for the fix."),
])
def test_a_first_line_says_what_the_prs_say_of_what_was_asked(ask_after_trust, question, first):
    assert ask_after_trust(question)[1] == first


def test_a_setup_given_by_names_from_code_brings_each_pr_about_one_of_them(ask_after_trust):
    data, _ = ask_after_trust("our helm chart starts the server with --legacy-tokenizer and sets ENGINE_STEP_TIMEOUT=600 "
                              "on four nodes behind a gateway. safe to bump to today's main?")
    assert sorted(data["citations"]) == [4410, 4411]
    _, still = ask_after_trust("our manifests set ENGINE_STEP_TIMEOUT=600, does that still do anything after yesterday?")
    assert still.startswith("Yes, for now: #4410 renames ENGINE_STEP_TIMEOUT")


def test_back_in_after_a_revert_is_no_and_a_pr_for_the_hardware_asked_is_a_yes(ask_after_trust):
    _, stored = ask_after_trust("is tool call streaming back in?")
    assert stored.startswith("No: #4403 reverts #4399")
    _, lacked = ask_after_trust("are we still on the 0.9.1 attention kernel library?")
    assert lacked.startswith("No: #4402 reverts \u201cUpgrade the attention kernel library to 0.9.1\u201d")
    _, supported = ask_after_trust("can we run weight-only fp4 checkpoints on b200?")
    assert supported.startswith("Yes: #4413")


def test_reverted_the_same_day_keeps_only_the_revert_whose_pr_merged_that_day(ask_after_trust):
    data, first = ask_after_trust("which revert undid something merged the same day?")
    assert sorted(data["citations"]) == [4399, 4403]
    assert first.startswith("1 revert merged within a day of the PR it reverts: #4403 reverts #4399 because")
