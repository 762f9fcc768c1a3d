"""The shape of answer a question expects: yes or no, people, a number, a relation, a list, or a lookup.

Read from the question's own words, so the first line of an answer can answer
what was asked ("Yes: …", "ywang96 fixed it …", "27 PRs …") before the PRs.
"""
from __future__ import annotations

import re

from store.retrieval.reading.query import Doubt, Intent, Query, Relation, Tally
from store.text.patterns import LazyPattern

# Questions are short; only their start is read for the form, and every repeat is bounded.
_HEAD_CHARS = 200
_ASIDE = LazyPattern(r"\([^()]{0,60}\)")

# "the largest number of PRs" is how many, not how large.
_AMOUNT_OF = r"\s{1,3}(?:number|amount|share|count)\s{1,3}of\b"
# "the biggest PR by files changed", "the largest TTFT improvement": the one PR that is most of something.
SUPERLATIVE = LazyPattern(
    r"\b(?:the\s+)?(?:single\s+)?(?:biggest|largest|best|greatest|most\s+(?:important|impactful|significant|notable))\b"
    # "best-of-n sampling", "the largest number of PRs" (a tally), "the biggest issue with X" (no PR is the answer)
    rf"(?![-\w])(?!{_AMOUNT_OF})"
    r"(?!\s+(?:\w+\s+)?(?:issues?|problems?|risks?|concerns?|questions?|bottlenecks?|blockers?|complaints?|differences?)\b)"
    r"|\b(?:the\s+)?most(?=\s+(?:changed\s+)?files\b)"
)
_COUNT = LazyPattern(r"\b(?:how\s{1,3}many|number\s{1,3}of|count\s{1,3}(?:of|the))\b")
_WHO = LazyPattern(
    r"^(?:\W{0,3})(?:who|whose|whom|which\s{1,3}(?:person|people|humans?|author|authors|contributor|contributors|maintainer|maintainers))\b"
)
_YESNO = LazyPattern(
    r"^(?:\W{0,3})(?:so\s{1,3}|and\s{1,3}|hey\s{1,3})?"
    r"(?:did|does|do|was|were|is|are|has|have|had|can|could|will|would|should)\b"
)
# "the bench was busted, did anybody get it working again?": a yes/no after what it is about.
_YESNO_LATER = LazyPattern(
    r"(?:[,;:\u2014\u2013]|\s-)\s{0,3}(?:and\s{1,3}|so\s{1,3})?"
    r"(?:did|does|do|was|were|is|are|has|have|had|can|could|will)\s{1,3}(?:\w+\s{1,3}){0,11}\w+\W{0,3}$"
)
# "… was quietly ignoring them, fixed yet?", "any fix for X, resolved?": a yes/no in its last words.
_YESNO_TAIL = LazyPattern(r"^(?!.*\b(?:what|which|who)\b).*\b(?:fixed|addressed|resolved|sorted|solved|handled)(?:\s{1,3}(?:yet|now))?\s{0,3}\?\W{0,3}$")
_ASKS_WHAT = LazyPattern(r"^(?:\W{0,3})(?:what|which|who|whose|how|why|when|where|list|show|give|tell|find|summari[sz]e)\b")
# "how do I enable X?": answered with the sentence that tells how.
# Also after what it is about: "huge schemas get rejected after 30s, how do I raise that?".
_HOWTO = LazyPattern(
    r"(?:^|[,;:\u2014\u2013]|\s-)\W{0,3}how\s{1,3}(?:do|can|should|would|could)\s{1,3}(?:i|we|you|one|people)\b"
    r"|^(?:\W{0,3})how\s{1,3}to\b"
)
# "who merged the most", "which area was busiest", "top authors": a tally, not a list.
_MOST = LazyPattern(
    r"\b(?:the\s{1,3})?most\b|\bbusiest\b|\btop\s{1,3}(?:pr\s{1,3})?(?:authors?|mergers?|contributors?|committers?)\b"
    rf"|\b(?:largest|biggest|greatest|highest){_AMOUNT_OF}"
)
_WHICH_AREA = LazyPattern(r"^(?:\W{0,3})(?:which|what)\s{1,3}areas?\b")
_MERGER = LazyPattern(r"\b(?:who|which\s{1,3}(?:person|people|one|humans?))\s{1,3}(?:\w+\s{1,3})?merged\b|\bmergers?\b|\bmaintainers?\b")
# "who", "top authors", "which human maintainer": the most of something is counted by person.
_ABOUT_PEOPLE = LazyPattern(
    r"\bwho\b|\btop\s|\bwhich\s{1,3}(?:\w+\s{1,3})?(?:person|people|human|author|merger|login|maintainer|contributor)s?\b"
    r"|\bmost\s{1,3}(?:\w+\s{1,3})?(?:author|merger|contributor|committer)s?\b"  # "the most prolific author"
)
_AUTHORED = LazyPattern(r"\b(?:wrote|written|authored|opened|authors?)\b")
_LIST = LazyPattern(r"^(?:\W{0,3})(?:list|show|which|what\s{1,3}(?:prs|pull\s{1,3}requests|changes|fixes))\b")

