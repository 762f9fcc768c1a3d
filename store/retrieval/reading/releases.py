"""Questions about releases: which release shipped a PR, whether a release has it, what a release (or a span of
releases) holds, and what merged since the last one.

The releases a question names are read as typed ("v0.11", "0.11.1", "0.11.x") and resolved against the store's
releases when it is answered (store.report.release_spans): reading knows no list of releases. A bare version
("0.11", "0.11.1") names a release only beside words that say so ("release", "version", "make it into") or a PR
named by number, so "needs transformers 4.57.1" stays a question about PRs. The words that ask are cues of the lexicon; the grammar
of tags and spans ("since v0.10", "between v0.10 and v0.11", "v0.10..v0.11") is here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from itertools import pairwise

from store.text.patterns import LazyPattern
from store.understanding.releases import version_key
from store.understanding.vocabulary import cue


class ReleaseAsk(Enum):
    """What a question asks of releases."""

    SHIPPED = "shipped"  # which release shipped the PRs asked about, or whether the release named has them
    HOLDS = "holds"  # what a release holds, or a span of releases: "what's new in v0.11 since v0.10?"
    UNRELEASED = "unreleased"  # what merged since the last release, in no release yet


@dataclass(frozen=True)
class TagSaid:
    """A release as a question names it."""

    text: str  # as typed, without a trailing ".x": "v0.11", "0.11.1", "v0.11.0rc1"
    line: bool = False  # "0.11.x", "the 0.11 line": any release of that line, not only its first


@dataclass(frozen=True)
class ReleaseQuestion:
    """What a question asks of releases, as its words say it; `Query.release_ask` decides with the rest of it."""

    ask: ReleaseAsk | None = None  # None: a release named without saying what of it ("what about v0.12?")
    tag: TagSaid | None = None  # the release asked about: "in v0.11", "v0.11's changelog"
    since: TagSaid | None = None  # where a span starts: "since v0.10", "between v0.10 and v0.11"
    latest: bool = False  # "the last release" named instead of a tag

    def following(self, earlier: ReleaseQuestion) -> ReleaseQuestion:
        """This follow-up, with what it leaves unsaid taken from the earlier release question: "is it in v0.12?"
        after "did #N make it into v0.11?" asks the same of v0.12; a new tag starts its own span."""
        names = self.tag is not None or self.since is not None or self.latest
        return replace(
            self,
            ask=self.ask or earlier.ask,
            tag=self.tag if names else earlier.tag,
            since=self.since if names else earlier.since,
            latest=self.latest if names else earlier.latest,
        )


def release_following(mine: ReleaseQuestion | None, earlier: ReleaseQuestion | None, carries_on: bool) -> ReleaseQuestion | None:
    """A follow-up's release question: its own, completed from the earlier one; the earlier one when it says none
    and carries on from it ("and #123?" after "is #100 released yet?", but not "who wrote it?")."""
    if mine is None:
        return earlier if carries_on else None
    return mine if earlier is None else mine.following(earlier)


# A tag as typed: "v0.11", "v0.11.0rc1", "0.11.x"; a bare "0.11.1" or "0.11" only beside release words or a PR
# named ("needs transformers 4.57.1" names no release). A "v" with no dot ("v1", "mrv2") is never a tag.
_TAG = (
    r"(?:(?P<v>v)(?P<vnum>\d{1,4}(?:\.\d{1,4}){1,3})|(?P<long>\d{1,4}(?:\.\d{1,4}){2,3})|(?P<short>\d{1,4}\.\d{1,4}))"
    r"(?P<pre>[.-]?(?:rc|a|b|alpha|beta|post|dev)\.?\d{0,3})?(?P<line>\.x)?"
)
_TAGS = LazyPattern(rf"(?<!\w)(?<!\w\.)(?:{_TAG})(?!\w|\.\w)", re.IGNORECASE)
# "is #N in 0.11.1?": a PR named beside a bare version says it is a release too.
_NAMES_PR = LazyPattern(r"#\d|\bpr\s{0,2}#?\d", re.IGNORECASE)
# A tag follows a word that leads to a release ("in v0.11", "since v0.10", "v0.10..v0.11", "is #N in 0.11.1") or
# starts the question: "deepseek v3.1" is a model, and "transformers 4.57.1" a library.
_LEADS_TO_TAG = LazyPattern(
    r"(?:^|\b(?:in|into|on|about|since|after|before|from|between|to|and|or|vs|versus|of|is|was|did|does|has|the|a|any"
    r"|with|until|than"
    r"|release|version|tag|vllm)\s{1,3}|\.\.\.?\s{0,3}|->\s{0,3}|\u2192\s{0,3}|^\W{1,3})$",
    re.IGNORECASE,
)
# "the 0.11 line", "0.11 series": any release of the line.
_LINE_AFTER = LazyPattern(r"^\s{1,3}(?:line|series|branch|releases)\b", re.IGNORECASE)
# "since v0.10", "after v0.10", "from v0.10 (to …)": where a span starts.
_SINCE_BEFORE = LazyPattern(r"\b(?:since|after|from|between)\s{1,3}(?:the\s{1,3})?(?:release\s{1,3}|version\s{1,3})?$", re.IGNORECASE)
# Two tags with a span between them: "v0.10..v0.11", "v0.10 to v0.11", "v0.10 vs v0.11".
_SPAN_JOINT = LazyPattern(r"^\s{0,3}(?:\.\.\.?|->|\u2192|to|vs\.?|versus|and)\s{0,3}$", re.IGNORECASE)
# "since the last release": what merged since, in no release yet.
_SINCE_LATEST = LazyPattern(r"\b(?:since|after)\s{1,3}$", re.IGNORECASE)

_RELEASE_WORDS, _ASKS_SHIPPED, _ASKS_HOLDS = cue("release_words"), cue("asks_shipped"), cue("asks_holds")
_LATEST, _NEXT = cue("latest_release"), cue("next_release")


@dataclass
class _Tag:
    said: TagSaid
    start: int
    end: int
    since: bool = False


def take_release(text: str) -> tuple[str, ReleaseQuestion | None]:
    """What the question asks of releases, and its text without the words that said it (they are no topic);
    None, and the text as it was, when it asks nothing of releases."""
    tags = _tags(text)
    latest = _LATEST.search(text)
    upcoming = _NEXT.search(text)
    shipped, holds = _ASKS_SHIPPED.search(text), _ASKS_HOLDS.search(text)
    since_latest = latest is not None and _SINCE_LATEST.search(text[: latest.start()]) is not None
    if not (tags or latest or upcoming or shipped):
        return text, None
    if not tags and not latest and not upcoming and holds and not shipped:
        return text, None  # "what's new in ROCm?" names no release
    tag, since = _tag_and_since(tags)
    if upcoming or since_latest:
        ask: ReleaseAsk | None = ReleaseAsk.UNRELEASED
    elif since is not None or (holds and not shipped):
        ask = ReleaseAsk.HOLDS
    else:
        ask = ReleaseAsk.SHIPPED if shipped else None
    asked = ReleaseQuestion(ask, tag, since, latest=latest is not None and not since_latest)
    return _without(text, tags, [latest, upcoming, shipped, holds]), asked


def _tags(text: str) -> list[_Tag]:
    """The tags in the text, in order; bare versions only beside release words."""
    found = []
    about_releases = _RELEASE_WORDS.search(text) is not None or _NAMES_PR.search(text) is not None
    for m in _TAGS.finditer(text):
        # "the 0.11.x line" is one, but "flashinfer 0.6.x" is the library's.
        if not _LEADS_TO_TAG.search(text[: m.start()]) or not (m["line"] or m["v"] or about_releases):
            continue
        number = m["vnum"] or m["long"] or m["short"]
        said = f"{m['v'] or ''}{number}{m['pre'] or ''}"
        line = bool(m["line"]) or _LINE_AFTER.search(text[m.end():]) is not None
        found.append(_Tag(TagSaid(said, line), m.start(), m.end(), _SINCE_BEFORE.search(text[: m.start()]) is not None))
    for before, after in pairwise(found):
        if _SPAN_JOINT.match(text[before.end : after.start]):
            before.since = True  # "v0.10..v0.11", "between v0.10 and v0.11"
    return found


def _tag_and_since(tags: list[_Tag]) -> tuple[TagSaid | None, TagSaid | None]:
    """The release asked about and where its span starts: of two tags, the lower version starts it."""
    since = next((tag.said for tag in tags if tag.since), None)
    rest = [tag.said for tag in tags if tag.said != since]
    if since is None and len(rest) >= 2:
        low, high = sorted(rest[:2], key=lambda said: version_key(said.text) or ((0,), 0, 0))
        return high, low
    return (rest[0] if rest else None), since


def _without(text: str, tags: list[_Tag], found: list[re.Match[str] | None]) -> str:
    """The text with the tags, the span words around them and the release words taken out."""
    spans = [(tag.start, tag.end) for tag in tags] + [(m.start(), m.end()) for m in found if m is not None]
    for start, end in sorted(spans, reverse=True):
        text = f"{text[:start]} {text[end:]}"
    return _SPAN_WORDS.sub(" ", text)


# What is left of a span once its tags are out: "between  and ", "since ", "from  to".
_SPAN_WORDS = LazyPattern(
    r"\b(?:between|since|from)\s{1,3}(?:the\s{1,3})?(?:(?:release|version)\s{1,3})?(?:(?:and|to)\s{1,3})?(?=\s{0,3}(?:[?.!,]|\s|$))"
    r"|\s(?:and|to|vs\.?)\s{1,6}(?=[?.!,]|$)|\.\.\.?",
    re.IGNORECASE,
)
