"""Text cut to a token budget: one piece, or as many items of a list as fit.

Both count as estimate_tokens does, four characters a token, so that what they
return never estimates above the tokens it was given.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence


def clip(text: str, tokens: int, note: str = "") -> str:
    """`text` within `tokens`, ending in `note` when it had to be cut."""
    chars = max(tokens, 0) * 4
    if len(text) <= chars:
        return text
    keep = chars - len(note)
    return text[:keep] + note if keep > 0 else text[:chars]


def fitting(items: Sequence[str], tokens: int, separator: str, more: Callable[[int], str]) -> int:
    """How many of `items`, from the first, fit `tokens` with `separator` between them, leaving room
    for a last item `more(how many were left out)` when any is."""
    chars = max(tokens, 0) * 4
    used = 0
    for index, item in enumerate(items):
        left = len(items) - index - 1
        cost = (len(separator) if index else 0) + len(item)
        if used + cost + (len(separator) + len(more(left)) if left else 0) > chars:
            return index
        used += cost
    return len(items)


def fitted(items: Sequence[str], tokens: int, separator: str, more: Callable[[int], str]) -> str:
    """As many of `items` as fit `tokens`, `separator` between them, then `more(how many were left out)`."""
    kept = list(items[: fitting(items, tokens, separator, more)])
    if len(kept) < len(items):
        kept.append(more(len(items) - len(kept)))
    return clip(separator.join(kept), tokens)
