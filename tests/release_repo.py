"""A loopback repository released the way vLLM releases: PRs squash-merged on main, release branches cut from
it, fixes cherry-picked onto them (new SHAs, the same messages), a patch release, a prerelease and a draft.

What each release's range names is worked out from how the repository was built, not from the fake's compare.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from servers.github_api import FakeCommit, FakeGitHub, FakeHistory, FakePull, FakeRelease

REPO = "acme/engine"
START = datetime(2026, 1, 5, 17, 0, tzinfo=UTC)  # the first PR merges two hours after
TOKEN = "good-token"  # the loopback GitHub takes this one, and GraphQL needs one
AREAS = [
    ("[ROCm]", "vllm/platforms/rocm.py"), ("[Core]", "vllm/v1/core/sched/scheduler.py"),
    ("[Frontend]", "vllm/entrypoints/openai/api_server.py"), ("[Kernel]", "csrc/moe/topk.cu"),
    ("[Doc]", "docs/usage/faq.md"), ("[Spec Decode]", "vllm/v1/spec_decode/eagle.py"),
]


@dataclass
class ReleaseRepo:
    repo: str
    history: FakeHistory
    step: timedelta  # between two merges
    first_number: int
    pulls: list[FakePull] = field(default_factory=list)
    ranges: dict[str, list[int]] = field(default_factory=dict)  # tag -> the PR numbers its range names, sorted
    previous: dict[str, str | None] = field(default_factory=dict)  # tag -> the tag its range starts from
    published: dict[str, datetime] = field(default_factory=dict)
    cherry_picked: dict[int, str] = field(default_factory=dict)  # PR -> the release branch it was picked onto
    draft: str = ""
    unreleased: list[int] = field(default_factory=list)  # merged on main since the last release was cut

    def first_release(self, number: int) -> str | None:
        """The tag of the first release, by publish time, whose range names `number`."""
        having = [tag for tag, numbers in self.ranges.items() if number in numbers]
        return min(having, key=lambda tag: self.published[tag], default=None)

    def merge(self, moment: datetime) -> tuple[FakePull, FakeCommit]:
        """The next PR, merged on main at `moment`: squashed, or every 25th by a merge commit."""
        number = self.first_number + len(self.pulls)
        tag, path = AREAS[number % len(AREAS)]
        pull = FakePull(number, f"{tag} Change {number} to the engine", moment, author=f"dev-{number % 11}",
                        body=f"Makes change {number}.", files=[path, f"tests/test_{number % 5}.py"])
        self.pulls.append(pull)
        self.unreleased.append(number)
        return pull, self.history.merge(pull, merge_commit=number % 25 == 0)

    def publish_draft(self, github: FakeGitHub, at: datetime, more: int = 0) -> list[int]:
        """Merge `more` PRs, then publish the draft at `at`, tagged at main as it stands; the PRs its range names."""
        last = self.pulls[-1].merged_at
        github.add(self.repo, *(self.merge(last + self.step * (k + 1))[0] for k in range(more)))
        draft = next(release for release in github.releases[self.repo] if release.tag == self.draft)
        draft.published_at, draft.name = at, self.draft
        github.tag(self.repo, self.draft, self.history.head())
        return sorted(self.unreleased)


def build(
    github: FakeGitHub, repo: str, start: datetime, cycles: int = 3, per_cycle: int = 100, first_number: int = 1000,
    step: timedelta = timedelta(hours=2),
) -> ReleaseRepo:
    """`cycles` minor releases of `per_cycle` PRs each on `github`, from `start`; then a few PRs not released yet.

    Each v0.K.0 is cut from main, gets two fixes merged after the cut cherry-picked and a version bump, then is
    published. v0.1.1 patches v0.1.0 with one more fix during the next cycle, v0.2.0rc1 is a prerelease of the
    branch as cut, and a draft of the next release waits unpublished. Every 25th PR is merged by a merge commit.
    """
    built = ReleaseRepo(repo, FakeHistory(repo), step, first_number)
    history = built.history
    moment = start
    last_final: str | None = None

    def merge() -> tuple[FakePull, FakeCommit]:
        nonlocal moment
        moment += step
        return built.merge(moment)

    def release(tag: str, branch: str, numbers: list[int], previous: str | None, prerelease: bool = False) -> None:
        nonlocal moment
        moment += timedelta(minutes=30)
        github.tag(repo, tag, history.head(branch))
        github.publish(repo, FakeRelease(tag, moment, prerelease=prerelease))
        built.ranges[tag], built.previous[tag], built.published[tag] = sorted(numbers), previous, moment

    for cycle in range(1, cycles + 1):
        for _ in range(per_cycle - len(built.unreleased)):
            merge()
        branch, tag = f"releases/v0.{cycle}", f"v0.{cycle}.0"
        history.cut(branch)
        on_main, built.unreleased = built.unreleased, []
        if cycle == 2:
            release("v0.2.0rc1", branch, on_main, last_final, prerelease=True)
        fixes = [merge() for _ in range(3)][:2]  # merged on main after the cut; two of them picked
        for pull, commit in fixes:
            history.cherry_pick(branch, commit)
            built.cherry_picked[pull.number] = branch
        history.commit(f"Bump the version to 0.{cycle}.0", branch)
        release(tag, branch, on_main + [pull.number for pull, _ in fixes], last_final)
        last_final = tag
        if cycle == 1:  # a patch during the next cycle, before the next minor release
            merged = [merge() for _ in range(5)]
            pull, commit = merged[-2]
            history.cherry_pick(branch, commit)
            built.cherry_picked[pull.number] = branch
            release("v0.1.1", branch, [pull.number], last_final)
            last_final = "v0.1.1"
    for _ in range(7):  # merged since the last release
        merge()
    built.draft = f"v0.{cycles + 1}.0"
    github.publish(repo, FakeRelease(built.draft, None, name=f"{built.draft} (draft)", created_at=moment))
    github.add(repo, *built.pulls)
    return built


ROOT = Path(__file__).resolve().parents[1]


def ingest_into(path: Path, github: FakeGitHub, built: ReleaseRepo, token: str, since: str | None = None) -> str:
    """`prdigest ingest` of the line's days (from `since`) into the store at `path`, as a process of its own; its output."""
    tz = ZoneInfo("America/Los_Angeles")
    merged = [pull.merged_at.astimezone(tz).date().isoformat() for pull in built.pulls]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PRDIGEST_", "GITHUB_", "OPENAI_"))},
           "PRDIGEST_DB": str(path), "PRDIGEST_GITHUB_API_URL": github.url, "PRDIGEST_REPOS": built.repo,
           "GITHUB_TOKEN": token, "PRDIGEST_TIMEZONE": tz.key}
    run = [sys.executable, "-m", "bot", "ingest", "--since", since or min(merged), "--until", max(merged)]
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def filled_store(path: Path, prepare: Callable[[FakeGitHub, ReleaseRepo], None] | None = None) -> ReleaseRepo:
    """A store at `path` that `prdigest ingest` filled from the line (its GitHub first changed by `prepare`)."""
    with FakeGitHub(token=TOKEN) as github:
        built = build(github, REPO, START)
        if prepare:
            prepare(github, built)
        ingest_into(path, github, built, TOKEN)
    return built
