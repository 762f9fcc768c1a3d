"""No prompt passes PRDIGEST_SUMMARY_TOKENS, whatever its inputs: summaries (and their repair turn) and answers
(choosing, continuing, and the retry), over many hostile inputs drawn at random with fixed seeds, then through the
real CLI and openai client against the loopback model server, measuring what was sent."""
from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from pr_factory import REPO, make_pr
from servers.github_api import FakeGitHub, FakePull
from servers.openai_api import FakeOpenAI, Reply, summarizing_responder

from bot.answers.model_prompt import CHOOSING_PROMPT, SYSTEM_PROMPT, answer_prompt, choosing_prompt, retry_prompt
from bot.config import SMALLEST_SUMMARY_TOKENS, Settings
from bot.model.client import estimate_tokens
from bot.model.prompt import SMALLEST_BUDGET, build_prompt, repair_turn, system_prompt
from store.model import PullRequest, Summary
from store.tables.prs import save_pr
from store.understanding.summary import classify_type, extractive_summary

MB = 1_000_000
# Seeds of the hostile inputs, in groups that run side by side.
SEEDS = [range(start, start + 20) for start in range(0, 80, 20)]


def sent(messages: list[dict]) -> int:
    """What a request costs against the budget: every message's content, estimated as the budget is."""
    return sum(estimate_tokens(message.get("content") or "") for message in messages)


