"""Whether the words no PR says are what a question is about: then the honest answer is no.

A question of words turns on its most telling name: "any rocm fixes for the mi250?" is about the MI250, and six ROCm
fixes for other GPUs do not answer it. How telling a word is, is how rare it is among PRs (evidence.rarity): a word
no PR says is as rare as can be (as one PR's word is), and outweighs common words ("fixes", "support", "connector") but not a question's
worth of rarer ones, where it is more likely chatter ("pics showing up sideways"). A word the lexicon knows as a
name of its own (a GPU, a library, a technique: a term of one of its synonym groups) is a name for certain, so it
weighs as much as two such words.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from sqlite_utils import Database

from store.model import PullRequest
from store.retrieval.evidence import rarest, rarity
from store.retrieval.fts import area_names
from store.retrieval.reading.query import Concept, Phrases, Query
from store.retrieval.reading.synonyms import subwords, synonym_index
from store.text.patterns import LazyPattern
from store.text.prose import atoms, holds, sentences
from store.understanding.vocabulary import cue

# How many words as rare as can be the words no PR says weigh against the rarity of those PRs do say: plain words
# (one, however many: chatter is often several), and a name the lexicon knows.
UNSAID_WORD = 1.0
UNSAID_NAME = 2.0


def is_unsaid_subject(db: Database, repo: str, known: Query) -> bool:
    """Whether the words no PR says (`known.unknown`) outweigh what is left of the question (`known.concepts` and the
    areas it names), each word weighed by its rarity: in the whole question, or in one of its sentences, against
    only that sentence's words ("bitsandbytes fixes? 4bit bnb models keep failing to load": the background told
    after the question does not outweigh what it asks about)."""
    if not known.unknown:
        return False
    areas = [Concept(name, Phrases((name,), (name,))) for name in area_names(known)]
    unknown = _named_for_certain(known.unknown, known.sentences)
    weighed: list[tuple[Sequence[Concept], list[Concept]]] = [(unknown, [*known.concepts, *areas])]
    for words in known.sentences:
        # Only a name decides its sentence alone: "bite" or "worry" in "anything that could bite us?" is chatter.
        unsaid = [concept for concept in unknown if set(atoms(concept.said)) <= words and a_name(concept)]
        if unsaid:
            weighed.append((unsaid, [concept for concept in known.concepts if set(atoms(concept.said)) <= words] + areas))
    return any(_outweighs(db, repo, unsaid, said) for unsaid, said in weighed)


def _named_for_certain(unknown: Sequence[Concept], sentences: tuple[frozenset[str], ...]) -> list[Concept]:
    """The words no PR says, each once; a word said again in another sentence ("outlines fixes? we're stuck on
    outlines") is a name, as one before a kind of thing is ("jamba models"). ("the k cutoff and the nucleus cutoff"
    says one word twice in one breath.)"""
    once = {concept.said: concept for concept in unknown}
    return [replace(concept, said_as_name=True) if sum(set(atoms(said)) <= words for words in sentences) > 1 else concept
            for said, concept in once.items()]


def _outweighs(db: Database, repo: str, unsaid: Sequence[Concept], said: list[Concept]) -> bool:
    weight = sum(rarity(db, repo, said)) if said else 0.0
    named = UNSAID_NAME if any(names_a_thing(concept) or concept.said_as_name for concept in unsaid) else UNSAID_WORD
    return weight < named * rarest(db, repo)


def names_a_thing(concept: Concept) -> bool:
    """Whether the lexicon knows the words as a name: a term or a narrower term of one of its synonym groups."""
    return subwords(concept.said) in synonym_index()


def identifiers_unsaid(prs: Sequence[PullRequest], concepts: Sequence[Concept]) -> list[str]:
    """The identifiers asked ("h100s", "mi355", "v5p") that none of `prs` says, in any of its words or narrower
    terms: a PR about the MI300X does not answer for the MI355."""
    asked = [concept for concept in concepts if is_identifier(concept)]
    if not asked or not prs:
        return []  # most questions name none: no PR's text is read
    said = [atoms(" ".join([pr.title, pr.body, *pr.files, *pr.areas, *(pr.summary.as_dict().values() if pr.summary else ())]))
            for pr in prs]
    # Run together as well: "8kHz" is said as "8 kHz", "h100s" as "H100".
    squashed = ["".join(text) for text in said]

    def says(concept: Concept) -> bool:
        phrases = _own_phrases(concept)
        if any(holds(text, atoms(phrase)) for text in said for phrase in phrases):
            return True
        run_together = {"".join(atoms(phrase)) for phrase in phrases}
        run_together |= {squash.removesuffix("s") for squash in run_together}
        return any(squash and squash in text for text in squashed for squash in run_together)

    return [concept.said for concept in asked if not says(concept)]


def _own_phrases(concept: Concept) -> list[str]:
    """The phrases that say the concept itself or a narrower term: a PR saying a broader one ("tpu" for the v5e) does
    not say it."""
    return [phrase for phrase in concept.phrases.all if phrase not in concept.phrases.wider]


def leaving_out(pr: PullRequest, concepts: Sequence[Concept]) -> str | None:
    """The sentence of `pr` that leaves out a thing asked by its name, when the PR says that name nowhere else:
    "v5e and v5p are rejected with a clear error", "Hopper GPUs are unaffected" answer for the v5e or the H100."""
    texts = [pr.body, *(pr.summary.as_dict().values() if pr.summary else ())]
    title = atoms(pr.title)
    for concept in concepts:
        if not a_name(concept):
            continue
        phrases = [atoms(phrase) for phrase in _own_phrases(concept)]
        if any(holds(title, phrase) for phrase in phrases):
            continue
        saying = [part for text in texts for part in sentences(text) if any(holds(atoms(part), p) for p in phrases)]
        # "fp8 was rejected on Intel GPUs" tells what the PR changed, not what it leaves out.
        if saying and all(_leaves_out(part, phrases) and not _WAS.search(part) for part in saying):
            return saying[0]
    return None


def _leaves_out(part: str, phrases: list[list[str]]) -> bool:
    """Whether the sentence leaves out the thing it names: the name, then what leaves it out ("x86 CPUs are not
    covered"); or a fallback or an exception, then the name ("falls back … with pipeline parallelism"). "A request
    is rejected with HTTP 503" rejects no 503."""
    words = atoms(part)
    named_at = min((i for phrase in phrases for i in range(len(words)) if words[i:i + len(phrase)] == phrase), default=0)
    return any(len(atoms(part[:cue.start()])) >= named_at or _NAME_AFTER.match(cue[0]) for cue in _LEAVES_OUT.finditer(part))


def is_identifier(concept: Concept) -> bool:
    """Words of letters and digits ("h100s", "mi355", "qwen3.5", "v5p"): a part, a model or a version by its name;
    not a quantity ("80gb", "8k", "500ms")."""
    said = concept.said
    return any(char.isdigit() for char in said) and any(char.isalpha() for char in said) and not _QUANTITY.fullmatch(said)


def a_name(concept: Concept) -> bool:
    """Whether the words name a thing: the lexicon knows them as a name, they are an identifier, or they come before
    a kind of thing ("jamba models")."""
    return names_a_thing(concept) or is_identifier(concept) or concept.said_as_name


_LEAVES_OUT, _WAS = cue("leaves_out"), cue("was_before")
_NAME_AFTER = LazyPattern(r"(?i)fall|except|expect|in\s")
# A number with its unit: how much of something, not what it is.
_QUANTITY = LazyPattern(r"\d+(?:\.\d+)?[\s-]?(?:[kmgt]i?b|[kmb]|ms|s|x|gpus?|cards?|nodes?)", re.IGNORECASE)
