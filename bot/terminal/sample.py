"""The example reports that come with prdigest, loaded from `prdigest import --sample` or the shell's `sample`,
with what to try on them."""
from __future__ import annotations

from sqlite_utils import Database

from bot.config import Settings
from store.sources.sample import SAMPLE_REPO, load_sample

# Commands and questions that answer well on the example reports, as typed in the shell.
TRY = ("2026-03-17", "area rocm mar 16-19", "why was the split-K kernel reverted?", "what changed in spec decode?")


def loaded_lines(db: Database, settings: Settings, command: str = "") -> list[str]:
    """Load the examples into `db`; what was loaded and what to try, with each try prefixed by `command` when it is
    typed in a shell of the operating system (`prdigest run`, `prdigest ask`) rather than prdigest's own."""
    done = list(load_sample(db, settings.timezone))
    days = [item.date for item in done]
    lines = [
        f"Loaded {sum(item.count for item in done)} example PRs of {SAMPLE_REPO}, merged {days[0]} to {days[-1]}"
        f" ({len(days)} daily reports written for prdigest: the PRs are made up, not vLLM's own).",
        "Try:",
    ]
    for text in TRY:
        asks = text.endswith("?")
        if SAMPLE_REPO not in settings.repos:  # not covered unless named (PRDIGEST_REPOS lists others)
            text = f"{text[:-1]} in {SAMPLE_REPO}?" if asks else f"{text} {SAMPLE_REPO}"
        lines.append(f"  {command}{'ask' if asks else 'run'} \"{text}\"" if command else f"  {text}")
    if command:
        lines.append(f"In `{command}shell` (or `{command}serve` without Slack tokens), type them without `{command}run`"
                     f" or `{command}ask` and the quotes.")
    return lines
