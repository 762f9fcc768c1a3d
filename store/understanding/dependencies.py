"""How a PR's title moves a dependency: to a release ("Bump xgrammar to 0.1.35", "Pin torch==2.9.1"), or below one
("Cap xgrammar below 0.2.0"). Of the PRs about a dependency, the newest that moves it says which release we are on."""
from __future__ import annotations

import re
from dataclasses import dataclass

from store.text.patterns import LazyPattern
from store.understanding.relations import revert_title

_MOVES_TO = LazyPattern(
    # "Bump xgrammar to 0.1.35", "Upgrade to PyTorch 2.10", "Pin torch==2.9.1".
    r"\b(?:bump|upgrade|update|pin|move|require)s?\b.{0,80}?(?:\bto\s+(?:[a-z][\w.-]{0,40}\s+)?|==|>=)v?(?P<version>\d+(?:\.\d+)+)",
    re.IGNORECASE,
)
_CAPS_BELOW = LazyPattern(r"\b(?:cap|limit|restrict)s?\b.{0,80}?\b(?:below|under|<)\s*v?(?P<version>\d+(?:\.\d+)+)", re.IGNORECASE)


@dataclass(frozen=True)
class Move:
    version: tuple[int, ...]
    below: bool  # "below 0.2.0": any release before it
    reverted: bool  # the title reverts the move: we are back on what came before

    def on(self, release: str) -> bool:
        """Whether we are on `release` ("0.1.32", "0.6": any 0.6 release) after this move."""
        asked = _parts(release)
        if self.reverted:
            return False
        if self.below:
            return asked < self.version
        return self.version[: len(asked)] == asked


def moved(title: str) -> Move | None:
    """How the title moves a dependency, if it does."""
    reverted = revert_title(title)
    said = reverted[0] if reverted else title
    to, below = _MOVES_TO.search(said), _CAPS_BELOW.search(said)
    found = to or below
    if found is None:
        return None
    return Move(_parts(found["version"]), below=to is None, reverted=reverted is not None)


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").removesuffix(".x").split(".") if part.isdigit())
