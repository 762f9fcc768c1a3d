"""A PR link's preview: one compact attachment for chat.unfurl, from the stored summary."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.messages.blocks import mrkdwn_section
from bot.messages.mrkdwn import escape, first_sentence, link, truncate

# A preview stays a glance: a long title, login or list of areas is cut.
TITLE_CHARS = 150
AUTHOR_CHARS = 40
MAX_AREAS = 5
WHAT_CHARS = 240


@dataclass(frozen=True)
class Preview:
    url: str
    number: int
    title: str
    author: str
    status: str  # "merged 2026-03-08", "open" or "closed"
    areas: tuple[str, ...]
    what_changed: str  # the summary's *What changed* section; its first sentence is shown
    release: str | None = None  # where it shipped ("Shipped in v0.11.1", "Not in a release yet"), when known


def preview_unfurl(preview: Preview) -> dict[str, Any]:
    """The value chat.unfurl takes for one URL: the title as a link, the first sentence of What changed,
    then author, state, areas and release on one line."""
    head = f"*{link(preview.url, f'#{preview.number} {truncate(preview.title, TITLE_CHARS)}')}*"
    what = first_sentence(preview.what_changed, WHAT_CHARS)
    meta = [f"by {escape(truncate(preview.author, AUTHOR_CHARS))}", preview.status]
    if preview.areas:
        shown = ", ".join(escape(area) for area in preview.areas[:MAX_AREAS])
        more = len(preview.areas) - MAX_AREAS
        meta.append(shown + (f" +{more}" if more > 0 else ""))
    if preview.release:
        meta.append(escape(truncate(preview.release, 60)))
    context = {"type": "context", "elements": [{"type": "mrkdwn", "text": " \u00b7 ".join(meta), "verbatim": True}]}
    return {"blocks": [mrkdwn_section(f"{head}\n{escape(what)}" if what else head), context]}
