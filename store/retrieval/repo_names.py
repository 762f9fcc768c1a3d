"""Repositories named in a question or a command: OWNER/NAME, OWNER/NAME#N, a GitHub link, or the bare NAME."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from store.text.patterns import LazyPattern

# As typed, or as Slack wraps it: <https://github.com/o/n/pull/1|label>. The link stays in the text when
# it names a PR, which the question reader then takes as that PR.
_LINK = LazyPattern(
    r"<?https?://(?:www\.)?github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?"
    r"(?:/pull/(?P<number>\d{1,9}))?(?=[/#?|>\s]|$)[^\s|>]*(?:\|[^>]*)?>?",
    re.IGNORECASE,
)
# Not part of a path ("vllm/v1/core"), a URL or a [CI/Build] tag.
_OWNER_NAME = LazyPattern(
    r"(?<![\w./:\[-])(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]*[\w-])(?:#(?P<number>\d{1,9}))?(?![\w/\]-])"
)


@dataclass
class Named:
    """What a text says about repositories, and the text without those names."""

    text: str
    repos: list[str] = field(default_factory=list)  # known repositories named, as the store spells them
    unknown: list[str] = field(default_factory=list)  # OWNER/NAME words (or links) naming no known repository
    numbers: list[tuple[str, int]] = field(default_factory=list)  # PRs named with their repository
    foreign: list[str] = field(default_factory=list)  # links to PRs of other repositories, as OWNER/NAME#N

    def _not_known(self, said: str) -> None:
        if said not in self.unknown:
            self.unknown.append(said)

    def _add(self, repo: str, number: str | None) -> None:
        if repo not in self.repos:
            self.repos.append(repo)
        if number and (repo, int(number)) not in self.numbers:
            self.numbers.append((repo, int(number)))


def find_repos(text: str, known: Sequence[str], bare_names: bool = True) -> Named:
    """The repositories `text` names among `known` (compared without case, as GitHub does).

    A bare NAME counts only when `bare_names` and exactly one known repository has it.
    """
    by_lower = {repo.lower(): repo for repo in known}
    named = Named(text)

    def link(match: re.Match[str]) -> str:
        said = f"{match['owner']}/{match['name']}"
        repo = by_lower.get(said.lower())
        if repo is None:  # a link to another repository's PR must not be read as a PR of a known one
            named._not_known(said)
            if not match["number"]:
                return match[0]
            named.foreign.append(f"{said}#{match['number']}")
            return " "
        named._add(repo, match["number"])
        return match[0] if match["number"] else " "

    def owner_name(match: re.Match[str]) -> str:
        said = f"{match['owner']}/{match['name']}"
        repo = by_lower.get(said.lower())
        if repo is None:
            named._not_known(said)
            return match[0]
        named._add(repo, match["number"])
        return f" #{match['number']} " if match["number"] else " "

    rest = _OWNER_NAME.sub(owner_name, _LINK.sub(link, text))
    if bare_names:
        rest = _bare_names(rest, known, named)
    named.text = " ".join(rest.split())
    return named


def _bare_names(text: str, known: Sequence[str], named: Named) -> str:
    names: dict[str, list[str]] = {}
    for repo in known:
        names.setdefault(repo.split("/")[-1].lower(), []).append(repo)
    for name, repos in names.items():
        if len(repos) != 1:
            continue  # two owners' "vllm": the bare name says neither

        def found(match: re.Match[str], repo: str = repos[0]) -> str:
            named._add(repo, match["number"])
            return f" #{match['number']} " if match["number"] else " "

        pattern = rf"(?<![\w./#-]){re.escape(name)}(?:'s)?(?:#(?P<number>\d{{1,9}}))?(?![\w/-]|\.\w)"
        text = re.sub(pattern, found, text, flags=re.IGNORECASE)
    return text
