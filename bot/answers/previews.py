"""A PR as a link preview shows it: from the store, or fetched from GitHub when the bot ingests.

A PR the store lacks is fetched only where ingest is configured (PRDIGEST_REPOS set, as for `serve`'s
polling); a merged one is then stored as ingest would have stored it, and one not merged is read and
shown as open or closed. Where ingest is not configured, a PR not in the store gets no preview.
"""
from __future__ import annotations

import logging

from sqlite_utils import Database

from bot.ingest import github_client
from bot.messages.preview import Preview
from bot.messages.releases import shipped_words
from bot.runtime import Runtime
from store.model import PullRequest
from store.report.release import release_status
from store.sources.github import GitHubError
from store.sources.ingest import Unmerged, fetch_pull
from store.tables.prs import get_pr

log = logging.getLogger(__name__)

# A preview is wanted now: a GitHub rate limit that resets later than this is not waited for.
FETCH_MAX_WAIT = 10


def find_pr(runtime: Runtime, repo: str, number: int) -> PullRequest | Unmerged | None:
    """The stored PR, else the one GitHub has when ingest is configured; None when neither is to be had."""
    pr = get_pr(runtime.db, repo, number)
    if pr is not None or not runtime.settings.ingests:
        return pr
    try:
        with github_client(runtime.settings, max_wait=FETCH_MAX_WAIT) as client:
            return fetch_pull(runtime.db, client, repo, number)
    except GitHubError as exc:
        log.warning("could not fetch %s#%d from GitHub: %s", repo, number, exc)
        return None


def preview_of(runtime: Runtime, found: PullRequest | Unmerged) -> Preview:
    """The preview of a stored or fetched PR: merged on its local day, or open or closed."""
    if isinstance(found, Unmerged):
        pr, status, release = found.pr, found.state, None
    else:
        pr, release = found, release_of(runtime.db, found)
        status = f"merged {pr.merged_at.astimezone(runtime.settings.timezone).date().isoformat()}"
    what = pr.summary.what_changed if pr.summary else ""
    return Preview(pr.url, pr.number, pr.title, pr.author, status, tuple(pr.areas), what, release)


def release_of(db: Database, pr: PullRequest) -> str | None:
    """Where `pr` shipped, in a preview's words: "Shipped in v0.11.1", or "Not in a release yet"; None when the
    store knows no release of its repository, or cannot tell yet (a release since its merge is not mapped)."""
    return shipped_words(release_status(db, pr))
