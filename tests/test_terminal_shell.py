"""`prdigest shell`, `ask` and `run --format text` as a person sees them: in a pipe, on a TTY, in tmux."""
import os
import pty
import re
import select
import shlex
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from conftest import LA
from servers.openai_api import FakeOpenAI, Reply
from slack_helpers import REPO, import_fixtures, make_pr

from bot.config import Settings
from bot.runtime import Runtime
from bot.terminal.shell import Conversation
from store.tables.prs import save_pr
from store.tables.threads import HISTORY_TURNS

ROOT = Path(__file__).resolve().parents[1]
EVIL_TITLE = "[Core] Fix \x1b]8;;http://evil\x07click\x1b]8;;\x07 and \x1b[2J\x1b[H clear"
EVIL_WHAT = "Rings\x07 the bell, \x9b31m colours \x1b[31m and\r hides."
SHOWN_TITLE = "[Core] Fix click and  clear"  # whole escape sequences go, so none leaves its parameters as text
LINK = "#4090 [Spec Decode] Add EAGLE drafter metrics <https://github.com/acme/engine/pull/4090>"
# Every escape sequence the renderer itself may write: SGR bold/italic on and off, OSC 8 to a GitHub PR or closing one.
OURS = re.compile(r"\x1b\[(?:1|22|3|23)m|\x1b\]8;;(?:https://github\.com/acme/engine/pull/\d+)?\x1b\\")
LINES = ["2026-03-08", "pr 4200", "@prdigest what merged on 2026-03-08?"]


@pytest.fixture
def store(db):
    """The fixture reports, and a PR whose title and summary try to drive the terminal."""
    import_fixtures(db)
    save_pr(db, make_pr(4200, datetime(2026, 3, 8, 10, 0, tzinfo=LA), EVIL_TITLE, what=EVIL_WHAT))
    return db


def environment(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "GITHUB_", "NO_COLOR"))}
    return {**clean, "PRDIGEST_REPOS": REPO, **extra}


def shell_in_a_pipe(*lines: str) -> str:
    done = subprocess.run([sys.executable, "-m", "bot", "shell"], cwd=ROOT, input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60, env=environment())
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def shell_on_a_tty(*lines: str, **env: str) -> str:
    """The shell's stdout on a pseudo-terminal (its input piped, so only our output is on it)."""
    primary, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "bot", "shell"], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=secondary, stderr=subprocess.DEVNULL, env=environment(**env))
    os.close(secondary)
    process.stdin.write(("\n".join(lines) + "\n").encode())
    process.stdin.close()
    output = b""
    try:
        while select.select([primary], [], [], 60)[0]:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the shell exited and closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(primary)
    assert process.wait(timeout=60) == 0
    return output.decode().replace("\r\n", "\n")  # the terminal turns each newline into CR LF


def without_our_escapes(text: str) -> str:
    return OURS.sub("", text)


def test_the_shell_in_a_pipe_is_plain_text(store):
    out = shell_in_a_pipe(*LINES)
    assert "Acme: merged PRs for 2026-03-08 (PST)" in out and LINK in out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\r" not in out
    for markup in ("*Acme", "<https://github.com/acme/engine/pull/4090|", "&lt;", "&gt;", "&amp;", "_(by "):
        assert markup not in out, markup
    assert "Fix <!channel> [sic] paged attention" in out  # entities read as the characters they stand for
    assert SHOWN_TITLE in out and "Rings the bell, 31m colours  and hides." in out
    assert "#4200 <https://github.com/acme/engine/pull/4200>" in out  # the answer's citation, with its URL


def test_the_shell_on_a_tty_is_bold_with_hyperlinks_and_nothing_else(store):
    out = shell_on_a_tty(*LINES, TERM="xterm-256color")
    assert "\x1b[1mAcme: merged PRs for 2026-03-08 (PST)\x1b[22m" in out
    url = "https://github.com/acme/engine/pull/4090"
    assert f"\x1b]8;;{url}\x1b\\#4090 [Spec Decode] Add EAGLE drafter metrics\x1b]8;;\x1b\\ <{url}>" in out
    assert "\x1b[3m(by linus-t" in out
    rest = without_our_escapes(out)
    assert not any(control in rest for control in "\x1b\x07\x9b\r"), repr(rest)
    assert SHOWN_TITLE in rest and "\x1b]8;;http://evil" not in out and "\x1b[2J" not in out


@pytest.mark.parametrize(
    "env, bold, links", [({"NO_COLOR": "1"}, False, True), ({"NO_COLOR": ""}, True, True), ({"TERM": "dumb"}, False, False)]
)
def test_no_color_and_a_dumb_terminal(store, env, bold, links):
    out = shell_on_a_tty("2026-03-08", **{"TERM": "xterm", **env})
    assert ("\x1b[1m" in out) is bold and ("\x1b]8;;" in out) is links
    if not bold:
        assert "\x1b[" not in out  # no SGR at all: no color, no bold, no italic
    assert "Acme: merged PRs for 2026-03-08 (PST)" in out and "<https://github.com/acme/engine/pull/4090>" in out


