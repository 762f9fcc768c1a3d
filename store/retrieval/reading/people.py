"""People a question asks about, by login, role or name: "@x", "merged by x", "what did x write", "the bot"."""
from __future__ import annotations

import re
from collections.abc import Callable

from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.query import BOTS, Person, Role
from store.text.patterns import LazyPattern

LOGIN = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}(?:\[bot\])?"
# The bot's own names, as people address it in plain text.
_OWN_NAMES = frozenset({"prdigest", "bot"})
_AT_LOGIN = LazyPattern(rf"(?<![\w.@])@({LOGIN})", re.IGNORECASE)
_ROLE_LOGIN = LazyPattern(
    rf"\b(?P<role>merged\s+by|authored\s+by|written\s+by|opened\s+by|created\s+by|submitted\s+by|sent\s+by|by|from)\s+@?(?P<login>{LOGIN})(?:'s)?\b",
    re.IGNORECASE,
)
# "PRs by X" are the PRs X wrote; "merged by X" are those X merged.
_ROLES = {"merged": Role.MERGER, "by": Role.AUTHOR, "from": Role.AUTHOR}


_BOT_MERGED = LazyPattern(
    r"\bmerged\s+by\s+(?:the\s+)?(?:merge\s+)?bots?\b|\b(?:the\s+)?(?:merge\s+)?bots?\s+merged\b"
    r"|\bdid\s+the\s+(?:merge\s+)?bot\s+merge\b|\bbot[\s-]merge[sd]\b",
    re.IGNORECASE,
)


def take_people(text: str, lookup: Lookup | None, people: list[Person]) -> str:
    def add(login: str, role: Role) -> None:
        if all(p.login.lower() != login.lower() for p in people):
            people.append(Person(login, role))

    def at(m: re.Match[str]) -> str:
        known = lookup.login(m.group(1)) if lookup else None
        if known is None and m.group(1).lower() in _OWN_NAMES:
            return " "  # "@prdigest what merged?" typed as text: the bot addressed, not a person asked about
        add(known or m.group(1), Role.ANY)
        return " "

    def by(m: re.Match[str]) -> str:
        known = lookup.login(m["login"]) if lookup else None
        if known is None:
            return m[0]  # "caused by preemption": not a person, keep the words
        role = _ROLES.get(m["role"].split()[0].lower(), Role.AUTHOR)
        add(known, role)
        return " "

    def in_role(role: Role, kept: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
        """A login said in a role ("njhill wrote", "nick hill (njhill)"): the person in it, and what `kept` keeps."""

        def take(m: re.Match[str]) -> str:
            known = lookup.login(m["login"]) if lookup else None
            if known is None:
                return m[0]
            add(known, role)
            return kept(m)

        return take

    wrote = in_role(Role.AUTHOR, lambda m: f"{m['aux'] or ''} {m['verb']}")
    merged = in_role(Role.MERGER, lambda m: f"{m['what']} merged")

    def bots(m: re.Match[str]) -> str:
        add(BOTS, Role.MERGER)  # what is left out ("not counting what the bot merged") was taken before
        return " "

    named = in_role(Role.ANY, lambda m: " ")  # "nick hill (njhill)": the name goes with the login
    text = _NAME_THEN_LOGIN.sub(named, _BOT_MERGED.sub(bots, text))
    return _ROLE_LOGIN.sub(by, _MERGED.sub(merged, _WROTE.sub(wrote, _AT_LOGIN.sub(at, text))))


# "nick hill (njhill)": a person's name, then their login; the name is no topic.
_NAME_THEN_LOGIN = LazyPattern(rf"\b[a-z]{{2,20}}(?:\s+[a-z]{{2,20}})?\s*\(\s*@?(?P<login>{LOGIN})\s*\)", re.IGNORECASE)


# "what did mgoin author last month?", "anything njhill wrote?": the person wrote them.
_WROTE = LazyPattern(
    rf"\b(?:(?P<aux>did|has|have)\s+)?@?(?P<login>{LOGIN})\s+(?P<verb>author(?:ed)?|write|wrote|written|open(?:ed)?|submit(?:ted)?)\b",
    re.IGNORECASE,
)
# "prs njhill merged", "the ones mgoin merged": the person merged them.
_MERGED = LazyPattern(rf"\b(?P<what>prs|pull\s+requests|ones|changes|that|which)\s+@?(?P<login>{LOGIN})\s+merged\b", re.IGNORECASE)
