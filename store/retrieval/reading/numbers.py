"""PRs a question names by number or link."""
from __future__ import annotations

import re

from store.retrieval.reading.clean import clean
from store.text.patterns import LazyPattern

_PR_LINK = LazyPattern(r"https?://(?:www\.)?github\.com/[\w.-]+/[\w.-]+/pull/(\d{1,9})(?!\d)[^\s>|]*", re.IGNORECASE)
_PR_REF = LazyPattern(r"(?<![\w/&])(?:#|\b(?:pr|pull\s+request|pull)\s*#?\s*)(\d{1,7})\b", re.IGNORECASE)


def take_numbers(text: str, numbers: list[int]) -> str:
    def keep(m: re.Match[str]) -> str:
        number = int(m.group(1))
        if number not in numbers:
            numbers.append(number)
        return " "

    return _PR_REF.sub(keep, _PR_LINK.sub(keep, text))


def pr_numbers(text: str) -> list[int]:
    """The PRs a question names by number or link, in order."""
    numbers: list[int] = []
    take_numbers(clean(text), numbers)
    return numbers
