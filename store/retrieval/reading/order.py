"""Order within what is asked: the first or last merge, the largest, the largest gain, newer or earlier."""
from __future__ import annotations

from store.retrieval.reading.form import SUPERLATIVE
from store.retrieval.reading.query import Order, Side
from store.text.patterns import LazyPattern
from store.understanding.vocabulary import cue

_ORDER = LazyPattern(
    r"\b(?:the\s+)?(?:very\s+)?(?P<order>earliest|first|last|latest|final|most\s+recent|newest|oldest)(?:\s+[\w.-]+){0,3}?\s+"
    r"(?:pr|prs|merge|merges|merged|thing|one|change|commit|pull\s+request|to\s+(?:merge|land))\b"
    r"|\b(?:merged|landed|went\s+in)\s+(?P<after>first|last)\b"
    # "which of those is the newest?": the word ends the question.
    r"|\b(?:is|was)\s+(?:the\s+)?(?P<end>earliest|first|last|latest|most\s+recent|newest|oldest)(?=\W*$)"
)
# "anything newer?", "what merged since then?": later than what the thread asked about; "his earlier work?": before.
_RELATIVE = LazyPattern(
    r"\b(?:(?P<after>newer|later|more\s+recent(?:ly)?|since\s+then|since(?=\W*$)|after\s+that|afterwards?)"
    r"|(?P<before>earlier|before\s+(?:that|then)|previously|prior|older(?=\s+(?:stuff|ones?|prs?|work|changes?|things))))\b"
)


def take_relative(text: str) -> tuple[str, Side | None]:
    found = _RELATIVE.search(text)
    if found is None:
        return text, None
    return _RELATIVE.sub(" ", text), Side.AFTER if found["after"] else Side.BEFORE
# "count of PRs", "the number of merges": how the count is asked, not what is counted.
_COUNTING = cue("counting")
_ORDERS = {"earliest": Order.FIRST, "first": Order.FIRST, "oldest": Order.FIRST}


# "the biggest PR by files changed"; and what a gain is stated in ("the largest TTFT cut"), and the words that only
# say there was one.
_BY_FILES, _GAIN_WORDS, _GAIN_MEASURE = cue("by_files"), cue("gain_words"), cue("gain_measure")


def take_top(text: str) -> tuple[str, Order | None]:
    """The measure a superlative asks for (its words removed): "largest" (changed files; the size of a change,
    also what "the most important X change" is read by) or "gain" (the largest improvement a PR states)."""
    found = SUPERLATIVE.search(text)
    if found is None:
        return text, None
    rest = text[: found.start()] + " " + text[found.end() :]
    by_files = _BY_FILES.search(rest)
    if by_files:
        return rest[: by_files.start()] + " " + rest[by_files.end() :], Order.LARGEST
    if _GAIN_WORDS.search(rest):
        return _GAIN_MEASURE.sub(" ", rest), Order.GAIN  # "the biggest decode speedup": of decode, by the gain stated
    return rest, Order.LARGEST


def take_order(text: str) -> tuple[str, Order | None]:
    """"the earliest merge", "the very last PR": which end of the range is asked for (its word removed)."""
    found = _ORDER.search(text)
    if found is None:
        return text, None
    word = next(name for name in ("order", "after", "end") if found[name])
    said = found[word].split()[0]
    return text[: found.start(word)] + " " + text[found.end(word) :], _ORDERS.get(said, Order.LAST)


def without_counting(text: str) -> str:
    """"count of PRs", "the number of merges": how the count is asked, not what is counted."""
    return _COUNTING.sub(" ", text)