_FIXES = r"\b(?:bug)?fix(?:es|ed|ing)?\b|\bresolve[sd]?\b"
# A title that says a PR fixes something (a doubt's "still broken?" is answered no by it).
FIX_WORDS = LazyPattern(_FIXES, re.IGNORECASE)
_REVERTS = r"\b(?:revert(?:s|ed|ing)?|reverts?|roll(?:ed|s)?\s{0,2}back|rollbacks?|undid|undo(?:es|ne)?)\b"
_REGRESSION = r"\b(?:regress(?:ion|ions|ed)?|broke|broken|breakage|breaks?|fallout)\b"
# "did it cause problems later?": what a change broke is a regression its fixes name.
_CAUSED_TROUBLE = r"\bcaus(?:e|ed|es|ing)\s{1,3}(?:\w+\s{1,3})?(?:problems?|issues?|bugs?|breakage|trouble)\b"
# A reland follows up on what was reverted: "what relanded #N?", "did it ever come back?".
_FOLLOWS = (
    r"\b(?:follow(?:ed|s|ing)?[\s-]{0,2}ups?|follow(?:ed|s|ing)?\s{1,3}up|followups?|re-?land(?:ed|s|ing)?|(?:build(?:s|ing)?|built)\s{1,3}on"
    r"|(?<!never\s)(?:brought|bring|brings|came|come|comes)\s{1,3}(?:it\s{1,3})?back"
    r"|(?:turned|switched|put|flipped)\s{1,3}back\s{1,3}on)\b"
)
# The relation a question asks about, and the words that say it (removed from its topic).
RELATION_WORDS = {
    Relation.REVERTS: LazyPattern(_REVERTS),
    Relation.FIXES: LazyPattern(rf"{_REGRESSION}|{_CAUSED_TROUBLE}"),
    Relation.FOLLOWS: LazyPattern(_FOLLOWS),
}


_FIXED_BY_NAMED = LazyPattern(r"\b(?:did|does|has)\s{1,3}(?:#|pr\s{0,2}#?)\d{1,7}\s{1,3}fix")
# "anything that fixes #N?", "a fix for 39416?", "what fixed the tests after #N": what repaired what #N broke.
_FIXES_NAMED = LazyPattern(
    r"\bfix(?:es|ed|ing)?\s{1,3}(?:\w+\s{1,3}){0,3}?(?:(?:#|pr\s{0,2}#?)\d{1,7}\b|\d{3,7}(?=\s{0,3}(?:[?.!,)]|$)))"
)
# What became of a revert: "undone", "relanded", "brought back".
_RELANDED = LazyPattern(rf"{_FOLLOWS}|\bundone\b")


