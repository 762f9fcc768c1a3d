"""A subscription's filter: which merged PRs it keeps, in the one grammar `subscribe` takes and prints back.

Terms:
- `AREA` / `-AREA`: PRs in (not in) an area;
- `author:LOGIN` / `-author:LOGIN`: PRs written (not written) by a GitHub login;
- `-bots`: no PRs written by bots (a login ending in `[bot]`, or one the operator lists);
- `label:NAME` / `-label:NAME`: PRs with (without) a GitHub label;
- `path:GLOB` / `-path:GLOB`: PRs that changed a file the glob matches (see store.subscription.globs);
  `-path:` leaves out a PR whose every changed file it matches, as GitHub Actions' `paths-ignore` does;
- `substantial`: no trivial PRs.

Terms of one kind are ORed, different kinds are ANDed, and a leaving-out term always wins:
`rocm nvidia author:alice -docs` keeps Alice's PRs in rocm or nvidia, unless they are in docs.

A Filter is parsed once from what a person typed, then kept and printed as its canonical text (kinds in
the order above, areas in the repository's order), which parses back to the same filter.
"""
from __future__ import annotations

import shlex
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from store.model import PullRequest
from store.subscription.globs import Glob, normalize_glob
from store.subscription.logins import is_login
from store.understanding.areas import area_names, resolve_area

AREA, AUTHOR, LABEL, PATH, BOTS, SUBSTANTIAL = "area", "author", "label", "path", "bots", "substantial"
KINDS = (AREA, AUTHOR, LABEL, PATH, BOTS, SUBSTANTIAL)  # the order terms print in
NAMED = (AUTHOR, LABEL, PATH)  # written KIND:VALUE
LEAVE_OUT = "-"
BOT_SUFFIX = "[bot]"  # GitHub Apps' accounts: dependabot[bot], github-actions[bot]
MAX_TERMS = 30
MAX_VALUE = 200
# Characters no value may hold: they would end the code span, the quoting or the line it is printed in.
_UNSAFE = set("`\"'\\") | {chr(n) for n in range(32)} | {"\x7f"}


class FilterError(ValueError):
    """A term that cannot be read; the message is one line naming it."""


@dataclass(frozen=True)
class Term:
    kind: str
    value: str = ""  # an area's canonical name, a login, a label, a normalized glob; empty for bots and substantial
    left_out: bool = False

    @property
    def text(self) -> str:
        sign = LEAVE_OUT if self.left_out else ""
        if self.kind == AREA:
            return sign + self.value
        if self.kind in (BOTS, SUBSTANTIAL):
            return sign + self.kind
        quoted = f'"{self.value}"' if any(char.isspace() for char in self.value) else self.value
        return f"{sign}{self.kind}:{quoted}"

    @property
    def same(self) -> tuple[str, str]:
        """What makes two terms one: logins and labels compare without case, as GitHub compares them."""
        return self.kind, self.value if self.kind in (AREA, PATH) else self.value.casefold()

    @cached_property
    def glob(self) -> Glob:
        return Glob(self.value)

    def matches(self, pr: PullRequest, bots: Collection[str]) -> bool:
        """Whether the PR has what the term names (ignoring whether it keeps or leaves out)."""
        if self.kind == AREA:
            return self.value in pr.areas
        if self.kind == AUTHOR:
            return pr.author.casefold() == self.value.casefold()
        if self.kind == LABEL:
            return self.value.casefold() in {label.casefold() for label in pr.labels}
        if self.kind == PATH:
            return any(self.glob.matches(path) for path in pr.files)
        if self.kind == BOTS:
            return is_bot(pr.author, bots)
        return pr.type == "substantial"


def is_bot(login: str, listed: Collection[str]) -> bool:
    """A login ending in [bot] (a GitHub App), or one the operator lists (lowercase) in PRDIGEST_BOTS."""
    folded = login.casefold()
    return folded.endswith(BOT_SUFFIX) or folded in listed


