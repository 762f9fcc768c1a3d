"""The real reports beside the project: a test that needs them skips without them, except in CI, where it fails."""
import conftest
import pytest


@pytest.mark.parametrize("present", [False, True], ids=["no folder", "empty folder"])
def test_without_the_seeds_a_test_skips_outside_ci(monkeypatch, tmp_path, present):
    monkeypatch.setattr(conftest, "SEEDS", _seeds(tmp_path, present))
    monkeypatch.delenv("CI", raising=False)
    outcome = _outcome()
    assert isinstance(outcome, pytest.skip.Exception), outcome
    assert str(outcome) in ("../shared/seeds is not present", "../shared/seeds holds no reports")


@pytest.mark.parametrize("present", [False, True], ids=["no folder", "empty folder"])
def test_without_the_seeds_a_test_fails_in_ci(monkeypatch, tmp_path, present):
    monkeypatch.setattr(conftest, "SEEDS", _seeds(tmp_path, present))
    monkeypatch.setenv("CI", "true")
    outcome = _outcome()
    assert isinstance(outcome, pytest.fail.Exception), outcome
    assert "CI runs the tests that read the real reports, so it needs them" in str(outcome)


def test_with_the_seeds_a_test_gets_them_in_ci_too(monkeypatch, tmp_path):
    seeds = _seeds(tmp_path, True)
    (seeds / "report-2026-02-09.md").write_text("# vLLM Merged PR Report\n", encoding="utf-8")
    monkeypatch.setattr(conftest, "SEEDS", seeds)
    monkeypatch.setenv("CI", "true")
    assert conftest.seed_reports() == [seeds / "report-2026-02-09.md"]


def _seeds(tmp_path, present: bool):
    seeds = tmp_path / "seeds"
    if present:
        seeds.mkdir()
    return seeds


def _outcome() -> BaseException:
    """What seed_reports() ended the calling test with: a skip or a failure."""
    with pytest.raises(BaseException) as raised:
        conftest.seed_reports()
    return raised.value
