"""PR summaries from the configured model: once per (prompt version, model), concurrently, never half-written.

Model calls run on a thread pool (bounded by PRDIGEST_LLM_CONCURRENCY, as the LLM
itself is); every write to the store happens on the calling thread, one
transaction per PR. A reply that does not parse is asked for once more; if that
fails too, or the model cannot be reached, the PR keeps the summary it has and is
marked for a retry (`prdigest summarize --missing`).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from bot.config import Settings
from bot.llm import LLM, LLMError
from bot.prompt import (
    PROMPT_VERSION, REPLY_TOKENS, SYSTEM_PROMPT, ReplyFormatError, build_prompt, parse_reply, retry_prompt,
)
from store.extractive import extractive_summary, plural
from store.github import GitHubClient, GitHubError
from store.model import PullRequest, Summary
from store.prs import get_pr
from store.summaries import (
    ModelCall, mark_for_retry, model_source, needs_model_summary, prs_needing_summary, save_model_summary,
)

DiffSource = Callable[[PullRequest], "list[dict[str, Any]] | None"]


class GitHubDiffs:
    """The PR's file objects (with patches) from GitHub, for the prompt.

    After one failure the rest of the run goes without diffs: GitHub is down, out of
    rate limit, or does not know the repository, and each further PR would only wait.
    """

    def __init__(self, client: GitHubClient) -> None:
        self.client = client
        self.problem: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> "GitHubDiffs":
        # Few attempts and short waits: a summary without the diff beats a stalled run.
        client = GitHubClient(
            settings.github_api_url, settings.github_token, graphql=False, max_attempts=2, max_wait=30, backoff=0.5
        )
        return cls(client)

    def __call__(self, pr: PullRequest) -> list[dict[str, Any]] | None:
        if self.problem:
            return None
        try:
            return self.client.pull_files(pr.repo, pr.number)
        except GitHubError as exc:
            with self._lock:
                self.problem = self.problem or str(exc)
            return None


@dataclass
class _Attempt:
    pr: PullRequest
    calls: list[ModelCall]
    type: str | None = None
    summary: Summary | None = None
    error: str | None = None


@dataclass
class SummaryRun:
    """What a run did, for a line on the terminal or in the log."""

    model: str
    summarized: list[int] = field(default_factory=list)
    current: int = 0  # PRs that already had a summary for this model and prompt
    failed: list[tuple[int, str]] = field(default_factory=list)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    github_problem: str | None = None

    def describe(self) -> str:
        text = (
            f"summarized {plural(len(self.summarized), 'PR')} with {self.model} ({plural(self.calls, 'model call')}, "
            f"{self.tokens_in:,} tokens in, {self.tokens_out:,} out)"
        )
        if self.current:
            text += f"; {self.current} already current"
        if self.failed:
            text += f"; {len(self.failed)} failed and marked for retry"
        if self.github_problem:
            text += f"; without diffs from GitHub after: {self.github_problem}"
        return text


def _attempt(pr: PullRequest, llm: LLM, budget: int, diffs: DiffSource) -> _Attempt:
    """Ask the model (twice at most if the reply does not parse); never raises for model failures."""
    prompt = build_prompt(pr, diffs(pr), budget)
    user = prompt.text
    done = _Attempt(pr, [])
    for _ in range(2):
        started = time.monotonic()
        try:
            reply = llm.complete(SYSTEM_PROMPT, user, max_tokens=REPLY_TOKENS)
        except LLMError as exc:
            done.calls.append(ModelCall("error", 0, 0, time.monotonic() - started, str(exc)))
            done.error = str(exc)
            return done
        seconds = time.monotonic() - started
        try:
            parsed = parse_reply(reply.text)
        except ReplyFormatError as exc:
            done.calls.append(ModelCall("unparsed", reply.tokens_in, reply.tokens_out, seconds, str(exc)))
            done.error = f"the reply did not follow the format twice (last: {exc})"
            user = retry_prompt(prompt, str(exc))
            continue
        done.calls.append(ModelCall("ok", reply.tokens_in, reply.tokens_out, seconds))
        sections = dict(parsed.sections)
        if prompt.coverage_note:
            sections["insights"] = f"{sections['insights']} {prompt.coverage_note}"
        done.type, done.summary, done.error = parsed.type, Summary(**sections, source=model_source(llm.model)), None
        return done
    return done


def summarize_prs(
    db: Database,
    settings: Settings,
    prs: Iterable[PullRequest],
    llm: LLM,
    *,
    force: bool = False,
    diffs: DiffSource | None = None,
    on_done: Callable[[PullRequest, str | None], None] | None = None,
) -> SummaryRun:
    """Summarize the PRs that lack a current model summary (all of them with `force`).

    `diffs` gives each PR's GitHub file objects; by default they are fetched from
    PRDIGEST_GITHUB_API_URL. `on_done(pr, error)` is called as each PR is stored.
    """
    run = SummaryRun(llm.model)
    todo = []
    for pr in prs:
        if force or needs_model_summary(db, pr, llm.model, PROMPT_VERSION):
            todo.append(pr)
        else:
            run.current += 1
    if not todo:
        return run
    own = diffs is None
    source = GitHubDiffs.from_settings(settings) if own else diffs
    pool = ThreadPoolExecutor(max_workers=settings.llm_concurrency, thread_name_prefix="summarize")
    try:
        futures = [pool.submit(_attempt, pr, llm, settings.summary_tokens, source) for pr in todo]
        for future in as_completed(futures):
            attempt = future.result()
            _store(db, attempt, llm.model, run)
            if on_done:
                on_done(attempt.pr, attempt.error)
    finally:
        # On Ctrl-C only the calls in flight finish; what was stored so far stays.
        pool.shutdown(wait=True, cancel_futures=True)
        if own:
            source.client.close()
    if isinstance(source, GitHubDiffs):
        run.github_problem = source.problem
    return run


def _store(db: Database, attempt: _Attempt, model: str, run: SummaryRun) -> None:
    run.calls += len(attempt.calls)
    run.tokens_in += sum(call.tokens_in for call in attempt.calls)
    run.tokens_out += sum(call.tokens_out for call in attempt.calls)
    pr = attempt.pr
    if attempt.summary and attempt.type:
        save_model_summary(db, pr, attempt.type, attempt.summary, PROMPT_VERSION, attempt.calls)
        run.summarized.append(pr.number)
    else:
        reason = attempt.error or "no usable reply"
        mark_for_retry(db, pr, reason, model, PROMPT_VERSION, attempt.calls, extractive_summary(pr))
        run.failed.append((pr.number, reason))


def summarize_window(
    db: Database, settings: Settings, repo: str, start: datetime, end: datetime, llm: LLM,
    diffs: DiffSource | None = None,
) -> SummaryRun:
    """Summarize what ingest just stored: the PRs merged in [start, end) still without a current summary."""
    return summarize_prs(
        db, settings, prs_needing_summary(db, repo, llm.model, PROMPT_VERSION, start, end), llm, diffs=diffs
    )


def ensure_summary(db: Database, settings: Settings, pr: PullRequest, llm: LLM | None) -> PullRequest:
    """`pr` with a model summary when a model is configured (made now and stored if missing).

    Without a model, or when the model fails, the PR comes back with the summary it
    already has (extractive or imported); model failures never raise.
    """
    if llm is None:
        return pr
    summarize_prs(db, settings, [pr], llm)
    return get_pr(db, pr.repo, pr.number) or pr


def summarize_ingested(
    db: Database, settings: Settings, repo: str, start: datetime, end: datetime, client: GitHubClient,
    llm: LLM | None = None,
) -> SummaryRun | None:
    """After an ingest: summarize the window's new PRs with `llm`, else the configured model (None without one).

    A long-running process passes its own LLM, so that one concurrency bound covers all its calls.
    """
    if llm is not None:
        return summarize_window(db, settings, repo, start, end, llm, GitHubDiffs(client))
    from bot.llm import llm_from_settings

    own = llm_from_settings(settings)
    if own is None:
        return None
    with own:
        return summarize_window(db, settings, repo, start, end, own, GitHubDiffs(client))
