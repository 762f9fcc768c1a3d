"""What ties each found PR to a question: which of its words a PR says, and where.

Ranking says which PRs come first; choosing which of them answer needs to know
why each one matched. A PR that names the asked topic in its title is about it;
one that mentions it once among its risks is not. Matching is done by SQLite's
own porter tokenizer, over a small table of just the candidates, so it agrees
with search and costs the same in a store of any size.
"""
from __future__ import annotations

import math

from sqlite_utils import Database

from store.days import from_utc_text
from store.retrieval.fts import any_of, store_size
from store.retrieval.reading.query import Concept
from store.tables.prs import first_id
from store.text.patterns import LazyPattern
from store.text.prose import lead_and_rest

# How much a match in each column says that a PR is about the words. The title and the first
# sentence of what changed ("lead") say what a PR is; the rest of what changed often names
# neighbours in passing, and risks and insights speculate about them.
FIELD_WEIGHT = {
    "title": 1.0,
    "lead": 0.85,
    "what_changed": 0.6,
    "files": 0.55,
    "areas": 0.6,
    "impact": 0.45,
    "risks": 0.15,
    "insights": 0.15,
}
COLUMNS = tuple(FIELD_WEIGHT)
# A question about what could go wrong is answered by what PRs say among their risks: a PR that
# fixes a slowdown names it in its title, one that risks a slowdown names it among its risks.
RISK_WEIGHT = {**FIELD_WEIGHT, "risks": 1.0, "insights": 0.6, "title": 0.3, "lead": 0.3, "what_changed": 0.3, "impact": 0.3}
# A narrower term ("fp8" for quantization, "memory" for memory use) says a little less than the word
# asked or a synonym of it, but no less than choose.NEAR_BEST: among its risks, a PR that says "250 MB
# of GPU memory" answers "could raise memory use?" beside one that says "memory use". A broader one
# ("quantization" for bitsandbytes) says much less: below the least an answer must say
# (choose.MIN_COVERAGE), so a PR only in the broader topic is context, never the answer alone.
RELATED_FACTOR = 0.8
WIDER_FACTOR = 0.25
# Rarity is read among at most this many of the newest PRs: about seven weeks of vLLM.
RARITY_SAMPLE = 2_000


def gather(
    db: Database, ids: list[int], concepts: list[Concept], weights: dict[str, float] = FIELD_WEIGHT
) -> dict[int, list[float]]:
    """For each PR id, how strongly it says each concept: the best matching column's weight, 0 when none."""
    found: dict[int, list[float]] = {pr_id: [] for pr_id in ids}
    if not ids or not concepts:
        return found
    _load_candidates(db, ids)
    for concept in concepts:
        phrases = concept.phrases
        narrower = tuple(p for p in phrases.all if p not in phrases.same and p not in phrases.wider)
        matches = [
            (_fields(db, group) if group else {}, factor)
            for group, factor in ((phrases.same, 1.0), (narrower, RELATED_FACTOR), (phrases.wider, WIDER_FACTOR))
        ]
        for pr_id, strengths in found.items():
            strengths.append(
                max((weights[column] * factor for columns, factor in matches for column in columns.get(pr_id, ())), default=0.0)
            )
    return found


def _load_candidates(db: Database, ids: list[int]) -> None:
    """The candidates, copied into a connection-private FTS table (never the store's own index)."""
    columns = ", ".join(COLUMNS)
    db.execute(f"create virtual table if not exists temp.answer_candidates using fts5({columns}, tokenize='porter')")
    placeholders = ", ".join("?" for _ in ids)
    rows = db.execute(
        f"select id, title, what_changed, files, areas, impact, risks, insights from prs where id in ({placeholders})", ids
    ).fetchall()
    # Committed at once: an open transaction would pin this connection's view of the store.
    with db.atomic():
        db.execute("delete from temp.answer_candidates")
        db.conn.executemany(
            f"insert into temp.answer_candidates (rowid, {columns}) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(pr_id, title, *lead_and_rest(what or ""), *rest) for pr_id, title, what, *rest in rows],
        )


