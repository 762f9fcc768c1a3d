"""People a question asks about, by login, role or name: "@x", "merged by x", "what did x write", "the bot"."""
from __future__ import annotations

import re
from collections.abc import Callable

from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.query import BOTS, Person, Role
from store.text.patterns import LazyPattern
from store.understanding import vocabulary
from store.understanding.vocabulary import cue

LOGIN = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}(?:\[bot\])?"
_AT_LOGIN = LazyPattern(rf"(?<![\w.@])@({LOGIN})", re.IGNORECASE)
_ROLE_LOGIN = LazyPattern(
    rf"\b(?P<role>merged\s+by|authored\s+by|written\s+by|opened\s+by|created\s+by|submitted\s+by|sent\s+by|by|from)\s+@?(?P<login>{LOGIN})(?:'s)?\b",
    re.IGNORECASE,
)
# "PRs by X" are the PRs X wrote; "merged by X" are those X merged.
_ROLES = {"merged": Role.MERGER, "by": Role.AUTHOR, "from": Role.AUTHOR}


# "merged by the bot", "the bot merged": what a bot merged.
_BOT_MERGED = cue("bot_merged")


def take_people(text: str, lookup: Lookup | None, people: list[Person]) -> str:
    """The people the question asks about, added to `people`, taken out of its text."""
    found = _People(lookup, people)
    text = _NAME_THEN_LOGIN.sub(found.in_role(Role.ANY, lambda m: " "), _BOT_MERGED.sub(found.bots, text))
    text = _WROTE_OR_MERGED.sub(found.in_role(Role.ANY, lambda m: " "), text)
    text = _WROTE.sub(found.in_role(Role.AUTHOR, lambda m: f"{m['aux'] or ''} {m['verb']}"), _AT_LOGIN.sub(found.at, text))
    text = _MERGED.sub(found.in_role(Role.MERGER, lambda m: f"{m['what']} merged"), text)
    return _ROLE_LOGIN.sub(found.by, _DID_MERGE.sub(found.in_role(Role.ANY, lambda m: " ", merges=True), text))


class _People:
    def __init__(self, lookup: Lookup | None, people: list[Person]) -> None:
        self.lookup, self.people = lookup, people

    def add(self, login: str, role: Role, merges: bool = False) -> None:
        if all(p.login.lower() != login.lower() for p in self.people):
            self.people.append(Person(login, role, merges))

    def known(self, login: str) -> str | None:
        return self.lookup.login(login) if self.lookup else None

    def at(self, m: re.Match[str]) -> str:
        known = self.known(m.group(1))
        if known is None and m.group(1).lower() in vocabulary.words("bot_names"):
            return " "  # "@prdigest what merged?" typed as text: the bot addressed, not a person asked about
        self.add(known or m.group(1), Role.ANY)
        return " "

    def by(self, m: re.Match[str]) -> str:
        known = self.known(m["login"])
        if known is None:
            return m[0]  # "caused by preemption": not a person, keep the words
        self.add(known, _ROLES.get(m["role"].split()[0].lower(), Role.AUTHOR))
        return " "

    def in_role(self, role: Role, kept: Callable[[re.Match[str]], str], merges: bool = False) -> Callable[[re.Match[str]], str]:
        """A login said in a role ("njhill wrote", "nick hill (njhill)"): the person in it, and what `kept` keeps."""

        def take(m: re.Match[str]) -> str:
            known = self.known(m["login"])
            if known is None:
                return m[0]
            self.add(known, role, merges)
            return kept(m)

        return take

    def bots(self, m: re.Match[str]) -> str:
        self.add(BOTS, Role.MERGER)  # what is left out ("not counting what the bot merged") was taken before
        return " "


# "nick hill (njhill)": a person's name, then their login; the name is no topic.
_NAME_THEN_LOGIN = LazyPattern(rf"\b[a-z]{{2,20}}(?:\s+[a-z]{{2,20}})?\s*\(\s*@?(?P<login>{LOGIN})\s*\)", re.IGNORECASE)


# "what did hmellor write or merge yesterday?": either.
_WROTE_OR_MERGED = LazyPattern(
    rf"\b(?:did|has|have)\s+@?(?P<login>{LOGIN})\s+(?:(?:write|author|open)\s+or\s+merge|merge\s+or\s+(?:write|author|open))\b",
    re.IGNORECASE,
)
# "what did mgoin author last month?", "anything njhill wrote?": the person wrote them.
_WROTE = LazyPattern(
    rf"\b(?:(?P<aux>did|has|have)\s+)?@?(?P<login>{LOGIN})\s+(?P<verb>author(?:ed)?|write|wrote|written|open(?:ed)?|submit(?:ted)?)\b",
    re.IGNORECASE,
)
# "what did mgoin merge yesterday?", "has njhill merged anything?": the person merged them, or landed their own.
_DID_MERGE = LazyPattern(rf"\b(?:did|has|have)\s+@?(?P<login>{LOGIN})\s+merged?\b", re.IGNORECASE)
# "prs njhill merged", "the ones mgoin merged": the person merged them.
_MERGED = LazyPattern(rf"\b(?P<what>prs|pull\s+requests|ones|changes|that|which)\s+@?(?P<login>{LOGIN})\s+merged\b", re.IGNORECASE)