# "what fixed #N", "which PR reverted #N": the question's subject is the other PR, not the one named.
_ASKS_OTHER = LazyPattern(
    r"^\W{0,3}(?:what|which|who)\b(?:\s{1,3}(?:pr|prs|pull\s{1,3}request|change|commit|one))?\s{1,3}(?!was\b|were\b|is\b|got\b|get\b|has\b|did\b)\w"
    # "what did #N revert?", "which PR is #N following up on?": #N does it; the other side is asked for.
    r"|^\W{0,3}(?:what|which)(?:\s{1,3}(?:pr|change|commit|one))?\s{1,3}(?:did|does|is|was)\s{1,3}(?:#|pr\s{0,2}#?)\d"
    # "was #N reverted?", "did #N cause any follow-up?", "was any of that reverted?": what became of them is the other side.
    r"|^\W{0,3}(?:did|does|has|was|is)\s{1,3}(?:(?:#|pr\s{0,2}#?)\d|\d{3,7}\b)"
    r"|^\W{0,3}(?:did|does|has|have|was|were|is|are)\s{1,3}(?:it|that|those|they|these|any\s{1,3}of\s{1,3}(?:that|those|them|these))\b"
    # "did anything follow up on #N?", "anything building on #N?": the PRs that did.
    r"|^\W{0,3}(?:(?:did|has|is|was)\s{1,3}(?:there\s{1,3})?)?(?:anything|anyone|someone|something|any\s{1,3}prs?)\b"
    # "is there a follow-up to #N?"
    r"|^\W{0,3}(?:is|are|was|were)\s{1,3}there\s{1,3}(?:a|an|any)\b[^#]{0,40}(?:#|\bpr\s{0,2}#?)\d"
)
# "who broke …", "what caused …": the question is about the side that introduced a problem.
_CULPRIT = LazyPattern(r"\b(?:broke|break|breaks|caused|introduced)\b|\b(?:what|which)\s{1,3}regressions?\b")
# "#N broke something, what fixed it?": the fix is asked for, and only the fix unless what broke it is asked too
# ("which PR broke X and what fixed it?").
_ASKS_FIX = LazyPattern(r"\b(?:what|which|who|anything|any)\b(?:\s{1,3}[\w-]+){0,3}?\s{1,3}(?:fix|fixed|fixes|fixing)\b")
_ASKS_CULPRIT = LazyPattern(r"\b(?:what|which|who)\s{1,3}(?:(?:pr|change|commit)\s{1,3})?(?:broke|caused|introduced)\b")


# Words that only restate the relation asked about: "were any regressions fixed" is not about fixes in general.
RELATION_TOPIC_WORDS = {
    Relation.REVERTS: LazyPattern(rf"{_REVERTS}|\b(?:stick|stuck|survived?)\b"),
    Relation.FIXES: LazyPattern(rf"{_REGRESSION}|{_FIXES}|{_CAUSED_TROUBLE}|\b(?:caus\w*|problems?|issues?|bugs?)\b"),
    Relation.FOLLOWS: LazyPattern(rf"{_FOLLOWS}|\b(?:come|came|comes|bring|brings|brought|build|builds|building|built)\b"),
}


def read_form(text: str) -> Query:
    """The answer's shape for `text`, a question as typed (Slack markup already removed), as a Query of nothing else."""
    # An aside in parentheses ("which person (not the bot) merged the most?") is no part of the question's shape.
    head = " ".join(_ASIDE.sub(" ", (text or "")[:_HEAD_CHARS].lower()).split())
    relation = next((kind for kind, words in RELATION_WORDS.items() if words.search(head)), None)
    if relation is None and (_FIXED_BY_NAMED.search(head) or _FIXES_NAMED.search(head)):
        relation = Relation.FIXES  # "which PR did #N fix?", "anything that fixes #N?"
    if relation is Relation.REVERTS and _RELANDED.search(head):
        relation = Relation.FOLLOWS  # "was the split-K revert ever undone?": the reland is asked for
    if _HOWTO.search(head):
        kind = Intent.HOWTO
    elif _COUNT.search(head) and not SUPERLATIVE.search(head):  # "the largest number of files" is no count
        kind = Intent.COUNT
    elif _WHO.search(head):
        kind = Intent.WHO
    elif _YESNO.search(head) or ((_YESNO_LATER.search(head) or _YESNO_TAIL.search(head)) and not _ASKS_WHAT.search(head)):
        kind = Intent.YESNO
    elif _LIST.search(head):
        kind = Intent.LIST
    else:
        kind = Intent.LOOKUP
    doubt = _doubt(head) if kind is Intent.YESNO else None
    if doubt is not None and doubt.of_a_revert:
        if relation not in (None, Relation.REVERTS):
            doubt = None  # "did the regression fix stick?" asks about the fix, answered as any yes/no
        relation = relation or Relation.REVERTS  # whether a change stuck, or stands now, is whether something reverted it
    asks_other = relation is not None and bool(_ASKS_OTHER.search(head))
    culprit = relation is Relation.FIXES and bool(_CULPRIT.search(head)) and (not _ASKS_FIX.search(head) or bool(_ASKS_CULPRIT.search(head)))
    # "got reverted in april - did it come back?" asks for the reland: passive only of the relation asked.
    passive = relation is not None and any(RELATION_WORDS[relation].search(m[0]) for m in _PASSIVE.finditer(head))
    # "how do I …?" is answered by the one PR that tells how.
    one = kind is Intent.HOWTO or (kind in (Intent.LIST, Intent.LOOKUP) and bool(_ONE_PR.search(head)))
    doers = relation is Relation.REVERTS and not passive and bool(_REVERTS_NOUN.search(head) or _ACTIVE_REVERT.search(head))
    return Query(
        intent=kind, relation=relation, asks_other=asks_other, culprit=culprit, passive=passive, doers=doers, one=one,
        doubt=doubt, tally=_tally(head, kind),
    )


