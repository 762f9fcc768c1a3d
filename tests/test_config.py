"""Every environment variable is read in bot/config.py, listed once in VARIABLES, and documented in the README."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import VARIABLES, ConfigError, Settings

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r'"((?:PRDIGEST|SLACK|OPENAI|GITHUB|XDG)_[A-Z_]+)"')


def test_the_variables_read_are_the_variables_listed():
    source = (ROOT / "bot" / "config.py").read_text(encoding="utf-8")
    listed = source[source.index("VARIABLES = (") : source.index(")", source.index("VARIABLES = ("))]
    read = set(NAME.findall(source.replace(listed, "")))
    assert read == set(VARIABLES)
    assert len(VARIABLES) == len(set(VARIABLES))


def test_no_other_module_reads_the_environment():
    # The terminal's own conventions (TERM, NO_COLOR) are read where output is styled.
    readers = [
        str(path.relative_to(ROOT))
        for package in ("bot", "store")
        for path in (ROOT / package).rglob("*.py")
        if path.name not in ("config.py", "render.py") and re.search(r"os\.environ|os\.getenv", path.read_text(encoding="utf-8"))
    ]
    assert readers == []


def test_every_variable_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [name for name in VARIABLES if name not in readme] == []


def test_defaults_come_from_the_fields():
    assert Settings.from_env({}).github_max_wait == Settings.github_max_wait
    assert Settings.from_env({}).busy_timeout == Settings.busy_timeout


def test_polling_is_on_by_default_and_zero_turns_it_off():
    assert Settings.from_env({}).ingests and Settings.from_env({}).poll_minutes == 10
    assert not Settings.from_env({"PRDIGEST_POLL_MINUTES": "0"}).ingests
    for bad in ("-1", "ten", "²"):
        with pytest.raises(ConfigError, match="PRDIGEST_POLL_MINUTES: expected a whole number of at least 0"):
            Settings.from_env({"PRDIGEST_POLL_MINUTES": bad})


def test_bots_are_github_logins_compared_without_case():
    assert Settings.from_env({"PRDIGEST_BOTS": " vllm-bot, @Acme-Release ,"}).bots == {"vllm-bot", "acme-release"}
    with pytest.raises(ConfigError, match=r"^PRDIGEST_BOTS: expected GitHub logins separated by commas, got 'vllm bot'$"):
        Settings.from_env({"PRDIGEST_BOTS": "vllm bot"})


@pytest.mark.parametrize("raw", ["²", "١٠", "5e1", "-3"])
def test_a_count_is_written_in_ascii_digits(raw):
    with pytest.raises(ConfigError, match="PRDIGEST_LLM_CONCURRENCY: expected a positive whole number"):
        Settings.from_env({"PRDIGEST_LLM_CONCURRENCY": raw})
