"""`prdigest release-notes TAG`: exactly the PRs of the range, by area, fetched when the store lacks them;
a model writes at most the lead."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
from datetime import timedelta

import pytest
import release_repo
from conftest import LA
from release_repo import REPO, START, TOKEN
from servers.github_api import FakeGitHub, FakeHistory, FakePull, FakeRelease, Fault
from servers.openai_api import FakeOpenAI, Reply


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Stores filled by `prdigest ingest` from one loopback line: of every day, and of the last two days before
    v0.2.0 came out and after (most of v0.2.0's PRs, and the releases before it, are not in it)."""
    folder = tmp_path_factory.mktemp("notes")
    with FakeGitHub(token=TOKEN) as github:
        built = release_repo.build(github, REPO, START)
        release_repo.ingest_into(folder / "whole.db", github, built, TOKEN)
        since = (built.published["v0.2.0"] - timedelta(days=2)).astimezone(LA).date().isoformat()
        release_repo.ingest_into(folder / "recent.db", github, built, TOKEN, since=since)
    return folder, built


@pytest.fixture
def line(monkeypatch):
    """The loopback line, served again (to fetch from) in the state the stores were filled from."""
    with FakeGitHub(token=TOKEN) as github:
        built = release_repo.build(github, REPO, START)
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", github.url)
        yield github, built


def use(stores, name: str, isolated_env) -> None:
    shutil.copy(stores[0] / name, isolated_env)


def notes(run_cli, tag: str, *more: str) -> dict:
    result = run_cli("release-notes", tag, "--format", "json", *more)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_json_lists_exactly_the_prs_of_each_range(run_cli, stores, line, isolated_env):
    use(stores, "whole.db", isolated_env)
    _, built = line
    assert len(built.ranges) >= 3 and len(built.pulls) >= 300
    for tag, numbers in built.ranges.items():
        found = notes(run_cli, tag, "--offline")
        assert sorted(pr["number"] for pr in found["prs"]) == numbers, tag
        assert found["unknown"] == []
        assert (found["repo"], found["tag"], found["previous"]) == (REPO, tag, built.previous[tag])
        assert found["published_at"] == built.published[tag].astimezone(LA).isoformat()
    one = next(pr for pr in notes(run_cli, "v0.2.0", "--offline")["prs"] if pr["number"] == 1104)
    assert one == {"number": 1104, "title": "[ROCm] Change 1104 to the engine", "author": "dev-4", "areas": ["rocm"]}
    assert notes(run_cli, "latest", "--offline")["tag"] == "v0.3.0"


def test_markdown_has_highlights_first_a_section_per_area_and_trivial_prs_last(run_cli, stores, line, isolated_env):
    use(stores, "whole.db", isolated_env)
    _, built = line
    result = run_cli("release-notes", "v0.2.0", "--offline")
    assert result.code == 0, result.err
    text = result.out
    assert text.startswith("# engine v0.2.0\n\nPublished 2026-01-22 \u00b7 102 PRs since v0.1.1 \u00b7 https://")
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[0] == "Highlights" and headings[-1].startswith("Trivial (")
    listed = re.findall(r"^- (?!\*\*).* \(#(\d+)\) by @[\w-]+", text, re.MULTILINE)
    assert sorted(map(int, listed)) == built.ranges["v0.2.0"]  # one line per PR, each once
    assert "- [ROCm] Change 1104 to the engine (#1104) by @dev-4\n" in text
    assert "(#1100) by @dev-0 (first in v0.1.0)" in text and "(#1106) by @dev-6 (first in v0.1.1)" in text
    trivial = text[text.index("## Trivial"):]
    assert all("[Doc]" in line for line in trivial.split("\n") if line.startswith("- "))
    assert "Not known" not in text


