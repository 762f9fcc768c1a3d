"""FTS5 query text built from what people typed: every phrase quoted, so user words never reach FTS unquoted; and
the expressions for what a question asks (its areas, and its concepts as asked, with synonyms, or loosely)."""
from __future__ import annotations

from collections.abc import Iterable

from sqlite_utils import Database

from store.retrieval.reading.query import Query


def quoted(text: str) -> str:
    """A phrase as an FTS5 string."""
    return '"' + text.replace('"', '""') + '"'


def any_of(phrases: Iterable[str]) -> str:
    """Any of the phrases, as one FTS5 expression."""
    return "(" + " OR ".join(quoted(p) for p in dict.fromkeys(phrases)) + ")"


def store_size(db: Database) -> int:
    """How many PRs the FTS index holds, read from its "averages" record (row 1 of its data) instead of counted."""
    row = db.execute("select block from prs_fts_data where id = 1").fetchone()
    return _varint(row[0]) if row and row[0] else 0


def _varint(data: bytes) -> int:
    """The SQLite varint at the start of `data`: 7 bits a byte, high bit set on all but the last; a 9th byte is whole."""
    value = 0
    for position, byte in enumerate(data[:9]):
        if position == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


# ---------------------------------------------------------------- what a question asks, as FTS5 expressions


def area_expression(question: Query) -> str | None:
    """In one of the areas, or naming it in the title, what changed or impact (not in risks or insights)."""
    if not question.areas:
        return None
    names = area_names(question)
    return f"({{areas}} : {any_of(names)} OR {{title what_changed impact}} : {any_of(question.area_phrases or names)})"


def area_names(question: Query) -> list[str]:
    return [area_name(area) for area in question.areas]


def area_name(area: str) -> str:
    """An area as the index's areas column holds its words ("tool-calling" is "tool calling")."""
    return " ".join(area.split("-"))


def membership_expression(question: Query) -> str | None:
    """The FTS5 query for the PRs classified in the question's areas: in one area of each group named together."""
    if not question.areas:
        return None
    joined = " AND ".join(any_of([area_name(area) for area in group]) for group in question.areas_together())
    return f"{{areas}} : ({joined})"


def match_expression(question: Query) -> str | None:
    """The loose FTS5 query: any area or any word of the topic (an area is then required apart)."""
    words = [p for concept in question.concepts for p in concept.phrases.all]
    area = area_expression(question)
    if area and words:
        return f"{area} OR {any_of(words)}"
    return area or (any_of(words) if words else None)


def strict_expression(question: Query) -> str | None:
    """The strict FTS5 query: in the areas AND saying something for every concept."""
    parts = [any_of(concept.phrases.all) for concept in question.concepts]
    area = area_expression(question)
    return " AND ".join(([area] if area else []) + parts) or None


def exact_expression(question: Query) -> str | None:
    """Every concept, and any area, in the asker's words or what means the same (areas then required apart).

    Scored on these words alone, so a PR in core that says "scheduler" comes
    before one that only carries the [Core] tag.
    """
    parts = [any_of(concept.phrases.same) for concept in question.concepts]
    if question.areas and question.area_same:
        parts.insert(0, f"{{title what_changed impact}} : {any_of(question.area_same)}")
    return " AND ".join(parts) or None
