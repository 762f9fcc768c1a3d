""""Explain these PRs": the summary of each PR a message links to or names by number, at most ten."""
from __future__ import annotations

from typing import Any

from bot.answers.pr_refs import message_prs
from bot.answers.previews import find_pr, preview_of
from bot.answers.scope import channel_repos
from bot.messages.blocks import Message, mrkdwn_section, pr_summary_message, split_blocks
from bot.messages.mrkdwn import escape
from bot.messages.preview import preview_unfurl
from bot.runtime import Runtime
from store.sources.ingest import Unmerged
from store.tables.teams import Team
from store.text.prose import plural

MAX_EXPLAINED = 10


def explain(runtime: Runtime, team: Team, text: str, channel: str | None) -> list[Message] | None:
    """The summaries, as thread replies within Slack's limits; None when the message names no PR."""
    named = message_prs(runtime, team, text, channel)
    if not named.prs:
        return None
    shown, more = named.prs[:MAX_EXPLAINED], named.prs[MAX_EXPLAINED:]
    several = len({repo for repo, _ in named.prs}) > 1
    blocks: list[dict[str, Any]] = [mrkdwn_section(f"*The {plural(len(named.prs), 'PR')} this message names*")]
    missing = []
    for repo, number in shown:
        found = find_pr(runtime, repo, number)
        if found is None:
            missing.append(f"`{escape(repo)}#{number}`" if several else f"#{number}")
            continue
        if isinstance(found, Unmerged):  # no summary is kept for it: its preview says what there is
            blocks.extend(preview_unfurl(preview_of(runtime, found))["blocks"])
        else:
            blocks.extend(pr_summary_message(found, runtime.settings.timezone).blocks)
        blocks.append({"type": "divider"})
    if missing:
        blocks.append(mrkdwn_section(f"Not in the store: {', '.join(missing)}."))
    if more:
        listed = ", ".join(f"{escape(repo)}#{number}" if several else f"#{number}" for repo, number in more)
        kind = "PR" if len(more) == 1 else "PRs"
        blocks.append(mrkdwn_section(f"_\u2026and {len(more)} more {kind}: {listed}. `/prdigest pr N` gives any one of them._"))
    if blocks[-1]["type"] == "divider":
        blocks.pop()
    return split_blocks(blocks)


def nothing_named(runtime: Runtime, team: Team, channel: str | None) -> str:
    repos = escape(", ".join(channel_repos(runtime, team, channel)))
    return f"That message links to no PR of {repos} and names none by number (#1234), so there is nothing to explain."
