"""A PR description's structure: template sections, checklists, HTML comments, bot stamps,
unclosed code blocks and labels like "Summary:" / "Test Plan:".

`clean_body` is what a model is shown; `parse_body` is what the extractive sections read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from store.text.patterns import LazyPattern
from store.text.prose import is_fence
from store.understanding.summary.wording import inline

_HTML_COMMENT = LazyPattern(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# Review bots write their own summary between markers, or sign it; it is not the author's description.
_BOT_BLOCK = LazyPattern(
    r"<!--\s*(?:CURSOR_SUMMARY|This is an auto-generated comment)[^>]{0,200}-->.*?"
    r"(?:<!--\s*/?\s*(?:CURSOR_SUMMARY|end of auto-generated comment)[^>]{0,200}-->|\Z)",
    re.DOTALL | re.IGNORECASE,
)
# vLLM's template ends in a checklist inside <details>; other templates do the same.
# At most 8 tags inside the summary: a checklist's has one or two, and the bound keeps crafted text (thousands of
# unclosed <details><summary>) to one pass rather than one pass per tag.
_CHECKLIST_DETAILS = LazyPattern(
    r"<details>\s{0,20}<summary>[^<]{0,200}(?:<[^<>]{0,20}>[^<]{0,200}){0,8}</summary>.*?(?:</details>|\Z)", re.DOTALL | re.IGNORECASE
)
_CHECKLIST_SUMMARY = LazyPattern(r"checklist|essential elements", re.IGNORECASE)
# Everything after this line is removed from vLLM PRs by a GitHub Action; imported bodies may still hold it.
_CUT_BELOW = LazyPattern(r"^\**\s*BEFORE SUBMITTING, PLEASE READ.*$", re.IGNORECASE | re.MULTILINE | re.DOTALL)
# Lines of templates and bookkeeping, matched on the stripped line.
_BOILERPLATE_LINE = LazyPattern(
    r"(?:PLEASE )?FILL IN THE PR DESCRIPTION|FIX #xxxx|(?:signed-off-by|co-authored-by|reviewed-by|pulled by|"
    r"differential revision|reviewers?|subscribers|tags|ghstack-source-id|pull request resolved):|"
    r"[-*+] ?\[[ xX]\] ?(?:The purpose of the PR|The test plan|The test results|\(Optional\))|/?cc\b[^@]{0,3}@|@[\w-]{1,39}[:,]? @|[-*_]{3,}$|.{0,4}generated (?:with|by) \[?(?:claude|codex|cursor|copilot)|"
    r"stack from \[?ghstack|\* (?:__->__ )?#\d+$|(?:<sup>)?written by \[?cursor|> \[!(?:note|tip|important|warning|caution)\]$",
    re.IGNORECASE,
)
# The author's own checklist items keep their text: "- [x] `pytest ...`" -> "- `pytest ...`".
_CHECKBOX = LazyPattern(r"^(\s*[-*+] )\[[ xX]\] ?")
_TEMPLATE_PHRASE = "essential elements of an effective pr description"
_HTML_TAG = LazyPattern(r"</?(?:details|summary|br|p|div|span|sub|sup|img|a|b|i|em|strong|code|pre|h\d|ul|ol|li)\b[^<>]{0,300}>", re.I)

_ISSUE_REF = r"(?:[\w.-]+/[\w.-]+)?#\d+|https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+"
_CLOSING = LazyPattern(
    rf"[-*]? ?\**(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|addresses)\**:?\**\s?((?:{_ISSUE_REF})(?:,? (?:and )?(?:{_ISSUE_REF}))*)\.?",
    re.IGNORECASE,
)
_REF_NUMBER = LazyPattern(r"#(\d+)$|/(\d+)$")

_ATX_HEADING = LazyPattern(r" {0,3}#{1,6}[ \t]+(.*)")
_BOLD_HEADING = LazyPattern(r" {0,3}(?:\*\*([^*]{2,60})\*\*|__([^_]{2,60})__):?")
# "Summary:", "Test Plan:" on a line of their own or before their text (Phabricator and ghstack bodies).
_LABEL_LINE = LazyPattern(
    r"(summary|purpose|motivation|test plan|test results?|testing|benchmarks?|changes|notes?|follow[- ]?ups?|"
    r"risks?|breaking changes?)\s*:\s*(.*)",
    re.IGNORECASE,
)

# What each heading holds; checked in order, the first that matches names the section.
_ROLES: tuple[tuple[str, LazyPattern], ...] = tuple(
    (role, LazyPattern(pattern, re.IGNORECASE))
    for role, pattern in (
        ("skip", r"documentation update|release notes?|checklist|screenshots?|^logs?$|reviewers|how to (?:use|run)|"
                 r"^cc$|^optional\b|essential elements|reproduc"),
        ("results", r"test(?:ing)?\s*results?|^results?\b|benchmark|accuracy|performance|evaluation|e2e|before|after|numbers"),
        ("plan", r"test(?:ing)?\s*plan|how (?:was|is) (?:this|it) tested|^tests?$|^testing$|verification|validation"),
        ("risks", r"risks?|breaking|caveats?|limitations?|known issues?|backward|compatib|migration"),
        ("follow", r"follow[- ]?ups?|future work|todo|next steps?|out of scope"),
        ("notes", r"notes?|reviewers? should|for reviewers|discussion|design|alternatives?"),
        ("changes", r"changes|what (?:this pr )?(?:does|changed)|modifications|implementation|approach|details|how"),
        ("purpose", r"purpose|summary|motivation|description|overview|what|why|background|context|problem|"
                    r"root cause|fix|solution|tl;?dr|issue"),
    )
)


@dataclass(frozen=True)
class Section:
    heading: str  # "" for text before the first heading
    role: str  # purpose, changes, plan, results, risks, follow, notes, skip, or "" when the heading says nothing
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Body:
    sections: tuple[Section, ...]
    closes: tuple[str, ...]  # issues the description says it fixes, as "#123"

    def lines(self, *roles: str) -> list[str]:
        return [line for section in self.sections if section.role in roles for line in section.lines]

    @property
    def text(self) -> str:
        return "\n".join(line for section in self.sections if section.role != "skip" for line in section.lines)


# GitHub's limit on a PR description; anything longer did not come from GitHub.
MAX_BODY_CHARS = 65536


def clean_body(body: str) -> str:
    """The PR description without template boilerplate: comments, checklists, bot stamps, sign-offs,
    the "essential elements" block. Headings and text are kept; this is also what a model is shown."""
    text = (body or "").replace("\r\n", "\n").replace("\r", "\n")[:MAX_BODY_CHARS]
    text = _BOT_BLOCK.sub("", text)
    text = _HTML_COMMENT.sub("", text)
    text = _CHECKLIST_DETAILS.sub(lambda m: "" if _CHECKLIST_SUMMARY.search(m.group(0)[:300]) else m.group(0), text)
    text = _CUT_BELOW.sub("", text)
    text = "\n".join(_CHECKBOX.sub(r"\1", line) for line in text.split("\n") if not _boilerplate(line))
    text = _HTML_TAG.sub("", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _boilerplate(line: str) -> bool:
    stripped = line.strip().lstrip(">").strip()
    return bool(_BOILERPLATE_LINE.match(stripped)) or _TEMPLATE_PHRASE in stripped.lower()


def _heading(line: str) -> tuple[str, str] | None:
    """A heading line's text and what follows it on the line ("Summary: Adds X" -> ("Summary", "Adds X"))."""
    if len(line) > 200:
        return None
    atx = _ATX_HEADING.fullmatch(line.rstrip())
    if atx:
        return atx.group(1).rstrip("#").strip(), ""
    bold = _BOLD_HEADING.fullmatch(line.rstrip())
    if bold:
        return (bold.group(1) or bold.group(2)).strip(), ""
    label = _LABEL_LINE.fullmatch(line.strip().strip("*_"))
    return (label.group(1), label.group(2).strip("*_ ")) if label else None


