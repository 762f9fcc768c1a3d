"""What a question leaves out: people ("besides the bot"), areas ("not CI") and words ("other than the kimi parser")."""

from __future__ import annotations

from collections.abc import Sequence

from store.model import PullRequest
from store.retrieval.reading.query import BOTS, Concept, Query, Role, is_bot
from store.text.prose import atoms, holds, lead_and_rest
from store.understanding.areas import classify


def excluded(pr: PullRequest, question: Query) -> bool:
    """Whether the question leaves `pr` out: by a person it excludes, in every area it excludes, or about words it does."""
    roles = ((Role.AUTHOR, pr.author), (Role.MERGER, pr.merged_by or ""))
    if question.excluded and any(left_out(login, question.excluded) for role, login in roles
                                 if question.excluded_role in (Role.ANY, role)):
        return True
    if any(set(group) <= set(pr.areas) and _mainly_in(pr, group, question) for group in question.excluded_areas):
        return True
    return any(_leads_with(pr, concept) for concept in question.excluded_words)


def left_out(login: str, excluded: Sequence[str]) -> bool:
    """Whether a login is among those `excluded` ("bots" for every bot)."""
    return login.lower() in excluded or (BOTS in excluded and is_bot(login))


def _mainly_in(pr: PullRequest, group: tuple[str, ...], question: Query) -> bool:
    """Whether `pr` is about the areas left out: its title names one, or it is in no other area.

    A ROCm kernel change that also touches a CI file is not "about CI"."""
    areas_left_out = {area for group_left_out in question.excluded_areas for area in group_left_out}
    return bool(set(group) & set(classify(pr.title, (), repo=pr.repo))) or set(pr.areas) <= areas_left_out


def _leads_with(pr: PullRequest, concept: Concept) -> bool:
    """Whether the title or first sentence of what changed says the concept: what a PR is about, not what it touches."""
    lead = lead_and_rest(pr.summary.what_changed)[0] if pr.summary else ""
    said = atoms(f"{pr.title} {lead}")
    return any(holds(said, atoms(phrase)) for phrase in concept.phrases.same)