def test_run_prints_mrkdwn_by_default_and_terminal_text_on_request(run_cli, store, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    exact = run_cli("run", "2026-03-08")
    assert exact.out.startswith("*Acme: merged PRs for 2026-03-08 (PST)*\n")
    assert "<https://github.com/acme/engine/pull/4090|#4090 [Spec Decode] Add EAGLE drafter metrics>" in exact.out
    assert "&lt;!channel&gt;" in exact.out
    assert run_cli("run", "--format", "mrkdwn", "2026-03-08").out == exact.out
    text = run_cli("run", "--format", "text", "2026-03-08")
    assert text.code == 0 and text.out.startswith("Acme: merged PRs for 2026-03-08 (PST)\n")
    assert LINK in text.out and "<!channel>" in text.out and "&lt;" not in text.out and "|#" not in text.out
    for shown in (exact.out, text.out):  # not even the exact mrkdwn lets a title drive the terminal
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    bad = run_cli("run", "--format", "html", "today")
    assert bad.code == 2 and bad.err.count("\n") == 1 and "'html' is not one of 'mrkdwn', 'text'" in bad.err


def test_ask_prints_terminal_text_with_the_urls_of_its_sources(run_cli, store, monkeypatch):
    monkeypatch.setenv("PRDIGEST_REPOS", REPO)
    result = run_cli("ask", "what", "merged", "on", "2026-03-08?")
    assert result.code == 0 and "#4200 <https://github.com/acme/engine/pull/4200>" in result.out
    assert SHOWN_TITLE in result.out and "\x1b" not in result.out and "\x07" not in result.out
    assert "[#" not in result.out and "&lt;" not in result.out and "|#" not in result.out


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_shell_reads_cleanly_in_tmux(store, tmp_path, isolated_env):
    socket = str(tmp_path / "tmux.sock")

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-S", socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              check=True, timeout=30, env=environment()).stdout

    command = shlex.join(["env", f"PRDIGEST_DB={isolated_env}", f"PRDIGEST_REPOS={REPO}",
                          sys.executable, "-m", "bot", "shell"])
    def wait_for_prompt(count: int) -> None:
        deadline = time.monotonic() + 30
        while tmux("capture-pane", "-p").count("prdigest>") < count:  # the pane drops trailing blanks
            assert time.monotonic() < deadline, tmux("capture-pane", "-p")
            time.sleep(0.1)

    tmux("new-session", "-d", "-x", "250", "-y", "100", "-c", str(ROOT), command)
    try:
        wait_for_prompt(1)
        for number, line in enumerate(LINES, start=2):
            tmux("send-keys", "-l", line)
            tmux("send-keys", "Enter")
            wait_for_prompt(number)
        screen = tmux("capture-pane", "-p", "-J")  # the visible screen only: a clear would have emptied it
        styled = tmux("capture-pane", "-p", "-J", "-e")
    finally:
        tmux("kill-server")
    assert screen.startswith("prdigest shell on ")  # the banner survived the title's clear-screen attempt
    assert "Acme: merged PRs for 2026-03-08 (PST)" in screen and LINK in screen and SHOWN_TITLE in screen
    for markup in ("*Acme", "|#", "&lt;", "_(by "):
        assert markup not in screen, markup
    assert "\x1b[1mAcme: merged PRs for 2026-03-08 (PST)" in styled  # bold on the screen, as tmux shows it


def test_a_long_session_asks_with_prompts_no_longer_than_a_short_ones(db, monkeypatch):
    import_fixtures(db)
    with FakeOpenAI(lambda request: Reply("ROCm paged attention got a stride fix [#4102].")) as model:
        for name, value in {"PRDIGEST_REPOS": REPO, "PRDIGEST_MODEL": "m", "OPENAI_BASE_URL": model.base_url}.items():
            monkeypatch.setenv(name, value)
        talk = Conversation(Runtime(Settings.from_env()))
        question = "what changed for ROCm on 2026-03-08? " + "rocm kernels and their tests " * 13  # 400 characters
        for turn in range(40):
            talk.say(f"{question}{turn:03d}")
    assert len(model.requests) == 40  # one model call a question
    earlier = [request.user.split("Earlier questions in this thread: ", 1)[-1].split("\n", 1)[0] for request in model.requests]
    assert [part.count(" | ") + 1 for part in earlier[HISTORY_TURNS:]] == [HISTORY_TURNS] * (40 - HISTORY_TURNS)
    # From the seventh question on, each is asked with a prompt of the same size: the thread has stopped growing.
    assert len({len(request.user) for request in model.requests[HISTORY_TURNS:]}) == 1
    assert len(talk.history) == HISTORY_TURNS and talk.history[-1].text.endswith("039")
