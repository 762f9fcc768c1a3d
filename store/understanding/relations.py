"""How merged PRs refer to each other: reverts, regression fixes, follow-ups and plain mentions.

Relations are read from a PR's title, body and summary when it is saved, so a
question about one PR can bring the PRs that revert, fix or follow it.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from sqlite_utils import Database

from store.days import to_utc_text
from store.model import PullRequest
from store.text.patterns import LazyPattern

# Strongest first: when a PR refers to another in several ways, the first kind wins.
KINDS = ("reverts", "fixes", "follows", "mentions")
# Raise it whenever reading changes what a text relates to: every store reads its PRs' relations again once.
READER_VERSION = 3

# "#123", "PR 123", "PR #123", "pull request #123", "owner/repo#123" or a link to a PR;
# the last two count only when they name the PR's own repository. Every repeat is
# bounded (GitHub's own limits for names) so that crafted text cannot make it backtrack.
_REF = (
    r"(?:(?<![\w.-])(?P<repo>[\w.-]{1,39}/[\w.-]{1,100})#|(?<![\w/.-])#|\b(?:PR|pull\s{1,3}request)\s{0,3}#?\s{0,3}"
    r"|https?://github\.com/(?P<link>[\w.-]{1,39}/[\w.-]{1,100})/pull/)(?P<number>\d{1,7})\b"
)
_GAP = r"\s{1,3}"
_CUE = {
    # "reverts #N", but not "was reverted in #N" (there #N is the revert).
    "reverts": [
        rf"\brevert(?:s|ing)?{_GAP}(?:(?:the|a|of|change|changes|commit|from|in){_GAP}){{0,4}}",
        rf"\breverted{_GAP}(?:(?:the|a|of|change|changes|commit){_GAP}){{0,4}}",
        rf"\brolls?{_GAP}back{_GAP}(?:(?:the|change|changes|from|in){_GAP}){{0,4}}",
        rf"\bback(?:s|ed|ing)?{_GAP}out{_GAP}(?:(?:the|change|changes|commit|of){_GAP}){{0,4}}",
    ],
    "fixes": [
        rf"\b(?:broken|broke|caused|introduced|regressed){_GAP}(?:by|in){_GAP}",
        rf"\bregressions?{_GAP}(?:(?:introduced|caused){_GAP})?(?:from|in|by|of|after){_GAP}",
        rf"\b(?:fix|fixes|fixed|fixing){_GAP}(?:(?:a|the|an){_GAP})?(?:regression|bug|breakage|crash|failure)s?{_GAP}"
        rf"(?:(?:introduced|caused){_GAP})?(?:from|in|by|after){_GAP}",
        rf"\b(?:fix|fixes|fixed|fixing|close|closes|closed|resolve|resolves|resolved){_GAP}",
    ],
    "follows": [
        rf"\bfollow[\s-]?ups?{_GAP}(?:(?:to|of|for|on){_GAP})?",
        rf"\bre-?lands?{_GAP}(?:(?:the|a|change|changes|from|of){_GAP}){{0,3}}",
        rf"\b(?:continuation|continues|builds?{_GAP}on|based{_GAP}on|part{_GAP}of|split{_GAP}(?:from|out{_GAP}of)|extends?){_GAP}",
    ],
}
# What every reference above contains, in a casefolded text. It starts with one of a few
# characters, so scanning a text that names no PR costs a fraction of trying _REF at each
# position; casefolding first is faster than IGNORECASE, which finds no such first characters.
_MAYBE_REF = LazyPattern(r"(?:#|/pull/|pr\b|request)\s{0,3}#?\s{0,3}\d")
# Only so much of a title or text is read: relations are stated early, and regexes then stay cheap.
MAX_TITLE_CHARS = 500
MAX_TEXT_CHARS = 50_000
# GitHub's revert button titles a PR `Revert "<title of the reverted PR's commit> (#N)"`; written by hand it is
# often `Revert "<title>" (#N)`.
_REVERT_TITLE = LazyPattern(
    r'^\s*Revert\s+"(?P<title>.+?)(?:\s*\(#(?P<number>\d+)\))?"(?:\s*\(#(?P<outside>\d+)\))?\s*$', re.IGNORECASE
)
# PR templates: code and commented-out instructions are not statements about other PRs.
_NOISE = LazyPattern(r"```.*?(?:```|$)|<!--.*?(?:-->|$)", re.DOTALL)


@cache
def _reference_patterns() -> tuple[list[tuple[str, re.Pattern[str]]], re.Pattern[str], re.Pattern[str]]:
    """The cued patterns by kind, any reference, and where any cue starts (a zero-width match there).

    Compiled on first use, as most processes never read one.
    """
    cues = [(kind, cue) for kind in KINDS[:-1] for cue in _CUE[kind]]
    cued = [(kind, re.compile(cue + _REF, re.IGNORECASE)) for kind, cue in cues]
    cue_starts = re.compile("(?=" + "|".join(cue for _, cue in cues) + ")", re.IGNORECASE)
    return cued, re.compile(_REF, re.IGNORECASE), cue_starts


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> Iterator[re.Match[str]]:
    """pattern.finditer(text), for a pattern that can only match at `starts` (ascending): tried there alone.

    Searching tries a pattern at every position of the text; a cued reference
    starts with its cue, so the positions where no cue starts can be passed over.
    """
    end = 0
    for start in starts:
        if start >= end:
            match = pattern.match(text, start)
            if match:
                yield match
                end = match.end()


@dataclass(frozen=True)
class Relation:
    source: int
    target: int
    kind: str


@dataclass(frozen=True)
class Link:
    """Another PR seen from one PR: `other` relates to it as `kind`, `outgoing` when this PR states it."""

    number: int
    other: int
    kind: str
    outgoing: bool

    def sentence(self) -> str:
        """How an answer states the link, with PRs as [#N]."""
        source, target = (self.number, self.other) if self.outgoing else (self.other, self.number)
        verb = {"reverts": "reverts", "fixes": "fixes a problem from", "follows": "follows up on", "mentions": "mentions"}
        return f"[#{source}] {verb[self.kind]} [#{target}]"


def _texts(pr: PullRequest) -> list[str]:
    summary = list(pr.summary.as_dict().values()) if pr.summary else []
    return [pr.title, pr.body or "", *summary]


def revert_title(title: str) -> tuple[str, int | None] | None:
    """For a `Revert "..."` title: the reverted PR's title, and its number when the title carries it."""
    match = _REVERT_TITLE.match(title[:MAX_TITLE_CHARS])
    if not match:
        return None
    number = match["number"] or match["outside"]
    return match["title"].strip(), int(number) if number else None


def extract_relations(pr: PullRequest) -> list[Relation]:
    """What `pr` says about other PRs, one relation per other PR, strongest kind first."""
    return _from_texts(pr.repo, pr.number, pr.title, _texts(pr))


def _from_texts(repo: str, number: int, title: str, texts: list[str]) -> list[Relation]:
    found = _Found(repo, number)
    reverted = revert_title(title)
    if reverted and reverted[1] is not None:
        found.note(reverted[1], "reverts")
    # What a fix or a reland says of the PR behind it: "Since #12 added X, …" in a fix names what broke; "…, which
    # was reverted in #34" in a reland names the revert whose change it brings back.
    texts = [(text or "")[:MAX_TEXT_CHARS] for text in texts]
    relands = any(RELAND_WORD.search(text) for text in [title, *texts])
    cued = [(pattern, kind) for pattern, kind, applies in (
        (_FIX_SOURCE, "fixes", _FIX_TITLE.search(title)), (_RELAND_OF, "follows", relands)) if applies]
    for text in texts:
        for match, kind in _references(text):
            found.note_reference(match, kind)
    # "…the check added in #12 only ran…" beside "Fixes a regression from #34": the fix names what broke it outright.
    named_fix = any(_NAMES_CULPRIT.search(text) for text in texts)
    for text in texts:
        for pattern, kind in cued:
            if kind == "fixes" and named_fix:
                continue
            for match in pattern.finditer(text):
                found.note_reference(match, kind)
    return [Relation(number, target, kind) for target, kind in found.kinds.items()]


# A fix's title, and the words in its text that name the PR that brought the bug: "since #12", "added in #12".
_FIX_TITLE = LazyPattern(r"\bbug\s?fix\b|\bfix(?:es|ed)?\b|\bregression\b", re.IGNORECASE)
_FIX_SOURCE = LazyPattern(rf"\b(?:since|(?:added|introduced|changed)\s{{1,3}}(?:in|by))\s{{1,3}}{_REF}", re.IGNORECASE)
# How a fix names what broke: "a regression from #34", "broken by #34", "fix a crash introduced in #34".
_NAMES_CULPRIT = LazyPattern("(?:" + "|".join(_CUE["fixes"][:3]) + ")" + _REF, re.IGNORECASE)
# A reland, and how it names the revert of what it brings back: "which was reverted in #34".
RELAND_WORD = LazyPattern(r"\bre-?land(?:s|ed|ing)?\b", re.IGNORECASE)
_RELAND_OF = LazyPattern(rf"\breverted\s{{1,3}}(?:in|by)\s{{1,3}}{_REF}", re.IGNORECASE)


class _Found:
    """The other PRs one PR names, each with the strongest kind of link it states."""

    def __init__(self, repo: str, number: int) -> None:
        self.repo, self.number = repo, number
        self.kinds: dict[int, str] = {}

    def note(self, target: int, kind: str) -> None:
        if target != self.number and (target not in self.kinds or KINDS.index(kind) < KINDS.index(self.kinds[target])):
            self.kinds[target] = kind

    def note_reference(self, match: re.Match[str], kind: str) -> None:
        other_repo = match["repo"] or match["link"]
        if other_repo is None or other_repo.lower() == self.repo.lower():
            self.note(int(match["number"]), kind)


def _references(text: str) -> Iterator[tuple[re.Match[str], str]]:
    """Each reference to a PR in `text`, with the kind of link its cue states ("mentions" where none does)."""
    if not _MAYBE_REF.search(text.casefold()):
        return  # most texts name no PR; skip the cue patterns
    text = _NOISE.sub(" ", text)
    cued, any_ref, cue_starts = _reference_patterns()
    starts = [start.start() for start in cue_starts.finditer(text)]
    for kind, pattern in cued:
        for match in _matches_at(pattern, text, starts):
            yield match, kind
    for match in any_ref.finditer(text):
        yield match, "mentions"


def record_relations(db: Database, prs: Iterable[PullRequest]) -> None:
    """Replace what each of `prs` states about other PRs; call inside the transaction that saves them."""
    by_repo: dict[str, list[tuple[int, str, list[str]]]] = {}
    for pr in prs:
        by_repo.setdefault(pr.repo, []).append((pr.number, pr.title, _texts(pr)))
    for repo, stated in by_repo.items():
        _record(db, repo, stated)


def backfill_relations(db: Database) -> None:
    """Record the relations of every stored PR, straight from the columns (no model classes)."""
    by_repo: dict[str, list[tuple[int, str, list[str]]]] = {}
    rows = db.execute("select repo, number, title, body, what_changed, impact, risks, insights from prs")
    for repo, number, title, *texts in rows.fetchall():
        by_repo.setdefault(repo, []).append((number, title, [title, *texts]))
    for repo, stated in by_repo.items():
        _record(db, repo, stated)


def _record(db: Database, repo: str, stated: list[tuple[int, str, list[str]]]) -> None:
    """Relations of (number, title, texts) PRs of one repository, in a few statements whatever their count."""
    relations: list[Relation] = []
    for number, title, texts in stated:
        relations.extend(_from_texts(repo, number, title, texts))
        reverted = revert_title(title)
        if reverted and reverted[1] in (None, number):
            # A revert titled without the number (or with its own): find the PR by its title.
            relations.extend(
                Relation(number, row[0], "reverts")
                for row in db.execute(
                    "select number from prs where repo = ? and title = ? and number != ?", [repo, reverted[0], number]
                )
            )
    numbers = [number for number, _, _ in stated]
    db.execute(
        "delete from pr_relations where repo = ? and source in (select value from json_each(?))", [repo, json.dumps(numbers)]
    )
    # Reverts saved before the PRs they revert (reports imported out of order).
    reverted_by_title = {f'Revert "{title}"': number for number, title, _ in stated}
    relations.extend(
        Relation(source, reverted_by_title[title], "reverts")
        for source, title in db.execute(
            "select number, title from prs where repo = ? and title in (select value from json_each(?))",
            [repo, json.dumps(list(reverted_by_title))],
        )
        if source != reverted_by_title[title]
    )
    db.conn.executemany(
        "insert or replace into pr_relations (repo, source, target, kind) values (?, ?, ?, ?)",
        [(repo, rel.source, rel.target, rel.kind) for rel in relations],
    )


def related(db: Database, repo: str, number: int) -> list[Link]:
    """Every PR linked to `number` in either direction, strongest kind first, then newest number."""
    rows = db.execute(
        """
        select target, kind, 1 from pr_relations where repo = ? and source = ?
        union all
        select source, kind, 0 from pr_relations where repo = ? and target = ?
        """,
        [repo, number, repo, number],
    ).fetchall()
    links: dict[int, Link] = {}
    for other, kind, outgoing in sorted(rows, key=lambda row: (KINDS.index(row[1]), -row[0])):
        links.setdefault(other, Link(number, other, kind, bool(outgoing)))
    return list(links.values())


def stated(
    db: Database, repo: str, kind: str, start: datetime | None = None, end: datetime | None = None
) -> list[tuple[int, int | None]]:
    """(PR, the PR it names) for every PR merged in [start, end) that states `kind`, newest merge first.

    A revert counts even when the PR it reverts is unknown (named None): its
    title says what it is. A regression fix counts only when the PR it fixes
    is in the store, since "Fixes #N" names issues far more often than PRs.
    """
    bounds, args = ["p.repo = ?"], [repo]
    if start is not None:
        bounds.append("p.merged_at >= ?")
        args.append(to_utc_text(start))
    if end is not None:
        bounds.append("p.merged_at < ?")
        args.append(to_utc_text(end))
    where = " and ".join(bounds)
    stored = "exists (select 1 from prs t where t.repo = r.repo and t.number = r.target)" if kind == "fixes" else "1"
    unnamed = (
        f" union select p.number, null, p.merged_at from prs p where {where} and p.title like 'revert%'"
        " and not exists (select 1 from pr_relations r where r.repo = p.repo and r.source = p.number and r.kind = 'reverts')"
    ) if kind == "reverts" else ""
    rows = db.execute(
        "select r.source, r.target, p.merged_at from pr_relations r join prs p on p.repo = r.repo and p.number = r.source "
        f"where {where} and r.kind = ? and {stored}{unnamed} order by 3 desc, 1 desc, 2 desc",
        [*args, kind, *(args if unnamed else [])],
    )
    return [(source, target) for source, target, _ in rows]
