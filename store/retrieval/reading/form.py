"""The shape of answer a question expects: yes or no, people, a number, a relation, a list, or a lookup.

Read from the question's own words, so the first line of an answer can answer
what was asked ("Yes: …", "ywang96 fixed it …", "27 PRs …") before the PRs.
The words are cues of the lexicon (store/understanding/vocabulary.toml); this
module says how they decide the shape.
"""
from __future__ import annotations

from store.retrieval.reading.query import Doubt, Intent, Query, Relation, Tally
from store.text.patterns import LazyPattern
from store.text.prose import typed_sentences
from store.understanding.vocabulary import cue

# Questions are short; only their start is read for the form, and every repeat is bounded.
_HEAD_CHARS = 200
# An aside in parentheses ("which person (not the bot) merged the most?") is no part of the question's shape.
_ASIDE = LazyPattern(r"\([^()]{0,60}\)")

SUPERLATIVE = cue("superlative")
# A title that says a PR fixes something (a doubt's "still broken?" is answered no by it).
FIX_WORDS = cue("fix_words")
# The relation a question asks about, and the words that say it (removed from its topic).
RELATION_WORDS = {relation: cue(f"asks_{relation}") for relation in Relation}
# Words that only restate the relation asked about: "were any regressions fixed" is not about fixes in general.
RELATION_TOPIC_WORDS = {relation: cue(f"restates_{relation}") for relation in Relation}

# The shape, in the order it is decided: how to, how many, who, yes or no, a list; else a lookup.
_HOWTO, _COUNT, _WHO, _YESNO, _LIST = cue("howto"), cue("count"), cue("who"), cue("yesno"), cue("list")
_YESNO_LATER, _YESNO_TAIL, _ASKS_WHAT = cue("yesno_later"), cue("yesno_tail"), cue("asks_what")
_FIXED_BY_NAMED, _FIXES_NAMED, _RELANDED = cue("fixed_by_named"), cue("fixes_named"), cue("relanded")
_ASKS_OTHER, _CULPRIT, _ASKS_FIX, _ASKS_CULPRIT = cue("asks_other"), cue("culprit"), cue("asks_fix"), cue("asks_culprit")
_PASSIVE, _ONE_PR, _REVERTS_NOUN, _ACTIVE_REVERT = cue("passive"), cue("one_pr"), cue("reverts_noun"), cue("active_revert")
_UNDONE, _KEPT, _PERSISTS, _PROBLEM, _NOW = cue("undone"), cue("kept"), cue("persists"), cue("problem"), cue("now")
_MOST, _WHICH_AREA, _ABOUT_PEOPLE = cue("most"), cue("which_area"), cue("about_people")
_MERGER, _AUTHORED, _SETTING, _WHO_ONE = cue("merger"), cue("authored"), cue("setting"), cue("who_one")


def read_form(text: str) -> Query:
    """The answer's shape for `text`, a question as typed (Slack markup already removed), as a Query of nothing else."""
    head = _SETTING.sub("", " ".join(_ASIDE.sub(" ", _asking(text or "")[:_HEAD_CHARS].lower()).split()))
    relation = _relation(head)
    kind = _intent(head)
    doubt = _doubt(head) if kind is Intent.YESNO else None
    implied = False
    if doubt is not None and doubt.of_a_revert:
        if relation not in (None, Relation.REVERTS):
            doubt = None  # "did the regression fix stick?" asks about the fix, answered as any yes/no
        implied = relation is None
        relation = relation or Relation.REVERTS  # whether a change stuck, or stands now, is whether something reverted it
    # "got reverted in april - did it come back?" asks for the reland: passive only of the relation asked.
    passive = relation is not None and any(RELATION_WORDS[relation].search(m[0]) for m in _PASSIVE.finditer(head))
    return Query(
        intent=kind, relation=relation, relation_implied=implied, asks_other=relation is not None and bool(_ASKS_OTHER.search(head)),
        culprit=relation is Relation.FIXES and _asks_culprit(head), passive=passive,
        doers=relation is Relation.REVERTS and not passive and bool(_REVERTS_NOUN.search(head) or _ACTIVE_REVERT.search(head)),
        # "how do I …?" is answered by the one PR that tells how.
        one=kind is Intent.HOWTO or (kind in (Intent.LIST, Intent.LOOKUP) and bool(_ONE_PR.search(head)))
        or (kind is Intent.WHO and bool(_WHO_ONE.search(head))),
        doubt=doubt, tally=_tally(head, kind),
    )


def _asking(text: str) -> str:
    """The question from its asking sentence on: "saw the env var got removed. can i still set X?" asks "can i …?".
    A question that asks first and tells after ("medusa updates? we have medusa heads") is read from its start."""
    sentences = typed_sentences(text)
    first_asking = next((i for i, part in enumerate(sentences) if part.rstrip().endswith("?")), 0)
    return " ".join(sentences[first_asking:])


def _relation(head: str) -> Relation | None:
    relation = next((kind for kind, words in RELATION_WORDS.items() if words.search(head)), None)
    if relation is None and (_FIXED_BY_NAMED.search(head) or _FIXES_NAMED.search(head)):
        return Relation.FIXES  # "which PR did #N fix?", "anything that fixes #N?"
    if relation is Relation.REVERTS and _RELANDED.search(head):
        return Relation.FOLLOWS  # "was the split-K revert ever undone?": the reland is asked for
    return relation


def _intent(head: str) -> Intent:
    if _HOWTO.search(head):
        return Intent.HOWTO
    if _COUNT.search(head) and not SUPERLATIVE.search(head):  # "the largest number of files" is no count
        return Intent.COUNT
    if _WHO.search(head):
        return Intent.WHO
    if _YESNO.search(head) or ((_YESNO_LATER.search(head) or _YESNO_TAIL.search(head)) and not _ASKS_WHAT.search(head)):
        return Intent.YESNO
    return Intent.LIST if _LIST.search(head) else Intent.LOOKUP


def _asks_culprit(head: str) -> bool:
    """"who broke …" asks for what caused a problem; "#N broke something, what fixed it?" for the fix alone, unless what
    broke it is asked too ("which PR broke X and what fixed it?")."""
    return bool(_CULPRIT.search(head)) and (not _ASKS_FIX.search(head) or bool(_ASKS_CULPRIT.search(head)))


def _doubt(head: str) -> Doubt | None:
    if _UNDONE.search(head):
        return Doubt.UNDONE
    if _KEPT.search(head):
        return Doubt.KEPT
    if _PERSISTS.search(head) and _PROBLEM.search(head):
        return Doubt.PERSISTS
    return Doubt.NOW if _NOW.search(head) else None


def _tally(head: str, kind: Intent) -> Tally | None:
    if not _MOST.search(head):
        return None
    if _WHICH_AREA.search(head):
        return Tally.AREA
    if kind is Intent.WHO or _ABOUT_PEOPLE.search(head):
        return Tally.MERGER if _MERGER.search(head) and not _AUTHORED.search(head) else Tally.AUTHOR
    return None
