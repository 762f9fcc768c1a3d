"""What every command's answer shares: the call being answered, its reply, and the error for bad arguments."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

from bot.answers.scope import Scope
from bot.messages.blocks import Message, text_message
from bot.runtime import Runtime
from store.days import local_day
from store.retrieval.choose import MAX_LISTED
from store.tables.teams import Team


class CommandError(ValueError):
    """Bad arguments: a one-line explanation, answered together with the command's usage."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


@dataclass
class Reply:
    messages: list[Message]
    public: bool = False  # shown to the whole channel rather than only to the person asking
    error: bool = False
    found: bool = True  # False: it says that nothing matched, so it folds into a line beside other repositories
    personal: bool = False  # about the person asking alone (their own subscriptions): never shared in the channel

    @property
    def text(self) -> str:
        """The mrkdwn of every message as people see it, as `prdigest run` prints it."""
        return "\n\n".join(message.shown for message in self.messages)


def reply(text: str, public: bool = False, error: bool = False) -> Reply:
    return Reply([text_message(text)], public=public, error=error)


@dataclass
class Call:
    """One command being answered: who asks, where, when, and the words after the command name."""

    runtime: Runtime
    args: str  # without the repositories it names, which are in `scope`
    now: datetime
    scope: Scope  # the repositories it covers: those it names, or the channel's
    team: Team  # the workspace it comes from: the only one whose rows it reads or changes
    channel: str | None = None
    user: str | None = None
    listed: int = MAX_LISTED  # PRs a report lists, shared out when several repositories answer
    words: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.words = self.args.split()
        self.now = self.now.astimezone(self.tz)

    @property
    def tz(self) -> ZoneInfo:
        return self.runtime.settings.timezone

    @property
    def repos(self) -> tuple[str, ...]:
        return self.scope.repos

    @property
    def repo(self) -> str:
        """The repository a per-repository command works on (see each_repo)."""
        return self.repos[0]

    def for_repo(self, repo: str) -> Call:
        """The call for one of its repositories, listing its share of what one reply can hold."""
        listed = max(10, MAX_LISTED // len(self.repos))
        return replace(self, scope=replace(self.scope, repos=(repo,)), listed=listed)

    def limited(self, repos: tuple[str, ...]) -> Call:
        return replace(self, scope=replace(self.scope, repos=repos))

    @property
    def today(self) -> date:
        return local_day(self.now, self.tz)