_ONE_PR = LazyPattern(
    r"^\W{0,3}(?:which|what)\s{1,3}(?:single\s{1,3})?(?:pr|pull\s{1,3}request|change|commit)\b(?!s)"
    r"|^\W{0,3}where\s{1,3}(?:did|does|do)\b.{1,80}\b(?:come|came)\s{1,3}from\b"
    r"|\b(?:what|which)\s{1,3}(?:was|is)\s{1,3}the\s{1,3}(?:pr|change|commit)\b"
    r"|^\W{0,3}(?:the\s{1,3})?(?:pr|one|change)\s{1,3}(?:that|where|which|about)\b"
)


_REVERTS_NOUN = LazyPattern(r"\breverts\b(?!\s{1,3}#?\d)")
_ACTIVE_REVERT = LazyPattern(r"\b(?:prs?|pull\s{1,3}requests?|changes?|commits?)\s{1,3}(?:that\s{1,3})?(?:reverted|undid|rolled\s{1,3}back)\b")
_PASSIVE = LazyPattern(
    r"\b(?:was|were|got|get|gets|been|being|is|are)\s{1,3}(?:\w+\s{1,3})?"
    r"(?:reverted|rolled\s{1,3}back|undone|fixed|followed\s{1,3}up|relanded|brought\s{1,3}back)\b"
)


# "does X still crash?", "is it still broken?": a fix answers no. "or is it still hardcoded" asks something else,
# and "is ROCm still supported?" names no problem.
_PERSISTS = LazyPattern(r"(?<!\bor\s)(?<!\bor\sis\sit\s)\bstill\b|\banymore\b")
_PROBLEM = LazyPattern(
    r"\b(?:crash\w*|break\w*|broken|fail\w*|errors?|hang\w*|hung|stuck|oom|slow\w*|bugs?|buggy|leak\w*|blow\w*"
    r"|nuke\w*|wrong|garbage|segfault\w*|issues?|problems?|dies|dying|flak\w*|regress\w*)\b"
)
# "is async scheduling on by default now?": asks how things stand, so a revert of what answers says no.
# "is the image cache still in main?", "is the FA3 path back?": whether it stands, too.
_NOW = LazyPattern(
    r"^\W{0,3}(?:is|are|does|do)\b.{0,150}\b(?:now|currently|these\s{1,3}days|at\s{1,3}the\s{1,3}moment"
    r"|still|back)\b"
)
# "is the image cache still reverted?": a reland answers no, the revert alone yes.
_UNDONE = LazyPattern(r"\bstill\s{1,3}(?:\w+\s{1,3})?(?:reverted|rolled\s{1,3}back|backed\s{1,3}out|removed|gone)\b")
# "did the new default stick?": a revert answers no.
_KEPT = LazyPattern(r"\bstick\b(?!\s{1,3}(?:to|with)\b)|\bstuck\s{1,3}around\b")


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
