"""PR summaries from the configured model: once per (prompt version, model), concurrently, never half-written.

Model calls run on a thread pool (bounded by PRDIGEST_LLM_CONCURRENCY, as the LLM
itself is); every write to the store happens on the calling thread, one
transaction per PR. The model is asked for structured output (a JSON schema) unless
its server is known to refuse it; then for Markdown. A reply that cannot be read is
followed up once with a short repair prompt; if that fails too, or the model cannot
be reached, the PR keeps the summary it has and is marked for a retry
(`prdigest summarize --missing`), until it has failed PRDIGEST_SUMMARY_MAX_FAILURES times.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from bot.config import Settings
from bot.model.client import LLM, LLMError, SchemaRefused
from bot.model.prompt import PROMPT_VERSION, REPLY_SCHEMA, REPLY_TOKENS, build_prompt, repair_turn, system_prompt
from bot.model.reply import ReplyFormatError, parse_reply
from store.model import PullRequest, Summary
from store.sources.github import GitHubClient, GitHubError, UnusableAnswer
from store.tables.model_calls import ModelCall
from store.tables.prs import get_pr
from store.tables.structured_output import json_schema_support, remember_json_schema
from store.tables.summaries import (
    mark_for_retry,
    model_source,
    prs_needing_summary,
    save_model_summary,
    summary_need,
)
from store.text.prose import plural
from store.understanding.summary import extractive_summary

DiffSource = Callable[[PullRequest], "list[dict[str, Any]] | None"]


class GitHubDiffs:
    """The PR's file objects (with patches) from GitHub, for the prompt.

    After one failure the rest of the run goes without diffs: GitHub is down, out of
    rate limit, or does not know the repository, and each further PR would only wait.
    An answer about one PR that cannot be used (UnusableAnswer) is that PR's alone: it
    is raised, and the others still get their diffs.
    """

    def __init__(self, client: GitHubClient) -> None:
        self.client = client
        self.problem: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> GitHubDiffs:
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
        except UnusableAnswer:
            raise
        except GitHubError as exc:
            with self._lock:
                self.problem = self.problem or str(exc)
            return None


class _ReplyFormat:
    """Structured output or Markdown, for one run's threads, from what the store knows of the server.

    The first refusal switches every thread to Markdown, and is remembered for the next runs.
    """

    def __init__(self, db: Database, llm: LLM) -> None:
        self.known = json_schema_support(db, llm.endpoint, llm.model)
        self.structured = self.known is not False
        self.refusal: str | None = None

    def refused(self, why: str) -> None:
        self.structured, self.refusal = False, why

    def remember(self, db: Database, llm: LLM, attempt: _Attempt) -> None:
        """Store what the server did with a schema, once; on the calling thread, like every write."""
        if self.refusal and self.known is not False:
            remember_json_schema(db, llm.endpoint, llm.model, False, self.refusal)
            self.known = False
        elif attempt.schema_taken and self.known is None:
            remember_json_schema(db, llm.endpoint, llm.model, True)
            self.known = True


@dataclass
class _Attempt:
    pr: PullRequest
    calls: list[ModelCall]
    type: str | None = None
    summary: Summary | None = None
    error: str | None = None
    counts: bool = True  # a failure of this PR's, not of the server: it counts toward the cap
    schema_taken: bool = False  # the server answered a request with a schema


@dataclass
class SummaryRun:
    """What a run did, for a line on the terminal or in the log."""

    model: str
    summarized: list[int] = field(default_factory=list)
    current: int = 0  # PRs that already had a summary for this model and prompt
    given_up: int = 0  # PRs that failed too often to be tried without --force
    failed: list[tuple[int, str]] = field(default_factory=list)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reasoning_tokens: int = 0
    structured: bool | None = None  # whether replies were asked for as JSON (last); None when no call was made
    github_problem: str | None = None

    def describe(self) -> str:
        tokens = f"{self.tokens_in:,} tokens in, {self.tokens_out:,} out"
        if self.reasoning_tokens:
            tokens += f" ({self.reasoning_tokens:,} reasoning)"
        text = f"summarized {plural(len(self.summarized), 'PR')} with {self.model} ({plural(self.calls, 'model call')}, {tokens})"
        if self.current:
            text += f"; {self.current} already current"
        if self.given_up:
            text += f"; {self.given_up} skipped after failing too often (--force tries them again)"
        if self.failed:
            text += f"; {len(self.failed)} failed and marked for retry"
        if self.structured is False:
            text += "; replies asked for in Markdown, as the server takes no JSON schema"
        if self.github_problem:
            text += f"; without diffs from GitHub after: {self.github_problem}"
        return text


def _attempt(pr: PullRequest, llm: LLM, budget: int, diffs: DiffSource, reply_format: _ReplyFormat) -> _Attempt:
    """Ask the model, and once more with a repair prompt if the reply cannot be read; never raises for model failures.

    A PR whose files GitHub answered unusably is not sent: it is marked for a later run, which does not count
    against it.
    """
    done = _Attempt(pr, [])
    try:
        files = diffs(pr)
    except UnusableAnswer as exc:
        done.error, done.counts = f"left for a later run: {exc}", False
        return done
    prompt = build_prompt(pr, files, budget)
    user = prompt.text
    earlier: list[tuple[str, str]] = []
    repaired = False
    while True:
        structured = reply_format.structured
        try:
            reply = llm.complete(
                system_prompt(structured), user, REPLY_TOKENS,
                json_schema=REPLY_SCHEMA if structured else None, earlier=earlier,
            )
        except SchemaRefused as exc:
            done.calls.append(exc.call())
            reply_format.refused(str(exc))
            continue  # the same request, asking for Markdown
        except LLMError as exc:
            done.calls.append(exc.call())
            done.error, done.counts = str(exc), not exc.transient
            return done
        done.schema_taken = done.schema_taken or structured
        try:
            parsed = parse_reply(reply.text)
        except ReplyFormatError as exc:
            done.calls.append(reply.call("unparsed", str(exc)))
            done.error = f"the reply could not be read, nor the one to a repair prompt (last: {exc})"
            if repaired:
                return done
            repaired = True
            prompt, earlier, user = repair_turn(pr, files, budget, reply.text, str(exc), structured)
            continue
        done.calls.append(reply.call())
        sections = dict(parsed.sections)
        if prompt.coverage_note:
            sections["insights"] = f"{sections['insights']} {prompt.coverage_note}"
        done.type, done.summary, done.error = parsed.type, Summary(**sections, source=model_source(llm.model)), None
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
    todo = _needing_summaries(db, settings, prs, llm, force, run)
    if not todo:
        return run
    own: GitHubDiffs | None = None  # opened here, so closed here
    source: DiffSource
    if diffs is None:
        source = own = GitHubDiffs.from_settings(settings)
    else:
        source = diffs
    reply_format = _ReplyFormat(db, llm)

    def finish(attempt: _Attempt) -> None:
        reply_format.remember(db, llm, attempt)
        _store(db, attempt, llm.model, run)
        if on_done:
            on_done(attempt.pr, attempt.error)

    pool = ThreadPoolExecutor(max_workers=settings.llm_concurrency, thread_name_prefix="summarize")
    try:
        if reply_format.known is None:
            # The first PR goes alone: if the server refuses a schema, the others never ask for one.
            finish(_attempt(todo[0], llm, settings.summary_tokens, source, reply_format))
            todo = todo[1:]
        futures = [pool.submit(_attempt, pr, llm, settings.summary_tokens, source, reply_format) for pr in todo]
        for future in as_completed(futures):
            finish(future.result())
    finally:
        # On Ctrl-C only the calls in flight finish; what was stored so far stays.
        pool.shutdown(wait=True, cancel_futures=True)
        if own:
            own.client.close()
    run.structured = reply_format.structured
    if isinstance(source, GitHubDiffs):
        run.github_problem = source.problem
    return run


def _needing_summaries(
    db: Database, settings: Settings, prs: Iterable[PullRequest], llm: LLM, force: bool, run: SummaryRun
) -> list[PullRequest]:
    """The PRs to summarize; those with a current summary, or given up on, are counted in `run`."""
    todo = []
    for pr in prs:
        need = "needed" if force else summary_need(db, pr, llm.model, PROMPT_VERSION, settings.summary_max_failures)
        if need == "needed":
            todo.append(pr)
        elif need == "given up":
            run.given_up += 1
        else:
            run.current += 1
    return todo


def _store(db: Database, attempt: _Attempt, model: str, run: SummaryRun) -> None:
    run.calls += len(attempt.calls)
    run.tokens_in += sum(call.tokens_in for call in attempt.calls)
    run.tokens_out += sum(call.tokens_out for call in attempt.calls)
    run.reasoning_tokens += sum(call.reasoning_tokens for call in attempt.calls)
    pr = attempt.pr
    if attempt.summary and attempt.type:
        save_model_summary(db, pr, attempt.type, attempt.summary, PROMPT_VERSION, attempt.calls)
        run.summarized.append(pr.number)
    else:
        reason = attempt.error or "no usable reply"
        mark_for_retry(
            db, pr, reason, model, PROMPT_VERSION, attempt.calls, extractive_summary(pr), counts=attempt.counts
        )
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
    from bot.model.client import llm_from_settings

    own = llm_from_settings(settings)
    if own is None:
        return None
    with own:
        return summarize_window(db, settings, repo, start, end, own, GitHubDiffs(client))