class Hostile:
    """Text and lists of every size and shape a PR, a question or GitHub may bring."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, short: bool = False) -> str:
        size = self.rng.choice([1, 40, 300] if short else [0, 1, 40, 300, 5_000, 100_000, MB])
        kind = self.rng.choice(["word", "lines", "wide", "markers", "controls", "spaces"])
        unit = {
            "word": "x", "lines": "line of text\n", "wide": "\u00e9\u6f22\U0001f600", "controls": "\x1b]0;t\x07\u202e",
            "markers": "<<<END PR-DATA 0123456789abcdef>>>\n", "spaces": " \t ",
        }[kind]
        return (unit * (size // len(unit) + 1))[:size]

    def texts(self, most: int = 3000) -> list[str]:
        count = self.rng.choice([0, 1, 5, 100, most])
        if count <= 5:
            return [self.text() for _ in range(count)]
        return [f"{self.text(short=True)}{index}" for index in range(count)]

    def number(self) -> int | None:
        return self.rng.choice([None, 0, 3, 10**6, 2**62, -(2**62)])

    def patch(self) -> str | None:
        shape = self.rng.choice(["none", "small", "many hunks", "huge hunk", "no header", "deletions"])
        if shape == "none":
            return None
        line = self.rng.choice(["+x", "+" + "y" * 5_000, "-gone"]) if shape == "small" else "+x"
        line = "-gone" if shape == "deletions" else line
        hunks = {"small": 2, "many hunks": 300, "huge hunk": 1}.get(shape, 3)
        lines = {"huge hunk": 20_000}.get(shape, 5)
        header = "" if shape == "no header" else "@@ -1,5 +1,5 @@\n"
        return "\n".join(header + "\n".join([line] * lines) for _ in range(hunks))

    def files(self) -> list[dict] | None:
        count = self.rng.choice([None, 0, 1, 30, 3000])
        if count is None:
            return None
        return [{"filename": self.text(short=True) or "f.py", "status": "modified", "additions": self.number() or 0,
                 "deletions": 1, "patch": self.patch() if index < 40 else None} for index in range(count)]

    def pr(self, number: int = 7, files: int = 50_000) -> PullRequest:
        sections = [self.text() for _ in range(4)]
        return make_pr(
            number, self.text(), repo=self.rng.choice([REPO, "o" * 100 + "/" + "n" * 100, "a/" + "b" * 20_000]),
            author=self.text(), merged_by=self.rng.choice([None, self.text()]), labels=self.texts(),
            areas=self.texts(200), body=self.text(), files=self.texts(files), changed_files=self.number(),
            additions=self.number(), deletions=self.number(),
            summary=self.rng.choice([None, Summary(*sections, "imported")]),
        )

    def budget(self) -> int:
        return self.rng.choice([SMALLEST_SUMMARY_TOKENS, 1001, 1500, 3000, 6000, self.rng.randint(1000, 40_000)])


def test_the_smallest_budget_allowed_holds_every_prompt(run_cli, monkeypatch):
    assert SMALLEST_BUDGET <= SMALLEST_SUMMARY_TOKENS
    monkeypatch.setenv("PRDIGEST_SUMMARY_TOKENS", str(SMALLEST_SUMMARY_TOKENS - 1))
    result = run_cli("stats")
    assert result.code != 0 and result.err.strip().splitlines() == [
        "prdigest: error: PRDIGEST_SUMMARY_TOKENS: expected a whole number of at least 1,000, got '999'"]


@pytest.mark.parametrize("seeds", SEEDS)
def test_a_summary_prompt_and_its_repair_turn_stay_within_the_budget(seeds):
    for seed in seeds:
        hostile = Hostile(seed)
        pr, files, budget = hostile.pr(), hostile.files(), hostile.budget()
        prompt = build_prompt(pr, files, budget)
        for structured in (True, False):
            system = system_prompt(structured)
            assert sent([{"content": system}, {"content": prompt.text}]) <= budget, seed
            again, earlier, request = repair_turn(pr, files, budget, hostile.text(), hostile.text(), structured)
            (user, said), = earlier
            assert user == again.text
            assert sent([{"content": text} for text in (system, user, said, request)]) <= budget, seed
        assert f"Number: #{pr.number}" in prompt.text  # cut, never dropped: the PR is still named


@pytest.mark.parametrize("seeds", SEEDS)
def test_answer_prompts_stay_within_the_budget(seeds):
    for seed in seeds:
        _answer_prompts_fit(Hostile(seed), seed)


def _answer_prompts_fit(hostile: Hostile, seed: int) -> None:
    budget = hostile.budget()
    settings = Settings.from_env({"PRDIGEST_DB": "/unused", "PRDIGEST_SUMMARY_TOKENS": str(budget)})
    question, lead = hostile.text(), hostile.text()
    history = [hostile.text(short=True) for _ in range(hostile.rng.choice([0, 1, 6, 150, 500]))]
    prs = [hostile.pr(number, files=100) for number in range(1, hostile.rng.choice([2, 5, 16]))]
    repo = hostile.rng.choice([REPO, "o" * 100 + "/" + "n" * 100])
    choosing = CHOOSING_PROMPT.format(repo=repo, example=2**62)
    chosen, given = choosing_prompt(question, history, prs, settings, choosing)
    assert sent([{"content": choosing}, {"content": chosen}]) <= budget, seed
    assert given == prs[: len(given)]
    continuing = SYSTEM_PROMPT.format(repo=repo, example=2**62)
    split = hostile.rng.randint(0, len(prs))
    prompt = answer_prompt(question, history, lead, prs[:split], prs[split:], settings, continuing)
    assert sent([{"content": continuing}, {"content": prompt}]) <= budget, seed
    unknown = [hostile.rng.randint(1, 2**62) for _ in range(hostile.rng.choice([1, 3, 1000]))]
    retry = retry_prompt(prompt, unknown, [pr.number for pr in prs] * hostile.rng.choice([1, 100]))
    assert sent([{"content": continuing}, {"content": retry}]) <= budget, seed


# ---------------------------------------------------------------- through the real client


def store(db, pr: PullRequest) -> None:
    pr.type, pr.summary = classify_type(pr), extractive_summary(pr)
    save_pr(db, pr)


def monster(number: int, merged_at: datetime, files: int = 1000) -> PullRequest:
    """A 1 MB title, a 100 KB login, 3,000 labels, a 1 MB description and `files` long paths (the property
    tests above go to 50,000)."""
    return make_pr(number, "[Core] " + "T" * MB, author="L" * 100_000, labels=[f"label-{i}" for i in range(3000)],
                   body="A description.\n" * 70_000, files=[f"src/{'d' * 150}/f{i}.py" for i in range(files)],
                   changed_files=files, additions=10**9, deletions=10**9, merged_at=merged_at)


@pytest.mark.parametrize("budget", ["1000", "6000"])
def test_what_summarize_sends_stays_within_the_budget(run_cli, db, monkeypatch, budget):
    merged = datetime(2026, 3, 7, 18, tzinfo=UTC)
    store(db, monster(7, merged))
    store(db, monster(8, merged + timedelta(minutes=1)))
    files = [f"src/m{i}.py" for i in range(1000)]
    unreadable = Reply("Sure! " + "no sections here " * 2000)

    def respond(request):  # #8's first reply cannot be read, so it gets a repair turn
        if "Number: #8" in request.user and len(request.body["messages"]) == 2:
            return unreadable
        return summarizing_responder(request)

    with FakeOpenAI(respond) as model, FakeGitHub({REPO: [FakePull(7, "t", merged, files=files),
                                                         FakePull(8, "t", merged, files=files)]}) as github:
        for name, value in {"PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": model.base_url, "PRDIGEST_REPOS": REPO,
                            "PRDIGEST_GITHUB_API_URL": github.url, "PRDIGEST_SUMMARY_TOKENS": budget}.items():
            monkeypatch.setenv(name, value)
        result = run_cli("summarize", "--date", "2026-03-07")
    assert result.code == 0, result.err
    assert sorted(len(request.body["messages"]) for request in model.requests) == [2, 2, 4]  # #8's repair turn
    assert all(sent(request.body["messages"]) <= int(budget) for request in model.requests)
    assert all(sent(request.body["messages"]) > int(budget) * 0.9 for request in model.requests)  # and used


def test_what_an_answer_sends_stays_within_the_budget(run_cli, db, monkeypatch):
    now = datetime.now(UTC)
    sections = ["The paged attention stride for ROCm is fixed. " + "W" * 20_000] * 4
    for number in range(1, 13):
        pr = monster(number, now - timedelta(hours=number), files=20)
        pr.title = f"[ROCm] Fix the paged attention stride {number} " + "T" * 20_000
        pr.summary = Summary(*sections, "imported")
        save_pr(db, pr)
    with FakeOpenAI(lambda request: Reply('{"answer": [1, 999999], "text": "It was [#1] and [#999999]."}')) as model:
        for name, value in {"PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": model.base_url, "PRDIGEST_REPOS": REPO,
                            "PRDIGEST_SUMMARY_TOKENS": "1000"}.items():
            monkeypatch.setenv(name, value)
        result = run_cli("ask", "what changed for the rocm paged attention stride? " + "rocm stride " * 3500)
    assert result.code == 0, result.err
    assert model.requests and all(sent(request.body["messages"]) <= 1000 for request in model.requests)
