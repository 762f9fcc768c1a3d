"""The PRs a text names: links to the configured GitHub's PRs, OWNER/NAME#N, and #N, among the repositories followed.

Link previews read the URLs Slack sends, the "Explain these PRs" shortcut a message's text, and the
feedback modal the PRs a person says an answer should have cited.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.answers.scope import channel_repos, followed, holders
from bot.runtime import Runtime
from store.retrieval.reading.numbers import pr_numbers
from store.retrieval.repo_names import find_repos
from store.sources.importer import web_host
from store.tables.teams import Team

PR = tuple[str, int]  # (OWNER/NAME as the store spells it, number)
# Any text a person or Slack hands over is read this far; a message holds at most 40,000 characters.
MAX_TEXT = 40_000
_WORD = re.compile(r"[^\s,;]+")
_SLACK_LABEL = re.compile(r"<((?:https?|mailto):[^<>|\s]*)\|[^<>]*>")
_NUMBER = re.compile(r"^(?:#|pr\s*#?)?([1-9]\d{0,8})$", re.IGNORECASE)


def _link_pattern(host: str) -> re.Pattern[str]:
    """A PR link of `host`, as typed or as Slack wraps it (<url|label>), with any path after the number."""
    www = r"(?:www\.)?" if host == "github.com" else ""
    return re.compile(
        rf"https?://{www}{re.escape(host)}/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)/pull/(?P<number>[1-9]\d{{0,8}})(?=[/#?|>\s]|$)[^\s|>]*",
        re.IGNORECASE,
    )


@dataclass
class Named:
    prs: list[PR] = field(default_factory=list)  # in the order they were named, each once
    elsewhere: int = 0  # links to PRs of repositories the bot does not follow, left out


def host_of(runtime: Runtime) -> str:
    """The host PR links point at: github.com, or the GitHub Enterprise host PRDIGEST_GITHUB_API_URL names."""
    return web_host(runtime.settings.github_api_url)


def linked_prs(text: str, host: str, known: Sequence[str]) -> Named:
    """The PRs `text` links to among the `known` repositories (GitHub compares names without case)."""
    by_lower = {repo.lower(): repo for repo in known}
    named = Named()
    for match in _link_pattern(host).finditer(text[:MAX_TEXT]):
        repo = by_lower.get(f"{match['owner']}/{match['name']}".lower())
        if repo is None:
            named.elsewhere += 1
        elif (repo, int(match["number"])) not in named.prs:
            named.prs.append((repo, int(match["number"])))
    return named


def message_prs(runtime: Runtime, team: Team, text: str, channel: str | None) -> Named:
    """The PRs a message links to or names (OWNER/NAME#N, #N, "PR 1234"). A number alone is the PR of the
    channel's repositories that holds it, else of another repository followed, else of the channel's first."""
    # A link's label is read as its URL: "<https://github.com/other/repo/pull/7|#7>" names no PR of ours.
    text, host, known = _SLACK_LABEL.sub(r"\1", text[:MAX_TEXT]), host_of(runtime), followed(runtime, team)
    named = linked_prs(text, host, known)
    rest = find_repos(_link_pattern(host).sub(" ", text), known, bare_names=False)
    _add(named, rest.numbers)
    given = {number for _, number in rest.numbers}
    repos = channel_repos(runtime, team, channel)
    for number in pr_numbers(rest.text):
        if number not in given:
            _add(named, [((holders(runtime, repos, number, known) or list(repos))[0], number)])
    named.prs.sort(key=lambda pr: _first_seen(text, pr[1]))  # as the message names them
    return named


def _first_seen(text: str, number: int) -> int:
    found = re.search(rf"(?<!\d){number}(?!\d)", text)
    return found.start() if found else len(text)


def read_pr_list(runtime: Runtime, team: Team, text: str, default_repo: str) -> list[PR]:
    """The PRs a person listed: numbers (#N, N), OWNER/NAME#N or links, split by spaces or commas.
    ValueError names the first word that is none of those, or a repository the bot does not follow."""
    host, known = host_of(runtime), followed(runtime, team)
    by_lower = {repo.lower(): repo for repo in known}
    found: list[PR] = []
    for word in _WORD.findall(text[:MAX_TEXT]):
        word = word.strip("<>")
        number = _NUMBER.match(word)
        if number:
            _add_one(found, (default_repo, int(number.group(1))))
            continue
        link = _link_pattern(host).fullmatch(word.split("|")[0]) or _OWNER_NAME_NUMBER.fullmatch(word)
        if link is None:
            raise ValueError(f"\u201c{word[:60]}\u201d is not a PR number or link")
        repo = by_lower.get(f"{link['owner']}/{link['name']}".lower())
        if repo is None:
            raise ValueError(f"{link['owner'][:60]}/{link['name'][:60]} is not a repository prdigest follows")
        _add_one(found, (repo, int(link["number"])))
    return found


_OWNER_NAME_NUMBER = re.compile(r"(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)#(?P<number>[1-9]\d{0,8})")


def _add(named: Named, prs: Sequence[PR]) -> None:
    for pr in prs:
        _add_one(named.prs, pr)


def _add_one(prs: list[PR], pr: PR) -> None:
    if pr not in prs:
        prs.append(pr)
