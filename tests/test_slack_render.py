from datetime import datetime, timezone

from pr_factory import make_pr
from bot.slack_render import primary_area


def _pr(title: str, areas: list[str]):
    return make_pr(1, title, areas=areas, merged_at=datetime(2026, 3, 8, tzinfo=timezone.utc))


def test_a_pr_is_grouped_under_the_area_its_title_names():
    assert primary_area(_pr("[Model Runner V2] Drop a method", ["speculative-decoding", "model-runner-v2"])) == "model-runner-v2"
    assert primary_area(_pr("[AMD][CI] Fix a flaky test", ["rocm", "ci"])) == "rocm"


def test_broad_areas_yield_to_specific_ones():
    assert primary_area(_pr("[Refactor] Simplify dummy inputs", ["docs", "multimodal"])) == "multimodal"
    assert primary_area(_pr("[CI] Pin a version", ["ci"])) == "ci"
    assert primary_area(_pr("Tidy up", [])) == "other"
