"""Releases in the store: which release starts each one's range, its PRs recorded once, a PR's first release."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from store.tables.releases import (
    Release,
    get_release,
    latest_release,
    listed_completely,
    previous_release,
    range_numbers,
    record_range,
    releases_of,
    save_listed,
    shipped_in,
    unmapped,
)
from store.understanding.releases import commit_prs, version_key

REPO = "acme/engine"
T0 = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)


def release(tag: str, days: float, prerelease: bool = False, name: str = "") -> Release:
    return Release(REPO, tag, name or tag, f"https://github.example/{REPO}/releases/tag/{tag}",
                   T0 + timedelta(days=days), prerelease)


# Published in this order: a patch of the 0.9 line comes out after 0.10.0, and 0.11.0 has two candidates first.
LINE = [
    release("v0.9.0", 0), release("v0.9.1", 6), release("v0.10.0", 14), release("v0.9.2", 16),
    release("v0.10.1", 20), release("v0.11.0rc1", 27, prerelease=True), release("v0.11.0rc2", 30, prerelease=True),
    release("v0.11.0", 33),
]


@pytest.mark.parametrize("message, numbers", [
    ("[Bugfix] Fix the scheduler (#34567)", [34567]),
    ("[Bugfix] Fix the scheduler (#34567)\n\n(cherry picked from commit 0a1b2c)", [34567]),
    ("[Core] Backport the fix (#120) (#131)", [120, 131]),  # a cherry-pick merged through its own PR names both
    ('Revert "[Core] Faster path (#12)" (#34)\n\nThis reverts commit 9f8e.', [34]),
    ("Merge pull request #77 from ada-l/fix-typo\n\nFix a typo", [77]),
    ("Fix the case in #12 (see #13) and more", []),
    ("Bump version to 0.11.0", []),
])
def test_a_commit_names_its_pr_the_way_merges_write_it(message, numbers):
    assert commit_prs(message) == numbers


def test_version_tags_sort_as_versions():
    tags = ["v0.10.0", "v0.9.2", "v0.10.0rc1", "v0.10.0.post1", "v0.10.1.1", "v0.10.1", "0.11", "v1.0.0-beta.2"]
    assert sorted(tags, key=version_key) == [
        "v0.9.2", "v0.10.0rc1", "v0.10.0", "v0.10.0.post1", "v0.10.1", "v0.10.1.1", "0.11", "v1.0.0-beta.2",
    ]
    assert version_key("nightly") is None


def test_each_release_follows_the_last_one_published_before_it_on_its_own_line(db):
    assert save_listed(db, REPO, LINE, complete=True) == len(LINE)
    assert listed_completely(db, REPO)
    previous = {item.tag: (previous_release(db, REPO, item) or item).tag for item in releases_of(db, REPO)}
    assert previous == {
        "v0.9.0": "v0.9.0",  # the first: its range is its whole history
        "v0.9.1": "v0.9.0",
        "v0.10.0": "v0.9.1",
        "v0.9.2": "v0.9.1",  # published after v0.10.0, but a lower version
        "v0.10.1": "v0.10.0",  # not v0.9.2, published between them
        "v0.11.0rc1": "v0.10.1",
        "v0.11.0rc2": "v0.11.0rc1",  # a prerelease follows any release
        "v0.11.0": "v0.10.1",  # a full release follows the last full release
    }
    assert latest_release(db, REPO).tag == "v0.11.0"
    assert [item.tag for item in unmapped(db, REPO, T0 + timedelta(days=20))] == [
        "v0.11.0", "v0.11.0rc2", "v0.11.0rc1", "v0.10.1",
    ]


def test_a_range_is_recorded_once_and_keeps_numbers_the_store_lacks(db):
    save_listed(db, REPO, LINE, complete=False)
    assert not listed_completely(db, REPO)
    v0101 = get_release(db, REPO, "v0.10.1")
    assert record_range(db, v0101, "v0.10.0", [501, 502, 502, 503], commits=4)
    assert not record_range(db, v0101, "v0.10.0", [999], commits=1)  # another process mapped it first
    assert range_numbers(db, REPO, "v0.10.1") == [501, 502, 503]
    stored = get_release(db, REPO, "v0.10.1")
    assert (stored.mapped, stored.previous, stored.commits, stored.prs) == (True, "v0.10.0", 4, 3)
    # Listing again (an edited name) keeps the range as it was read.
    save_listed(db, REPO, [release("v0.10.1", 20, name="v0.10.1: faster MoE")], complete=True)
    again = get_release(db, REPO, "v0.10.1")
    assert (again.title, again.mapped, again.prs) == ("v0.10.1: faster MoE", True, 3)


def test_a_prs_first_release_is_the_first_published_whose_range_names_it(db):
    save_listed(db, REPO, LINE, complete=True)
    # #700 was cherry-picked into v0.10.1 and ships again in v0.11.0's range from main; the prerelease came first.
    record_range(db, get_release(db, REPO, "v0.11.0"), "v0.10.1", [700, 701, 702], commits=3)
    record_range(db, get_release(db, REPO, "v0.11.0rc1"), "v0.10.1", [701], commits=1)
    assert {number: [r.tag for r in found] for number, found in shipped_in(db, REPO, [700, 701, 702, 703]).items()} == {
        700: ["v0.11.0"], 701: ["v0.11.0rc1", "v0.11.0"], 702: ["v0.11.0"],
    }
    record_range(db, get_release(db, REPO, "v0.10.1"), "v0.10.0", [700], commits=1)  # mapped later, published earlier
    assert [r.tag for r in shipped_in(db, REPO, [700])[700]] == ["v0.10.1", "v0.11.0"]