def _fields(db: Database, phrases: tuple[str, ...]) -> dict[int, list[str]]:
    """Per candidate matching any of `phrases`, the columns that say one of them."""
    marked = ", ".join(f"highlight(answer_candidates, {i}, char(1), char(2))" for i in range(len(COLUMNS)))
    rows = db.execute(f"select rowid, {marked} from temp.answer_candidates where answer_candidates match ?", [any_of(phrases)])
    components = {word for phrase in phrases for word in phrase.split() if _COMPONENT.search(word)}
    # Porter stems "mps" to "mp", which an "lmcache_mp_connector.py" says: a short word is said only as itself.
    short = {word[:-1] for phrase in phrases for word in phrase.split() if len(word) <= 3 and word.endswith("s")}
    found = {}
    for pr_id, *texts in rows:
        columns = [column for column, text in zip(COLUMNS, texts) if text and _says(text, components, short)]
        if columns:
            found[pr_id] = columns
    return found


# Porter stems "tokenizer" to "token": a question about a component (an -izer) is not about what it handles.
_COMPONENT = LazyPattern(r"i[sz]ers?$")
_MARKED = LazyPattern("\x01([^\x02]{0,200})\x02")


def _says(text: str, components: set[str], short: set[str]) -> bool:
    """Whether a marked match in `text` says the phrase: "tokens" does not say "tokenizer", nor "mp" "mps"."""
    if "\x01" not in text:
        return False
    if not components and not short:
        return True
    for span in _MARKED.findall(text):
        word = span.lower()
        if word in short:
            continue
        if not any(word.startswith(component[:4]) for component in components) or "izer" in word or "iser" in word:
            return True
    return False


def rarity(db: Database, repo: str, concepts: list[Concept]) -> list[float]:
    """How much each concept tells PRs apart, from 0 (in most PRs) to 1 (in very few): its idf among recent PRs.

    Counted since the newest RARITY_SAMPLE PRs of `repo` began: how rare a
    word is today shows in the last few months, and counting a common word's
    PRs in the whole store would cost more with every PR added. PRs of other
    repositories merged in that time count too, as they do in a smaller store.
    """
    size, since = _sample(db, repo)
    if not size:
        return [1.0 for _ in concepts]
    weights = []
    for concept in concepts:
        df = db.execute(
            f"select count(*) from prs_fts where prs_fts match ?{since}", [any_of(concept.phrases.same)]
        ).fetchone()[0]
        weights.append(_idf(df, size))
    return weights


def rarest(db: Database, repo: str) -> float:
    """The rarity of a word one PR says: the most a word can tell PRs apart in this store (1 in a store of 100 PRs or
    more; less in a smaller one, where every word is said by a larger share)."""
    size, _ = _sample(db, repo)
    return _idf(1, size) if size else 1.0


def _idf(df: int, size: int) -> float:
    # idf scaled to [0, 1]: a word in every PR says nothing, one in 1% of them or fewer says all it can.
    share = max(df, 1) / size
    return max(0.0, min(1.0, math.log(1 / share) / math.log(100)))


def _sample(db: Database, repo: str) -> tuple[int, str]:
    """How many PRs rarity is read among, and the condition on the index's row ids that keeps to them."""
    size = store_size(db)
    if size <= RARITY_SAMPLE:
        return size, ""
    row = db.execute(
        "select merged_at from prs where repo = ? order by merged_at desc limit 1 offset ?", [repo, RARITY_SAMPLE - 1]
    ).fetchone()
    if not row:
        return size, ""
    first = first_id(from_utc_text(row[0]))
    # Counted in the index's own table of document sizes, which holds a few bytes a PR: `prs` holds whole PRs,
    # and its merged_at is the second column of its index, read whole without ANALYZE's statistics.
    size = db.execute("select count(*) from prs_fts_docsize where id >= ?", [first]).fetchone()[0]
    return size, f" and rowid >= {first}"
