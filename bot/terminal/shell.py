"""`prdigest run` and `prdigest shell`: the bot's Slack replies without Slack, as mrkdwn or terminal text."""
from __future__ import annotations

import contextlib
import logging
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from bot.answers.commands import Reply, corrected, execute, help_text, is_command
from bot.answers.empty_store import empty_store_notice
from bot.answers.mentions import EMPTY_QUESTION, apology, question_text, replies_message, reply_to
from bot.messages.blocks import text_message
from bot.runtime import Runtime
from bot.terminal.render import Style, dim, render
from bot.terminal.sample import loaded_lines
from store.db import StoreError
from store.retrieval.thread import Turn
from store.tables.teams import NO_TEAM, Team
from store.tables.threads import HISTORY_TURNS, kept_question
from store.text.patterns import LazyPattern
from store.text.prose import typed
from store.text.safe import neutralize

log = logging.getLogger(__name__)

COMMAND_PREFIX = "/prdigest"
MENTION_PREFIX = "@prdigest"
QUIT = {"quit", "exit", r"\q"}
NEW = "new"  # the shell's own command: the next question starts a new thread
SAMPLE = "sample"  # the shell's own command: load the example reports
HELP = {"help", "/prdigest help"}
# A command named in a reply, in a code span: typed without its prefix here.
_SLASH = LazyPattern(r"`/prdigest(?: |(?=`))")
FOLLOWING_CHARS = 80  # of the earlier question shown beside a follow-up


@dataclass
class Conversation:
    """One run or shell session: its workspace and channel (for subscriptions) and its mention thread."""

    runtime: Runtime
    channel: str | None = None
    team: Team = NO_TEAM  # the store's workspace (bot.slack.workspaces.command_line_team)
    # A thread keeps what a Slack thread keeps (store.tables.threads): its last few questions, each cut to what is
    # read. A long session then costs the same per question as a short one: the prompt and the reading of the
    # thread stay the same size.
    history: deque[Turn] = field(default_factory=lambda: deque(maxlen=HISTORY_TURNS))
    following: str | None = None  # the earlier question the last answer read its question as following

    def say(self, line: str) -> Reply:
        """The reply to `/prdigest TEXT`, `@prdigest QUESTION`, or bare text: a command if it is one (or its first
        word mistypes one that takes the rest), else a question, as a terminal has no other use for it. Never raises."""
        line = typed(line).strip()
        self.following = None
        if line.lower().startswith(MENTION_PREFIX):
            return self._mention(question_text(line[len(MENTION_PREFIX):]))
        if line.lower().startswith(COMMAND_PREFIX):
            return execute(self.runtime, line[len(COMMAND_PREFIX):], self.team, channel=self.channel)
        if is_command(self.runtime, line):
            return execute(self.runtime, line, self.team, channel=self.channel)
        return corrected(self.runtime, line, self.team, self.channel) or self._mention(question_text(line))

    def start_afresh(self) -> None:
        """The next question is read on its own, as the first of a new thread."""
        self.history.clear()

    def _mention(self, question: str) -> Reply:
        if not question:
            return Reply([text_message(EMPTY_QUESTION)])
        try:
            replies = reply_to(self.runtime, question, self.team, history=list(self.history), channel=self.channel)
            message = replies_message(replies, self.runtime.settings.timezone)
        except Exception:  # as in Slack: an apology, and the session goes on
            log.exception("could not answer %r", question)
            return Reply([apology()], error=True)
        # The earlier question, when the thread supplied part of this one (a time, a person, a topic).
        self.following = self.history[-1].text if self.history and replies.follows() else None
        self.history.append(Turn(kept_question(question), replies.answered()))
        return Reply([message])


def shell(
    runtime: Runtime, lines: Iterable[str], out: IO[str], err: IO[str], channel: str | None = None, team: Team = NO_TEAM
) -> None:
    """Answer lines until EOF or `quit`; every answer is the bot's Slack reply rendered for `out`."""
    talk = Conversation(runtime, channel, team)
    style = Style.for_stream(out)
    print(
        f"prdigest shell on {runtime.settings.db_path} ({runtime.settings.default_repo}). "
        "Type a command (`help`, `today`, `area rocm`...) or a question; "
        f"`{NEW}` starts a new thread of questions, `quit` ends.",
        file=err,
    )
    notice = empty_store_notice(runtime.db, runtime.settings.default_repo)
    if notice:  # said once at the start, before every answer says it again
        print(f"{notice} To try prdigest on example reports first, type `{SAMPLE}`.", file=err)
    for line in lines:
        word = typed(line).strip().lower()
        if word in QUIT:
            return
        if not word:
            continue
        if word == NEW:
            talk.start_afresh()
            print(dim("(new thread: the next question follows no earlier one)", style) + "\n", file=out, flush=True)
            continue
        if word == SAMPLE:
            print(_sample(runtime) + "\n", file=out, flush=True)
            continue
        reply = _shell_help(runtime) if word in HELP else talk.say(line)
        if talk.following:
            print(dim(f"(following: {talk.following[:FOLLOWING_CHARS]})", style), file=out)
        print(render(as_typed_here(reply.text), style) + "\n", file=out, flush=True)


def _sample(runtime: Runtime) -> str:
    """The example reports loaded into the shell's store, or one line saying why they were not."""
    try:
        return "\n".join(loaded_lines(runtime.db, runtime.settings))
    except StoreError as exc:
        return f"Not loaded: {neutralize(str(exc))}."


def _shell_help(runtime: Runtime) -> Reply:
    """The commands as they are typed here, and the shell's own."""
    here = (
        "Anything else you type is a question (`@prdigest` is optional); a question read as following the earlier"
        f" ones says so. `{NEW}` starts a new thread of questions, `{SAMPLE}` loads example reports, `quit` ends."
    )
    return Reply([text_message(help_text(runtime.settings.repos, here))])


def as_typed_here(mrkdwn: str) -> str:
    """A reply with the commands it names as they are typed in the shell: `/prdigest area rocm` is `area rocm`."""
    return _SLASH.sub("`", mrkdwn).replace("*/prdigest*", "*prdigest*")


def prompted_lines(prompt: str = "prdigest> ") -> Iterable[str]:
    """Lines from the terminal with a prompt (and line editing), or plain lines from a pipe."""
    if not sys.stdin.isatty():
        yield from sys.stdin
        return
    # Importing readline gives input() line editing and history; it is not on every platform.
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401
    while True:
        try:
            yield input(prompt)
        except EOFError:
            print(file=sys.stderr)
            return
        except KeyboardInterrupt:  # Ctrl-C drops the line being typed, as in any shell
            print(file=sys.stderr)
