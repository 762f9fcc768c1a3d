"""Which repositories a command or a question covers.

A question or command that names repositories covers those. Otherwise it
covers the channel's (those it subscribes to, in its workspace), or every
configured repository where the channel has none. A PR number alone resolves in those first, then in
the other repositories the bot knows, and is asked about when two have it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.messages.mrkdwn import escape
from bot.runtime import Runtime
from store.retrieval.reading.numbers import pr_numbers
from store.retrieval.repo_names import find_repos
from store.tables.prs import known_repos
from store.tables.subscriptions import channel_subscriptions, team_subscriptions
from store.tables.teams import Team
from store.understanding.areas import resolve_area


@dataclass
class Scope:
    repos: tuple[str, ...]  # what is covered, the channel's own first
    text: str  # the words asked, without the repositories' names
    named: bool = False  # the text limited it
    unknown: list[str] = field(default_factory=list)  # OWNER/NAME words naming no repository followed here
    ambiguous: str | None = None  # the question to ask back when a PR number is in several repositories
    history: list[str] = field(default_factory=list)  # the thread's earlier questions, without repositories' names
    foreign: list[str] = field(default_factory=list)  # PRs linked in repositories the bot does not follow


def followed(runtime: Runtime, team: Team) -> list[str]:
    """Every repository the bot knows in the team's workspace: configured, subscribed to there, or in the store;
    configured ones first."""
    db = runtime.db
    subscribed = [sub.repo for sub in team_subscriptions(db, team)]
    return list(dict.fromkeys([*runtime.settings.repos, *subscribed, *known_repos(db)]))


def channel_repos(runtime: Runtime, team: Team, channel: str | None) -> tuple[str, ...]:
    """The repositories the team's channel subscribes to, or every configured one."""
    subscribed = [sub.repo for sub in channel_subscriptions(runtime.db, team, channel)] if channel else []
    return tuple(dict.fromkeys(subscribed)) or runtime.settings.repos


def scope_of(runtime: Runtime, text: str, team: Team, channel: str | None, history: Sequence[str] = ()) -> Scope:
    """The repositories `text` covers; a follow-up in a thread keeps the repositories an earlier question named."""
    known = followed(runtime, team)
    bare = len(known) > 1  # with one repository, its name is just a word of the question
    named = find_repos(text, known, bare_names=bare)
    earlier = [find_repos(turn, known, bare_names=bare) for turn in history]
    repos = tuple(named.repos) or next((tuple(turn.repos) for turn in reversed(earlier) if turn.repos), ())
    unknown = [word for word in named.unknown if not _is_area(word, known)]
    scope = Scope(repos or channel_repos(runtime, team, channel), named.text, bool(repos), unknown)
    scope.history = [turn.text for turn in earlier]
    scope.foreign = named.foreign
    linked = {number for _, number in named.numbers}
    numbers = [number for number in pr_numbers(named.text) if number not in linked]
    if numbers and not (scope.named and len(scope.repos) == 1):
        _resolve_numbers(runtime, scope, numbers, known)
    return scope


def _is_area(word: str, repos: Sequence[str]) -> bool:
    """An area's name or alias written with a slash ("ci/build", "p/d"): a word of the command, not a repository."""
    return any(resolve_area(word, repo) for repo in (None, *repos))


def _resolve_numbers(runtime: Runtime, scope: Scope, numbers: list[int], known: list[str]) -> None:
    """Narrow the scope to the repositories holding the PRs named by number alone, or say which to choose."""
    holding: list[str] = []
    for number in numbers:
        found = holders(runtime, scope.repos, number, known)
        if len(found) > 1:
            scope.ambiguous = ambiguous_number(number, found)
            return
        holding.extend(repo for repo in found if repo not in holding)
    if holding:
        scope.repos = tuple(holding)


def not_followed(said: str, repos: Sequence[str]) -> str:
    """One line for an OWNER/NAME (or a PR link's OWNER/NAME#N) the bot does not follow."""
    repo = said.split("#")[0]
    return (
        f"`{escape(repo)}` is not a repository prdigest follows here (it follows {escape(', '.join(repos))});"
        " add it to PRDIGEST_REPOS to follow it"
    )


def ambiguous_number(number: int, repos: Sequence[str]) -> str:
    choices = " or ".join(f"`{escape(repo)}#{number}`" for repo in repos)
    return f"#{number} is in {len(repos)} repositories: which one? Ask again with {choices}."


def holders(runtime: Runtime, repos: Sequence[str], number: int, known: Sequence[str]) -> list[str]:
    """The repositories holding PR `number`: among `repos` if any does, else among the others the bot knows
    (`known`, as followed() gives them)."""
    found = _holding(runtime, repos, number)
    if found:
        return found
    others = [repo for repo in known if repo not in repos]
    return _holding(runtime, others, number)


def _holding(runtime: Runtime, repos: Sequence[str], number: int) -> list[str]:
    if not repos:
        return []
    marks = ", ".join("?" * len(repos))
    rows = runtime.db.execute(f"select repo from prs where number = ? and repo in ({marks})", [number, *repos])
    held = {row[0] for row in rows}
    return [repo for repo in repos if repo in held]
