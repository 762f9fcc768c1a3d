"""An answer as the bot gives it, before any rendering: its text, the PRs it cites and may name, and how a PR is
written on its lines."""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.answers.reasons import risk_sentence
from bot.config import Settings
from bot.messages.mrkdwn import first_sentence, truncate
from store.model import PullRequest
from store.retrieval.thread import Answered
from store.text.patterns import LazyPattern

# A PR shown in detail gets this much of its "What changed".
DETAIL_CHARS = 700
_BRACKETED = LazyPattern(r"\[#(\d{1,9})\]")


@dataclass
class Answer:
    text: str  # plain text, not escaped; PRs written as [#N]
    citations: list[int]  # the PRs that answer, all in the store, most relevant first
    prs: list[PullRequest]  # every PR the text may name: the citations, then context
    listed: list[int] = field(default_factory=list)  # PRs the text lists on a line of their own
    # The question as read and what this answer cited, for the thread to keep; None when nothing was read.
    answered: Answered | None = None
    follows: bool = False  # the thread supplied part of the question

    @property
    def plain(self) -> str:
        """The text as a reader outside Slack takes it: each [#N] written #N."""
        return _BRACKETED.sub(r"#\1", self.text)

    def sources(self) -> list[PullRequest]:
        """Cited PRs the text names only by number: a renderer lists them once below the answer. Those of a long set
        that the text leaves out are counted in it, not listed."""
        by_number = {pr.number: pr for pr in self.prs}
        return [by_number[n] for n in self.citations if n in by_number and n not in self.listed and f"[#{n}]" in self.text]


def pr_lines(pr: PullRequest, settings: Settings, detailed: bool = False, risks: bool = False) -> list[str]:
    """A PR's head line, then what changed (all of it when `detailed`), or the risk it names when `risks` are asked about."""
    day = pr.merged_at.astimezone(settings.timezone)
    head = f"[#{pr.number}] {pr.title} ({pr.author}, {day:%a %b} {day.day})"
    risk = risk_sentence(pr) if risks else None
    if risk:
        return [head, f"    Risk: {truncate(risk, DETAIL_CHARS)}"]
    what = pr.summary.what_changed if pr.summary else ""
    what = truncate(" ".join(what.split()), DETAIL_CHARS) if detailed else first_sentence(what)
    return [head, f"    {what}"] if what else [head]
