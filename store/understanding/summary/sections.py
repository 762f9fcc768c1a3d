"""The four sections written from a parsed description, the changed files and the areas."""
from __future__ import annotations

import re

from store.model import PullRequest, Summary
from store.text.patterns import LazyPattern
from store.text.prose import join_words, sentence, sentences, stem, words
from store.understanding.areas import classify
from store.understanding.summary.body import Body, code_lines, paragraphs, parse_body, refs, tables
from store.understanding.summary.components import SUPPORT, components
from store.understanding.summary.kind import trivial_reason
from store.understanding.summary.signals import risk_text, risks
from store.understanding.summary.titles import PREFIX, title_sentence
from store.understanding.summary.verbs import action
from store.understanding.summary.wording import as_statement, fit, inline, lower_first, statements, unlabel

WHAT_CHANGED_CHARS = 480
INSIGHTS_CHARS = 560
NOTHING_RECORDED = "The description records no tests, measurements or follow-ups."
NO_DESCRIPTION = "No PR description is stored, so this summary comes from the title and the changed files."

_LIST_ITEM = LazyPattern(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A paragraph this short says too little to stand for the change ("Some small code cleanup.").
MIN_WORDS = 5
MAX_ITEMS = 4


# ---------------------------------------------------------------- what changed


def _items(block: list[str]) -> tuple[str, list[str]]:
    intro = " ".join(inline(line) for line in block if not _LIST_ITEM.match(line))
    items = [unlabel(inline(_LIST_ITEM.sub("", line))).rstrip(".;") for line in block if _LIST_ITEM.match(line)]
    return intro, [item for item in items if item]


def _list_sentence(intro: str, items: list[str]) -> str:
    """A list of changes as one sentence about the PR."""
    shown = items[:MAX_ITEMS]
    more = f" and {len(items) - MAX_ITEMS} more changes" if len(items) > MAX_ITEMS else ""
    if intro.endswith(":"):
        lead = as_statement(intro[:-1])
        if lead:
            return sentence(lead[:-1] + ": " + "; ".join(lower_first(item) for item in shown) + more)
    actions = [action(item) for item in shown]
    if all(actions):
        return sentence("This PR " + join_words([done for done in actions if done]) + more)
    return sentence("The changes cover " + join_words([lower_first(item) for item in shown]) + more)


def _blocks(body: Body, roles: tuple[str, ...], actor: str = "") -> list[tuple[str, bool]]:
    """(text, is a list) for each paragraph of the sections in `roles`, in order; commands left out."""
    found = []
    for section in body.sections:
        if section.role not in roles:
            continue
        for block in paragraphs(section.lines):
            intro, items = _items([line for line in block if not _only_command(line)])
            if items:
                found.append((_list_sentence(intro, items), True))
            else:
                found.append((" ".join(statements(intro, actor)), False))
    return [(text, listed) for text, listed in found if text]


def _weak(text: str) -> bool:
    return len(words(_ABOUT_THE_PR.sub("", text))) < MIN_WORDS


def _purpose(title: str, body: Body) -> list[str]:
    """The purpose, then the list of changes where the purpose does not already hold one."""
    blocks = _blocks(body, ("purpose", "")) + _blocks(body, ("changes",))
    prose = [text for text, listed in blocks if not listed and not _weak(text) and not _restates(title, text)]
    listed = [text for text, listed in blocks if listed]
    chosen = prose[:1] + listed[:1]
    if not chosen:
        chosen = [text for text, _ in blocks[:1]] if blocks and not _weak(blocks[0][0]) else []
    return chosen


_TOKEN = LazyPattern(r"[A-Za-z][A-Za-z0-9]*")
_ABOUT_THE_PR = LazyPattern(r"^This (?:PR|pull request|change|patch|commit)\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    return {stem(word) for word in _TOKEN.findall(text.lower())}


def _overlaps(title: str, paragraph: str) -> bool:
    """Whether the paragraph already says what the title says (nearly all its words but the shortest)."""
    title_words = {stem for stem in _stems(PREFIX.sub("", title)) if len(stem) > 2}
    # A paragraph that opens by saying what the PR does needs less agreement to stand alone.
    share = 0.5 if _ABOUT_THE_PR.match(paragraph) else 0.8
    return bool(title_words) and len(title_words & _stems(paragraph)) >= share * len(title_words)


def _restates(title: str, paragraph: str) -> bool:
    """A paragraph whose words are all the title's adds nothing ("Fixes a few typos.")."""
    said = {stem for stem in _stems(_ABOUT_THE_PR.sub("", paragraph)) if len(stem) > 2}
    return said <= _stems(PREFIX.sub("", title))


def what_changed(pr: PullRequest, body: Body) -> str:
    chosen = _purpose(pr.title, body)
    lead = [] if chosen and _overlaps(pr.title, chosen[0]) else [title_sentence(pr.title)]
    text = fit(lead + [part for text in chosen for part in sentences(text)], WHAT_CHANGED_CHARS)
    missing = [ref for ref in body.closes if ref not in text]
    return text + (f" It resolves {join_words(missing)}." if missing else "")


# ---------------------------------------------------------------- technical impact

_SUPPORT_NAMES = {"tests": "its tests", "documentation": "the documentation", "examples": "examples", "CI configuration": "CI configuration"}
MAX_COMPONENTS = 4


def impact(pr: PullRequest, areas: list[str]) -> str:
    in_areas = f"It belongs to the {join_words(areas)} {'area' if len(areas) == 1 else 'areas'}." if areas else ""
    if not pr.files:
        return " ".join(part for part in ("The store holds no file list for this PR, so its reach is unknown.", in_areas) if part)
    names = components(pr.files)
    code = [name for name in names if name not in SUPPORT]
    support = [name for name in names if name in SUPPORT]
    shown = code[:MAX_COMPONENTS] + ([f"{len(code) - MAX_COMPONENTS} other components"] if len(code) > MAX_COMPONENTS else [])
    if shown:
        touched = f"It touches {join_words(shown + [_SUPPORT_NAMES[name] for name in support])}"
    else:
        touched = f"It only touches {join_words(support)}"
    listed = f", among the {len(pr.files)} of its {pr.file_count} files that are stored" if pr.file_count > len(pr.files) else ""
    return " ".join(part for part in (sentence(touched + listed), in_areas) if part)


# ---------------------------------------------------------------- key insights

_MEASURED = LazyPattern(
    r"\d[\d.,]*\s?(?:%|x\b|×|ms\b|s\b|sec\b|tok/s|tokens?/s|req/s|requests?/s|gb\b|gib\b|mb\b|us\b|µs\b)|"
    r"(?:throughput|latency|speed-?up|accuracy|ttft|tpot|itl|exact_match|gsm8k|mmlu)\b[^.\n]{0,40}\d",
    re.I,
)
_FOLLOW = LazyPattern(r"\bfollow[- ]?ups?\b|\bfuture (?:pr|work)\b|\blater pr\b|\bnext (?:pr|step)\b|\bTODO\b|\bseparate pr\b", re.I)
_BUILDS_ON = LazyPattern(
    r"\b(?:follow[- ]?up (?:to|of|on|for)|part of|split (?:out )?(?:from|of)|depends on|builds on|"
    r"related(?: to)?:?|continuation of|supersedes)\s+(?:PR\s+)?((?:[\w.-]+/[\w.-]+)?#\d+|https?://github\.com/\S+/(?:issues|pull)/\d+)",
    re.I,
)
_SERIES = LazyPattern(r"\[(\d+)\s*/\s*(\d+|n)\]", re.I)
_COMMAND = LazyPattern(r"^(?:pytest|python3?|vllm|lm_eval|torchrun|bash|sh|uv|pip|make|docker|[A-Z_]+=\S+)(?=\s|$)")
_VALUE_HEADER = LazyPattern(r"^(?:value|score|accuracy|throughput|latency|speed-?up|result)s?\b", re.I)
# What tells a command line from a sentence that starts with a tool's name ("lm_eval gsm8k on X: 0.78").
_ARGUMENTS = LazyPattern(r"\s(?:-{1,2}\w|\S*/|\S+\.py\b)")
_PROSE = LazyPattern(r"[.:] |\s(?:on|with|and|the)\s")
_CODE_SPAN = LazyPattern(r"`([^`]{3,200})`")
_NUMBER = LazyPattern(r"^[~<>≈+-]?\d[\d.,]*\s?(?:%|x|×|ms|s|tok/s)?$")
MAX_MEASURES = 2


def _table_sentence(table: list[list[str]]) -> str | None:
    """ "The results table gives throughput (tok/s) of 1520 for main and 1610 for this PR." """
    header, rows = table[0], [row for row in table[1:] if len(row) == len(table[0])]
    columns = [i for i, name in enumerate(header) if i and all(_NUMBER.match(row[i]) for row in rows if row[i])]
    if not rows or not columns:
        return None
    value = next((i for i in columns if _VALUE_HEADER.match(header[i])), columns[0])
    metric = next((i for i, name in enumerate(header) if name.lower() == "metric"), None)
    name = rows[0][metric] if metric is not None else header[value]
    labelled = [(inline(row[0]) or "-", row[value]) for row in rows[:4] if row[value]]
    if not labelled or not name:
        return None
    listed = join_words([f"{number} for {label}" for label, number in labelled])
    second = [i for i in columns if i != value][:1] if len(columns) == 2 else []
    beside = "; " + inline(header[second[0]]) + " " + join_words([row[second[0]] for row in rows[:4]]) if second else ""
    return sentence(f"The results table gives {inline(name)} {listed}{beside}")


def _measurements(body: Body) -> list[str]:
    found: list[str] = []
    for table in tables(body.lines("results", "plan", "", "purpose")):
        said = _table_sentence(table)
        if said:
            found.append(said)
    for text, _ in _blocks(body, ("results", "purpose", "", "changes", "notes", "plan"), "The author"):
        found += [part for part in sentences(text) if _MEASURED.search(part)]
    for line in code_lines(body.lines("results")):
        if _MEASURED.search(line) and ":" in line and len(line) <= 100 and "`" not in line:
            found.append(f"The benchmark output reports `{' '.join(line.split())}`.")
    return list(dict.fromkeys(found))[:MAX_MEASURES]


def _command(line: str) -> str | None:
    """The shell command a line of a test plan holds, alone or quoted in it."""
    stripped = _LIST_ITEM.sub("", line).strip()
    spans = [span.strip() for span in _CODE_SPAN.findall(stripped)]
    found = next((span for span in spans if _COMMAND.match(span)), None)
    if found is None and not spans and _COMMAND.match(stripped) and _ARGUMENTS.search(stripped) and not _PROSE.search(stripped):
        found = stripped
    return " ".join(found.split())[:120] if found else None


def _only_command(line: str) -> bool:
    command = _command(line)
    return command is not None and " ".join(_LIST_ITEM.sub("", line).strip("` ").split()) == command


def _tests(body: Body) -> list[str]:
    lines = body.lines("plan")
    for line in code_lines(lines) + list(lines):
        command = _command(line) if not line.strip().startswith("#") else None
        if command:
            return [f"It was tested with `{command}`."]
    planned = [text for text, _ in _blocks(body, ("plan",), "The author")]
    results = [text for text, _ in _blocks(body, ("results",), "The author") if not _MEASURED.search(text)]
    return [part for text in (planned[:1] + results[:1]) for part in sentences(text)[:1]]


def _follow_ups(pr: PullRequest, body: Body) -> list[str]:
    found = []
    series = _SERIES.search(pr.title)
    if series:
        total = "" if series[2].lower() == "n" else f" of {series[2]}"
        found.append(f"It is part {series[1]}{total} of a series of changes.")
    builds_on = [ref for match in _BUILDS_ON.finditer(body.text) for ref in refs(match.group(1))]
    if builds_on:
        found.append(f"It builds on {join_words(list(dict.fromkeys(builds_on)))}.")
    named = [text for text, _ in _blocks(body, ("follow",))][:1]
    named += [part for text, _ in _blocks(body, ("", "purpose", "changes", "notes", "results")) for part in sentences(text)
              if _FOLLOW.search(part) and not _BUILDS_ON.search(part)]
    return found + [part for text in named[:1] for part in sentences(text)[:1]]


def insights(pr: PullRequest, body: Body, trivial: str | None) -> str:
    notes = [text for text, _ in _blocks(body, ("notes",))][:1]
    parts = _follow_ups(pr, body) + _measurements(body) + _tests(body) + [s for text in notes for s in sentences(text)[:1]]
    if trivial:
        parts.append(f"It is marked trivial because {trivial}.")
    if not pr.body.strip():
        parts.append(NO_DESCRIPTION)
    elif not parts:
        parts.append(NOTHING_RECORDED)
    return fit(list(dict.fromkeys(parts)), INSIGHTS_CHARS)



def extractive_summary(pr: PullRequest) -> Summary:
    """The four sections from the PR's own data; "What changed" is never empty."""
    body = parse_body(pr.body)
    areas = pr.areas or classify(pr.title, pr.files, pr.labels, pr.repo)
    return Summary(
        what_changed=what_changed(pr, body),
        impact=impact(pr, areas),
        risks=risk_text(risks(pr, body, areas)),
        insights=insights(pr, body, trivial_reason(pr)),
        source="extractive",
    )
