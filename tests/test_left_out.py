"""A PR that names what was asked only to leave it out: a yes/no about it is no, in the PR's own sentence."""
from zoneinfo import ZoneInfo

import pytest
from pr_factory import make_pr

from store.model import Summary
from store.retrieval.reading.parse import parse_question
from store.retrieval.subject import leaving_out


def pr_saying(text: str):
    return make_pr(5, "[XPU] Support an FP8 KV cache on Intel GPUs", summary=Summary(text, "", "", "", "imported"))


@pytest.mark.parametrize(("text", "left_out"), [
    ("Only e5m2 is supported; `fp8_e4m3` raises a clear error on XPU.", True),
    ("The cache works on Arc B580. e4m3 is not covered yet.", True),
    ("Support for e4m3 will come later. Expect follow-ups for e4m3 once the driver ships.", True),
    # Said before the PR, or as what it adds: nothing is left out.
    ("e4m3 was rejected on XPU before this change.", False),
    ("Both e5m2 and e4m3 caches are supported.", False),
])
def test_a_name_said_only_where_it_is_left_out(text, left_out):
    concepts = parse_question("does it take e4m3?", ZoneInfo("UTC")).concepts
    assert (leaving_out(pr_saying(text), concepts) is not None) is left_out
