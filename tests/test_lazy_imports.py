"""Answering from the store loads no model client, template engine or Slack library."""
import subprocess
import sys

import pytest

HEAVY = ("openai", "jinja2", "slack_sdk", "slack_bolt")
# Runs a command through the real entry point, then names the heavy modules it loaded.
PROBE = """
import sys
from bot.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("loaded:", *(name for name in {heavy!r} if name in sys.modules), file=sys.stderr)
"""


def _loaded(*args: str, before: str = "") -> list[str]:
    probe = before + PROBE.format(heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60)
    line = next(line for line in done.stderr.splitlines() if line.startswith("loaded:"))
    return line.split()[1:]


@pytest.mark.parametrize(
    "args", [["ask"], ["ask", "what changed in the scheduler this week?"], ["run", "today"], ["search", "scheduler"]]
)
def test_answers_load_no_heavy_client(db, args):
    assert _loaded(*args) == []


def test_the_probe_sees_a_heavy_client_when_one_is_loaded(db):
    assert _loaded("ask", before="import jinja2\n") == ["jinja2"]
