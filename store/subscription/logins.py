"""GitHub logins, as filters and the bots setting take them; a module of its own so that reading the
settings loads nothing else of a filter."""
from __future__ import annotations

from store.text.patterns import LazyPattern

# Letters, digits and inner hyphens; a GitHub App's account ends in [bot].
_LOGIN = LazyPattern(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")


def is_login(text: str) -> bool:
    """Whether `text` can be a GitHub login (an App's account included)."""
    return bool(_LOGIN.match(text))