def role_of(heading: str) -> str:
    for role, pattern in _ROLES:
        if pattern.search(heading):
            return role
    return ""


def _split(text: str) -> list[Section]:
    sections: list[Section] = []
    heading = ""
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        found = _heading(line)
        # A template heading inside a code block means the author never closed the block.
        if fenced and found and role_of(found[0]) and _ATX_HEADING.fullmatch(line.rstrip()):
            fenced = False
        if is_fence(line):
            fenced = not fenced
        elif not fenced and found is not None:
            sections.append(Section(heading, role_of(heading), tuple(lines)))
            heading, lines = inline(found[0]).strip(" :"), [found[1]] if found[1] else []
            continue
        lines.append(line)
    sections.append(Section(heading, role_of(heading), tuple(lines)))
    return [section for section in sections if any(line.strip() for line in section.lines)]


def refs(text: str) -> list[str]:
    """Issue/PR references in the text as "#123"."""
    found = []
    for ref in re.findall(_ISSUE_REF, text):
        number = _REF_NUMBER.search(ref)
        label = f"#{number.group(1) or number.group(2)}" if number else ref
        if label not in found:
            found.append(label)
    return found


def _closing_refs(body: str) -> tuple[list[str], str]:
    """The issues that lines like "FIX #123" or "Closes owner/repo#4" close, and the body without those lines."""
    closes: list[str] = []
    kept = []
    for line in body.split("\n"):
        closing = _CLOSING.fullmatch(line.strip()) if len(line) <= 300 else None
        if closing:
            closes += [ref for ref in refs(closing.group(1)) if ref not in closes]
        else:
            kept.append(line)
    return closes, "\n".join(kept)


def parse_body(body: str) -> Body:
    closes, text = _closing_refs(clean_body(body))
    return Body(tuple(_split(text)), tuple(closes))


def paragraphs(lines: list[str] | tuple[str, ...]) -> list[list[str]]:
    """Blocks of prose lines; code blocks, tables and quotes are left out."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in lines:
        if is_fence(line):
            fenced = not fenced
            blocks.append([])
            continue
        stripped = line.strip()
        if fenced or not stripped or stripped.startswith(("|", ">")):
            blocks.append([])
            continue
        blocks[-1].append(stripped)
    return [block for block in blocks if block]


def code_lines(lines: list[str] | tuple[str, ...]) -> list[str]:
    """The lines inside code blocks (an unclosed block runs to the end)."""
    inside: list[str] = []
    fenced = False
    for line in lines:
        if is_fence(line):
            fenced = not fenced
        elif fenced and line.strip():
            inside.append(line.strip())
    return inside


def tables(lines: list[str] | tuple[str, ...]) -> list[list[list[str]]]:
    """Markdown tables as rows of cells, the separator row left out; also inside code blocks (lm_eval prints them)."""
    found: list[list[list[str]]] = [[]]
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("|") and stripped.count("|") >= 3:
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if not all(set(cell) <= set(":- ") for cell in cells):
                found[-1].append(cells)
        elif found[-1]:
            found.append([])
    return [table for table in found if len(table) >= 2]
