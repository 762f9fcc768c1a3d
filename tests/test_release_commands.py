"""`/prdigest releases`, `/prdigest release [TAG | latest]` and the release line of `/prdigest pr N`."""
from __future__ import annotations

import shutil
from datetime import datetime, timedelta

import pytest
import release_repo
from conftest import LA
from release_repo import REPO
from servers.github_api import FakeGitHub, FakeRelease

from bot.answers.commands import execute
from bot.config import Settings
from bot.runtime import Runtime
from store.tables.teams import NO_TEAM


def an_older_release(github: FakeGitHub, built: release_repo.ReleaseRepo) -> None:
    """v0.0.9, published long before the store's first PR, tagging the first commit, with a name to escape."""
    old = built.published["v0.1.0"] - timedelta(days=40)
    github.tag(REPO, "v0.0.9", built.history.main[:1])
    github.publish(REPO, FakeRelease("v0.0.9", old, name="<!channel> party", created_at=old))


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A store filled by `prdigest ingest` from the loopback line of releases and one older release."""
    path = tmp_path_factory.mktemp("released") / "store.db"
    return path, release_repo.filled_store(path, an_older_release)


@pytest.fixture
def runtime(released, isolated_env, monkeypatch):
    shutil.copy(released[0], isolated_env)
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    rt = Runtime(Settings.from_env())
    yield rt
    rt.close()


def say(runtime: Runtime, text: str):
    return execute(runtime, text, NO_TEAM, now=datetime(2026, 2, 2, 9, 0, tzinfo=LA))


def test_releases_lists_the_last_published_first_with_their_pr_counts(runtime):
    reply = say(runtime, "releases")
    assert not reply.error
    lines = reply.text.split("\n")
    assert lines[0] == "*Releases of acme/engine*, the last published first"
    assert lines[1].startswith("\u2022 <https://github.example/acme/engine/releases/tag/v0.3.0|v0.3.0> \u00b7 published ")
    assert lines[1].endswith(" \u00b7 102 PRs since v0.2.0")
    assert [line.split("|")[1].split(">")[0] for line in lines[1:7]] == [
        "v0.3.0", "v0.2.0", "v0.2.0rc1", "v0.1.1", "v0.1.0", "v0.0.9 (&lt;!channel&gt; party)",
    ]
    assert "v0.2.0rc1> _(prerelease)_ \u00b7" in lines[3]
    assert lines[5].endswith("101 PRs since v0.0.9")  # the first commit was tagged v0.0.9
    assert lines[6].endswith("_PRs not mapped: `prdigest release-notes v0.0.9` reads them_")
    assert "v0.4.0" not in reply.text  # the draft


def test_a_release_shows_its_prs_by_area_like_a_day(runtime):
    reply = say(runtime, "release v0.2.0")
    assert not reply.error
    head = reply.messages[0].shown.split("\n")
    assert head[0].startswith("*engine <https://github.example/acme/engine/releases/tag/v0.2.0|v0.2.0>*, published Jan ")
    assert head[0].endswith(": 102 PRs since v0.1.1")
    assert head[1].startswith("102 merged: ")
    assert head[2] == "3 PRs of them shipped first in an earlier release: v0.1.0 (2) and v0.1.1 (1)"
    assert any(line.startswith("Top areas, by PRs touching each: ") for line in head)
    assert "Highlights:" in head
    thread = "\n".join(message.shown for message in reply.messages[1:])
    assert "*rocm* (" in thread and "#1200 " in thread
    assert thread.endswith("_\u2026and 35 more: `prdigest release-notes v0.2.0` lists every one._")
    prerelease = say(runtime, "release v0.2.0rc1").messages[0].shown.split("\n")[0]
    assert "v0.2.0rc1> _(prerelease)_*, published " in prerelease and prerelease.endswith(": 100 PRs since v0.1.1")


@pytest.mark.parametrize("text", ["release", "release latest", "release LATEST", "release 0.3", "release V0.3.0"])
def test_latest_and_versions_however_typed(runtime, text):
    reply = say(runtime, text)
    assert "/releases/tag/v0.3.0|v0.3.0>*" in reply.messages[0].shown, reply.text


def test_an_unknown_tag_is_one_line_with_the_closest_tags(runtime):
    reply = say(runtime, "release v0.2.1")
    assert reply.text == "No release `v0.2.1` of acme/engine. The closest: `v0.2.0`, `v0.1.1`, `v0.2.0rc1`."
    far = say(runtime, "release nightly")
    assert far.text == "No release `nightly` of acme/engine. `/prdigest releases` lists them."
    assert say(runtime, "release v0.1 v0.2").error


def test_a_release_older_than_the_store_says_how_to_map_it(runtime):
    reply = say(runtime, "release v0.0.9")
    assert reply.text == (
        "<https://github.example/acme/engine/releases/tag/v0.0.9|v0.0.9 (&lt;!channel&gt; party)> of acme/engine came"
        " out before the oldest PR in the store, so its PRs are not mapped: `prdigest release-notes v0.0.9` reads"
        " them from GitHub."
    )


def test_pr_shows_the_release_that_shipped_it(runtime, released):
    _, built = released

    def shipped(number: int) -> str:
        return say(runtime, f"pr {number}").messages[0].shown.split("\n")[2]

    assert built.cherry_picked[1106] == "releases/v0.1"
    assert shipped(1106).startswith("Released in <https://github.example/acme/engine/releases/tag/v0.1.1|v0.1.1>, published ")
    assert shipped(1150).startswith("Released in <https://github.example/acme/engine/releases/tag/v0.2.0rc1|v0.2.0rc1>"
                                    " _(prerelease)_, published ")
    assert "; first full release <https://github.example/acme/engine/releases/tag/v0.2.0|v0.2.0>, published " in shipped(1150)
    last = built.unreleased[-1]
    assert shipped(last).startswith(f"Not released yet: merged {built.pulls[-1].merged_at.astimezone(LA):%b %-d, %Y}, after ")
    assert shipped(last).endswith("); it will be in the next release.")
    not_picked = next(n for n in built.unreleased if n not in built.cherry_picked)  # merged before v0.3.0 came out
    assert not_picked < 1303 and " but not in <https://github.example/acme/engine/releases/tag/v0.3.0|v0.3.0> (published " in shipped(not_picked)


def test_without_any_release_stored_pr_says_nothing_of_releases(runtime):
    runtime.db.execute("delete from release_prs")
    runtime.db.execute("delete from releases")
    runtime.db.conn.commit()
    assert "elease" not in say(runtime, "pr 1150").text


def test_release_questions_are_answered_from_the_ingested_ranges(runtime, released):
    """Asked of a store `prdigest ingest` filled from the loopback GitHub: cherry-picks, a patch, a prerelease."""
    _, built = released

    def first(question: str) -> str:
        return say(runtime, f"ask {question}").messages[0].shown.split("\n")[0]

    picked = next(n for n, branch in built.cherry_picked.items() if branch == "releases/v0.1" and built.first_release(n) == "v0.1.1")
    assert first(f"which release shipped #{picked}?").startswith("Yes: in v0.1.1, published ")
    assert first(f"did #{picked} make it into v0.2?").startswith("Yes: it first shipped in v0.1.1, published ")
    last = built.unreleased[-1]
    assert first(f"is #{last} released yet?").startswith(f"Not yet: merged {built.pulls[-1].merged_at.astimezone(LA):%b %-d}, after v0.3.0")
    assert first(f"did #{last} make it into v0.2.0?").startswith("No: merged ")
    new = first("what's new in v0.3 since v0.2?")
    shipped_first = set(built.ranges["v0.3.0"]) - {n for tag in ("v0.1.0", "v0.1.1", "v0.2.0rc1", "v0.2.0")
                                                   for n in built.ranges[tag]}
    assert new.startswith(f"{len(shipped_first)} PRs shipped in v0.3.0 (published "), new
    missed = [n for n in built.unreleased if n not in built.cherry_picked]  # the fixes picked onto v0.3.0 shipped
    assert first("what merged since the last release?").startswith(f"{len(missed)} PRs merged that no release has yet")
    assert first("did #1 make it into v0.9?").startswith("The store knows no release v0.9 of acme/engine; it knows v0.3.0, ")
