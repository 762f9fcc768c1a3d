"""The reason a PR gives for itself, in its own words, as a "why …?" answer opens with it."""
import pytest
from pr_factory import make_pr

from bot.answers.reasons import reason
from store.model import Summary


def revert(what_changed: str):
    return make_pr(2, 'Revert "[Core] Preempt the least-computed request first" (#1)',
                   summary=Summary(what_changed, "", "", "", "imported"))


@pytest.mark.parametrize(("text", "said"), [
    ("Reverts #1 because preemption starved long prompts.", " because preemption starved long prompts"),
    ("Reverts #1 due to a crash on ROCm.", " due to a crash on ROCm"),
    # A reason without "because": the first sentence that says more than what was reverted.
    ("This reverts #1. Long prompts starved under load.", ": Long prompts starved under load"),
    # "as it" and "since it" compare and date as often as they give a cause.
    ("This reverts #1. The scheduler preempts the newest request, as it did before April.",
     ": The scheduler preempts the newest request, as it did before April"),
    ("This reverts #1.", None),
    # A reason said inside brackets is given with its sentence whole, never from the middle of the brackets.
    ("Reverts #1 (slow because a scan ran per step), and it crashed on ROCm.",
     ": Reverts #1 (slow because a scan ran per step), and it crashed on ROCm"),
])
def test_a_revert_gives_its_own_reason(text, said):
    assert reason(revert(text)) == said


def change(title: str, what_changed: str):
    return make_pr(3, title, summary=Summary(what_changed, "", "", "", "imported"))


@pytest.mark.parametrize(("title", "text", "said"), [
    # The problem a change answers, said before what it does.
    ("[CI/Build] Pin triton to 3.5.1",
     "Triton 3.6.0 regressed warm-up time for MoE models. The requirement is pinned to triton==3.5.1.",
     ": Triton 3.6.0 regressed warm-up time for MoE models"),
    # A first sentence that says the title again is passed over for the one that says why.
    ("[Frontend] Deprecate reasoning_content in chat responses",
     "This PR deprecates reasoning_content in chat responses. Clients read reasoning text from a field that "
     "OpenAI's own API does not have.",
     ": Clients read reasoning text from a field that OpenAI's own API does not have"),
    # A purpose stated outright.
    ("[Core] Hash prefix-cache blocks with xxHash", "The default hash becomes xxHash so that hashing stops showing up "
     "in scheduler profiles.", " so that hashing stops showing up in scheduler profiles"),
    ("[Doc] Fix a typo in the install guide", "Fixes a typo in the install guide.", None),
])
def test_a_change_gives_its_own_reason(title, text, said):
    assert reason(change(title, text)) == said