@dataclass(frozen=True)
class Filter:
    terms: tuple[Term, ...] = ()

    @property
    def text(self) -> str:
        """The canonical text: what `subscriptions` prints and `subscribe` reads back to the same filter."""
        return " ".join(term.text for term in self.terms)

    def __str__(self) -> str:
        return self.text

    @property
    def everything(self) -> bool:
        return not self.terms

    @property
    def areas(self) -> tuple[str, ...]:
        """The areas it keeps (none: every area)."""
        return tuple(term.value for term in self.terms if term.kind == AREA and not term.left_out)

    @property
    def only_areas(self) -> bool:
        """Whether it is nothing but areas asked for: a report says "in rocm, nvidia" rather than the rule."""
        return all(term.kind == AREA and not term.left_out for term in self.terms)

    def has(self, kind: str) -> bool:
        return any(term.kind == kind for term in self.terms)

    @cached_property
    def _groups(self) -> tuple[tuple[str, tuple[Term, ...], tuple[Term, ...]], ...]:
        groups = []
        for kind in KINDS:
            of_kind = [term for term in self.terms if term.kind == kind]
            if of_kind:
                groups.append((kind, tuple(t for t in of_kind if not t.left_out), tuple(t for t in of_kind if t.left_out)))
        return tuple(groups)

    def keeps(self, pr: PullRequest, bots: Collection[str] = frozenset()) -> bool:
        """Whether the PR passes: no leaving-out term takes it, and each kind asked for has a term it matches."""
        for kind, kept, left_out in self._groups:
            if left_out and _leaves_out(kind, left_out, pr, bots):
                return False
            if kept and not any(term.matches(pr, bots) for term in kept):
                return False
        return True

    def select(self, prs: Iterable[PullRequest], bots: Collection[str] = frozenset()) -> list[PullRequest]:
        """The PRs the filter keeps, in their order. Every report, alert and message a subscription sends
        is chosen here."""
        return [pr for pr in prs if self.keeps(pr, bots)]

    def with_areas(self, areas: Sequence[str], repo: str | None) -> Filter:
        """The filter keeping `areas` (none: every area) instead of the areas it keeps; its other terms stay,
        but an area now asked for is no longer left out."""
        chosen = set(areas)
        kept = [t for t in self.terms if t.kind != AREA or (t.left_out and t.value not in chosen)]
        return _canonical([*kept, *(Term(AREA, area) for area in chosen)], repo)

    def with_author(self, login: str) -> Filter:
        """The filter that also asks for PRs written by `login` (a personal subscription to one's own PRs)."""
        return Filter((*self.terms, Term(AUTHOR, login)))


EVERYTHING = Filter()


