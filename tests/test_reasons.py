"""The reason a revert gives for itself, in its own words, as a "why was it reverted?" answer opens with it."""
import pytest
from pr_factory import make_pr

from bot.answers.reasons import revert_reason
from store.model import Summary


def revert(what_changed: str):
    return make_pr(2, 'Revert "[Core] Preempt the least-computed request first" (#1)',
                   summary=Summary(what_changed, "", "", "", "imported"))


@pytest.mark.parametrize(("text", "reason"), [
    ("Reverts #1 because preemption starved long prompts.", " because preemption starved long prompts"),
    ("Reverts #1 due to a crash on ROCm.", " due to a crash on ROCm"),
    # A reason without "because": the first sentence that says more than what was reverted.
    ("This reverts #1. Long prompts starved under load.", ": Long prompts starved under load"),
    # "as it" and "since it" compare and date as often as they give a cause.
    ("This reverts #1. The scheduler preempts the newest request, as it did before April.",
     ": The scheduler preempts the newest request, as it did before April"),
    ("This reverts #1.", None),
])
def test_a_revert_gives_its_own_reason(text, reason):
    assert revert_reason(revert(text)) == reason