@pytest.mark.parametrize("token", [None, TOKEN], ids=["rest", "graphql"])
def test_prs_the_store_lacks_are_fetched_or_listed_by_number(run_cli, stores, line, isolated_env, monkeypatch, token):
    use(stores, "recent.db", isolated_env)
    github, built = line
    if token:
        monkeypatch.setenv("GITHUB_TOKEN", token)
    offline = notes(run_cli, "v0.2.0", "--offline")
    missing = offline["unknown"]
    assert missing and sorted(missing + [pr["number"] for pr in offline["prs"]]) == built.ranges["v0.2.0"]
    markdown = run_cli("release-notes", "v0.2.0", "--offline").out
    assert f"## Not known ({len(missing)})" in markdown and ", ".join(f"#{n}" for n in missing) in markdown

    github.fail(Fault(502), match="/graphql" if token else f"/pulls/{missing[3]}", times=2)  # 5xx midway
    online = notes(run_cli, "v0.2.0")
    assert sorted(pr["number"] for pr in online["prs"]) == built.ranges["v0.2.0"] and online["unknown"] == []
    if token:  # 50 PRs a request
        assert github.count("/graphql", "PullsByNumber") == -(-len(missing) // 50) + 2
    else:
        assert github.count("/pulls/") == 2 * len(missing) + 2
    github.seen.clear()
    assert notes(run_cli, "v0.2.0") == online  # stored now: nothing asked again
    assert github.seen == []


@pytest.mark.parametrize("token", [None, TOKEN], ids=["rest", "graphql"])
def test_a_number_that_is_no_pr_stays_unknown(run_cli, monkeypatch, token, tmp_path):
    history = FakeHistory()
    pulls = [FakePull(10, "[Core] First", START), FakePull(11, "[Core] Second", START + timedelta(hours=1))]
    history.merge(pulls[0])
    history.commit("Thank the contributors (#7)")  # #7 is an issue
    history.merge(pulls[1], merge_commit=True)
    with FakeGitHub({REPO: pulls}, token=TOKEN) as github:
        github.tag(REPO, "v1.0.0", history.head())
        github.publish(REPO, FakeRelease("v1.0.0", START + timedelta(hours=2)))
        monkeypatch.setenv("PRDIGEST_REPOS", REPO)
        monkeypatch.setenv("PRDIGEST_GITHUB_API_URL", github.url)
        if token:
            monkeypatch.setenv("GITHUB_TOKEN", token)
        assert run_cli("ingest", "--since", "2026-01-05", "--until", "2026-01-05").code == 0
        found = notes(run_cli, "v1.0.0")
        assert [pr["number"] for pr in found["prs"]] == [11, 10] and found["unknown"] == [7]
        assert found["previous"] is None
        assert github.count("/graphql", "PullsByNumber") == (1 if token else 0)
        assert github.count("/pulls/7") == (0 if token else 1)


def test_a_release_the_store_has_not_mapped_is_read_from_github(run_cli, stores, line, isolated_env):
    use(stores, "recent.db", isolated_env)
    github, built = line
    offline = run_cli("release-notes", "v0.1.0", "--offline")
    assert offline.code == 1 and offline.err.startswith("prdigest: error: the PRs of v0.1.0 are not mapped")
    found = notes(run_cli, "v0.1.0")
    assert sorted(pr["number"] for pr in found["prs"]) == built.ranges["v0.1.0"]
    # Published since the last ingest: listed, mapped and fetched on demand.
    published = built.publish_draft(github, max(pull.merged_at for pull in built.pulls) + timedelta(hours=1))
    assert sorted(pr["number"] for pr in notes(run_cli, built.draft)["prs"]) == published


def test_an_unknown_tag_is_one_line_with_the_closest(run_cli, stores, line, isolated_env):
    use(stores, "whole.db", isolated_env)
    result = run_cli("release-notes", "v0.2.2")
    assert result.code == 1
    assert result.err == "prdigest: error: no release 'v0.2.2' of acme/engine; the closest: v0.2.0, v0.3.0, v0.2.0rc1\n"


LEAD = "This release speeds up ROCm kernels and tightens the scheduler. <!channel> [click](https://evil.example) @here"


def test_a_model_writes_only_the_lead_and_the_list_stays_the_same(run_cli, stores, line, isolated_env, monkeypatch):
    use(stores, "whole.db", isolated_env)
    without = run_cli("release-notes", "v0.2.0", "--offline").out
    with FakeOpenAI() as api:
        monkeypatch.setenv("PRDIGEST_MODEL", "notes-model")
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        api.script(Reply(f"<think>Which PRs matter? #9999</think>{LEAD}"), "The highlights are #1197 and #9999.")
        first = run_cli("release-notes", "v0.2.0", "--offline")
        second = run_cli("release-notes", "v0.2.0", "--offline")
        assert notes(run_cli, "v0.2.0", "--offline")["prs"]  # JSON has no lead: no call
        assert api.calls == 2
        prompt = api.requests[0].user
    assert first.code == 0 and second.code == 0
    lead = first.out.split("\n")[4]
    assert lead == (
        "This release speeds up ROCm kernels and tightens the scheduler. \\<!channel\\> [click\\](https://evil.example)"
        " @\u200bhere"
    )
    assert first.out.replace(lead + "\n\n", "", 1) == without  # the list is the store's, word for word
    assert second.out == without and "named a PR" in second.err  # a lead naming a PR is dropped
    assert "[Kernel] Change 1197 to the engine" in prompt and prompt.count("\n- ") >= 100
    with sqlite3.connect(isolated_env) as conn:  # both calls are in the ledger
        calls = conn.execute("select purpose, prompt_version, outcome from model_calls order by id").fetchall()
    assert calls == [("answer", "release-notes-1", "ok"), ("answer", "release-notes-1", "unparsed")]
