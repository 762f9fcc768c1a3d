"""The answer to every question and command while the store holds nothing to answer from."""
from __future__ import annotations

from sqlite_utils import Database

from store.tables.prs import known_repos

FILL = "fill it with `prdigest import …` or `prdigest ingest …` (`prdigest import --sample` loads example reports)"
EMPTY_STORE = f"The store is empty: {FILL}."


def empty_store_notice(db: Database, repo: str) -> str | None:
    """What to say instead of an answer when the store holds no PR of `repo` (plain text); None when it holds some."""
    # One indexed lookup for every question and command; only an empty answer looks further.
    if db.execute("select 1 from prs where repo = ? limit 1", [repo]).fetchone():
        return None
    if known_repos(db):
        return f"The store holds no PRs of {repo} yet: {FILL}."
    return EMPTY_STORE
