"""Every relative link in README.md and docs/*.md reaches a file that exists, and every #anchor a heading in it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).+?\1")
LINK = re.compile(r"\]\(([^()\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code, with inline code taken out: neither holds links or headings."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(CODE_SPAN.sub("", line))
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: and the like
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{target}: no file {path}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page):
    assert broken_links(page) == []


def test_anchors_are_the_ones_github_makes():
    assert slug("Sharing a reply, and explaining a message's PRs") == "sharing-a-reply-and-explaining-a-messages-prs"
    assert slug("`prdigest doctor`") == "prdigest-doctor"
    assert slug("Personal subscriptions and the Home tab") == "personal-subscriptions-and-the-home-tab"


def test_a_link_to_a_heading_that_moved_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nSee [filters](#filters) and [the rest](other.md#nowhere).\n\n```\n[x](#in-code)\n```\n")
    (tmp_path / "other.md").write_text("# Other\n\n## Somewhere\n")
    assert broken_links(page) == ["#filters: no heading #filters in page.md", "other.md#nowhere: no heading #nowhere in other.md"]
