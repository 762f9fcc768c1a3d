"""What the question reader may ask the store: which words are logins, which numbers are PRs, when any merged."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlite_utils import Database

from store.migrations import FTS_COLUMNS
from store.retrieval.finding.conditions import FTS_JOIN, time_bounds
from store.retrieval.fts import quoted
from store.text.prose import atoms

# A first name shorter than this ("al", "jo") is too often a word.
_FIRST_NAME_MIN = 3
# A first name run into the rest of a login ("AndreasKaratzas") is at least this long.
_CAMEL_NAME_MIN = 5
# Letters a login may put between a first initial and the last name: a middle initial, a dash.
_INITIALS = 2
# How GitHub names an App's account: "dependabot[bot]".
_APP = "[bot]"
_LOGIN_COLUMNS = ("author", "merged_by")
# The index's columns a PR says things in; the login itself is indexed too, as author.
_TEXT_COLUMNS = " ".join(column for column in FTS_COLUMNS if column != "author")


class StoreLookup:
    """Tells the question parser which words are logins, which numbers are PRs of `repo` and when any merged."""

    def __init__(self, db: Database, repo: str) -> None:
        self.db = db
        self.repo = repo

    def login(self, name: str) -> str | None:
        """The login `name` is, as stored; a GitHub App's without its "[bot]" ("dependabot" is dependabot[bot])."""
        row = self.db.execute(
            """
            select author from prs where repo = ? and author collate nocase in (?, ?)
            union all
            select merged_by from prs where repo = ? and merged_by collate nocase in (?, ?)
            limit 1
            """,
            [self.repo, name, f"{name}{_APP}", self.repo, name, f"{name}{_APP}"],
        ).fetchone()
        return row[0] if row else self._by_first_name(name)

    def full_name(self, first: str, last: str) -> str | None:
        """"andreas karatzas" for AndreasKaratzas, the names run together; "nick hill" for njhill, the one login
        that is the first name's initial, at most _INITIALS more letters and the last name, when no PR says either."""
        login = self.login(first + last)
        if login or len(last) < _FIRST_NAME_MIN or self.says(first) or self.says(last):
            return login
        initial = first[0]
        logins = self._logins(
            (f"select distinct {column} from prs where repo = ? and {column} >= ? collate nocase "
             f"and {column} < ? collate nocase and {column} like ? and length({column}) <= ?",
             [self.repo, initial, chr(ord(initial) + 1), f"%{last}", len(last) + 1 + _INITIALS])
            for column in _LOGIN_COLUMNS
        )
        return logins.pop() if len(logins) == 1 else None

    def _by_first_name(self, name: str) -> str | None:
        """"evelyn" for evelyn-zhou, "andreas" for AndreasKaratzas: the one login that starts with the word and then
        a new part (a dash or an underscore; for a longer name, a capital or a digit), when no PR says the word."""
        if len(name) < _FIRST_NAME_MIN or not name.isalpha():
            return None
        # "{" follows "z": the range holds every login that starts with the name. Most words start none.
        logins = self._ends_between(name, f"{name}{{")
        if len(logins) > 1:
            # Several do ("raj-v", "rajeshwar"): those that start with the name and a dash, or an underscore.
            logins = self._ends_between(f"{name}-", f"{name}.") or self._ends_between(f"{name}_", f"{name}`")
        if len(logins) != 1:
            return None
        login = logins.pop()
        after = login[len(name) : len(name) + 1]
        # "rajesh" is no "raj", and a short word ("big") is a name only before a dash.
        # A longer name may also run into a capital, a digit, or one last initial ("russell" for russellb).
        run_in = after.isupper() or after.isdigit() or len(login) == len(name) + 1
        new_part = after in ("-", "_") or (len(name) >= _CAMEL_NAME_MIN and run_in)
        return login if new_part and not self.says(name) else None

    def _ends_between(self, low: str, high: str) -> set[str]:
        """The first and the last login in [low, high), for authors and mergers: four seeks of an index at any size."""
        return self._logins(
            (f"select {column} from prs where repo = ? and {column} >= ? collate nocase and {column} < ? collate nocase "
             f"order by {column} collate nocase {order} limit 1",
             [self.repo, low, high])
            for column in _LOGIN_COLUMNS
            for order in ("asc", "desc")
        )

    def _logins(self, queries: Iterable[tuple[str, list[object]]]) -> set[str]:
        """The logins the queries find, each once whatever its case."""
        found = {row[0].lower(): row[0] for sql, args in queries for row in self.db.execute(sql, args)}
        return set(found.values())

    def says(self, word: str) -> bool:
        """Whether a PR of any repository says the word in its text."""
        return self.db.execute("select 1 from prs_fts where prs_fts match ? limit 1", [f"{{{_TEXT_COLUMNS}}} : {quoted(word)}"]).fetchone() is not None

    def is_pr(self, number: int) -> bool:
        return self.db.execute(
            "select 1 from prs where repo = ? and number = ?", [self.repo, number]
        ).fetchone() is not None

    def merged_between(self, start: datetime, end: datetime) -> bool:
        bounds, args = time_bounds(self.repo, start, end)
        return self.db.execute(f"select 1 from prs where {bounds} limit 1", args).fetchone() is not None

    def is_path(self, fragment: str) -> bool:
        """Whether a changed file of the repository holds `fragment`: the index finds its words, the files confirm."""
        words = " ".join(atoms(fragment))
        row = self.db.execute(
            f"select 1 from {FTS_JOIN} where prs_fts match ? and prs.repo = ? "
            "and exists (select 1 from json_each(prs.files) where instr(lower(value), ?) > 0) limit 1",
            [f"{{files}} : {quoted(words)}", self.repo, fragment],
        ).fetchone()
        return row is not None