def split_terms(text: str) -> list[str]:
    """Words as a command gives them, a quoted value kept whole: `label:"needs rebase"`. Typographic
    quotes, which chat clients put in for straight ones, count as straight ones."""
    straight = text.translate(str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''"))
    try:
        return shlex.split(straight)
    except ValueError:
        raise FilterError("a quote is not closed: quote a value with spaces whole, like `label:\"needs rebase\"`") from None


def parse_filter(words: Sequence[str], repo: str | None, known: Sequence[str] = ()) -> Filter:
    """The filter `words` spell, its areas those of `repo`. FilterError names the first word that is not a
    term, with the closest term (or word of `known`, the command's own words) it may have meant."""
    if len(words) > MAX_TERMS:
        raise FilterError(f"a filter takes at most {MAX_TERMS} terms")
    terms = [_term(word, repo, known) for word in words]
    seen: dict[tuple[str, str], Term] = {}
    for term in terms:
        other = seen.setdefault(term.same, term)
        if other.left_out != term.left_out:
            raise FilterError(f"`{term.text.lstrip(LEAVE_OUT)}` is both asked for and left out; keep one of the two")
    return _canonical(terms, repo)


def load_filter(text: str) -> Filter:
    """A filter as the store keeps it: canonical text, read back as it was written."""
    if not text:
        return EVERYTHING
    return Filter(tuple(_read(word) for word in split_terms(text)))


def _canonical(terms: Iterable[Term], repo: str | None) -> Filter:
    order = area_names(repo)
    unique: dict[tuple[str, str, bool], Term] = {}
    for term in terms:  # the first of terms written twice, as it was written
        unique.setdefault((*term.same, term.left_out), term)

    def key(term: Term) -> tuple[int, bool, int, str]:
        position = order.index(term.value) if term.kind == AREA and term.value in order else len(order)
        return KINDS.index(term.kind), term.left_out, position, term.same[1]

    return Filter(tuple(sorted(unique.values(), key=key)))


def _leaves_out(kind: str, terms: tuple[Term, ...], pr: PullRequest, bots: Collection[str]) -> bool:
    if kind != PATH:
        return any(term.matches(pr, bots) for term in terms)
    # Left out only when every file is known to match: a PR listing fewer files than it changed may hold others.
    known = pr.files and (pr.changed_files is None or pr.changed_files <= len(pr.files))
    return bool(known) and all(any(term.glob.matches(path) for term in terms) for path in pr.files)


def _read(word: str) -> Term:
    """A stored term, trusted as written."""
    left_out = word.startswith(LEAVE_OUT)
    body = word[1:] if left_out else word
    kind, colon, value = body.partition(":")
    if colon and kind in NAMED:
        return Term(kind, value, left_out)
    if body in (BOTS, SUBSTANTIAL):
        return Term(body, "", left_out)
    return Term(AREA, body, left_out)


def _term(word: str, repo: str | None, known: Sequence[str]) -> Term:
    left_out = word.startswith(LEAVE_OUT) and len(word) > 1
    body = word[1:] if left_out else word
    kind, colon, value = body.partition(":")
    if colon and kind.lower() in NAMED:
        return Term(kind.lower(), _value(kind.lower(), value, word), left_out)
    if body.lower() == BOTS and left_out:
        return Term(BOTS, left_out=True)
    if body.lower() == SUBSTANTIAL and not left_out:
        return Term(SUBSTANTIAL)
    area = resolve_area(body, repo) if body else None
    if area is None:
        raise FilterError(_unknown(word, repo, known))
    return Term(AREA, area, left_out)


def _value(kind: str, value: str, word: str) -> str:
    value = value.strip()
    if kind == AUTHOR:
        value = value.removeprefix("@")
    elif kind == PATH:
        value = normalize_glob(value)
    example = {AUTHOR: "author:octocat", LABEL: 'label:"needs rebase"', PATH: "path:docs/**"}[kind]
    if not value:
        raise FilterError(f"`{word}` names no {kind}: write it like `{example}`")
    if len(value) > MAX_VALUE or _UNSAFE & set(value):
        raise FilterError(f"`{kind}:` takes at most {MAX_VALUE} characters, without quotes, backslashes or backticks")
    if kind == AUTHOR and not is_login(value):
        raise FilterError(f"`{value}` is not a GitHub login (letters, digits and hyphens): write it like `{example}`")
    return value


_SHAPES = "AREA, author:LOGIN, label:NAME and path:GLOB (each also with `-` before it, to leave out), `-bots` and `substantial`"


def _unknown(word: str, repo: str | None, known: Sequence[str]) -> str:
    """One line naming the word, with the closest term it may have meant."""
    close = closest_term(word, repo, known)
    if close:
        return f"`{word}` is not a filter term: did you mean `{close}`?"
    return f"`{word}` is not a filter term or an area: terms are {_SHAPES}"


def closest_term(word: str, repo: str | None, known: Sequence[str] = ()) -> str | None:
    sign = LEAVE_OUT if word.startswith(LEAVE_OUT) else ""
    body = word.lower()[len(sign):]
    kind, colon, value = body.partition(":")
    if colon:  # a mistyped kind: author, label or path
        near = _near(kind, NAMED)
        return f"{sign}{near}:{value}" if near else None
    candidates = [*area_names(repo), BOTS, SUBSTANTIAL, *known]
    near = _near(body, candidates)
    if near == BOTS:
        return LEAVE_OUT + BOTS
    if near == SUBSTANTIAL or near in known:
        return near
    return f"{sign}{near}" if near else None


def _near(word: str, candidates: Sequence[str]) -> str | None:
    import difflib  # here, as only a mistyped term needs it

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None
