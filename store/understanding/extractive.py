"""Summaries and types without a model: built from the PR's title, description, files and size.

This is what most users meet first, so every section is written as plain,
well-formed sentences, and nothing is claimed that the PR data does not show.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from store.model import PullRequest, Summary
from store.text.patterns import LazyPattern
from store.text.prose import is_fence, join_words, lead_and_rest, plural, sentence, sentences
from store.text.prose import words as english_words
from store.understanding.areas import classify, title_tags
from store.understanding.paths import KIND_NOUNS, kinds

# ---------------------------------------------------------------- PR bodies

_HTML_COMMENT = LazyPattern(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# vLLM's template ends in a checklist inside <details>; other templates do the same.
_CHECKLIST_DETAILS = LazyPattern(
    r"<details>\s{0,20}<summary>[^<]{0,200}</summary>.*?(?:</details>|\Z)", re.DOTALL | re.IGNORECASE
)
_CHECKLIST_SUMMARY = LazyPattern(r"checklist|essential elements", re.IGNORECASE)
# Everything after this line is removed from vLLM PRs by a GitHub Action; imported bodies may still hold it.
_CUT_BELOW = LazyPattern(r"^\**\s*BEFORE SUBMITTING, PLEASE READ.*$", re.IGNORECASE | re.MULTILINE | re.DOTALL)
# Lines of templates and bookkeeping, matched on the stripped line.
_BOILERPLATE_LINE = LazyPattern(
    r"PLEASE FILL IN THE PR DESCRIPTION|(?:signed-off-by|co-authored-by):|[-*+] ?\[[ xX]\]|/?cc\b[^@]{0,3}@|"
    r"@[\w-]{1,39}[:,]? @|[-*_]{3,}$",
    re.IGNORECASE,
)
_TEMPLATE_PHRASE = "essential elements of an effective pr description"
_HTML_TAG = LazyPattern(r"</?(?:details|summary|br|p|div|span|sub|sup|img|a|b|i|em|strong|code|pre)\b[^<>]{0,300}>", re.I)

_ISSUE_REF = r"(?:[\w.-]+/[\w.-]+)?#\d+|https?://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+"
_CLOSING = LazyPattern(
    rf"[-*]? ?\**(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|addresses)\**:?\**\s?((?:{_ISSUE_REF})(?:,? (?:and )?(?:{_ISSUE_REF}))*)\.?",
    re.IGNORECASE,
)
_FOLLOW_UP = LazyPattern(
    rf"\b(?:follow[- ]?up (?:to|of|on|for)|part of|split (?:out )?(?:from|of)|depends on|builds on|"
    rf"related(?: to)?:?|continuation of|supersedes)\s+(?:PR\s+)?({_ISSUE_REF})",
    re.IGNORECASE,
)
_REF_NUMBER = LazyPattern(r"#(\d+)$|/(\d+)$")

_ATX_HEADING = LazyPattern(r" {0,3}#{1,6}[ \t]+(.*)")
_BOLD_HEADING = LazyPattern(r" {0,3}(?:\*\*([^*]{2,60})\*\*|__([^_]{2,60})__):?")
_WHAT_HEADINGS = LazyPattern(
    r"purpose|summary|motivation|description|overview|what|why|changes?|background|context|problem|details|tl;?dr",
    re.IGNORECASE,
)
_TEST_PLAN_HEADINGS = LazyPattern(r"test(?:ing)?\s*plan|how (?:was|is) (?:this|it) tested|testing", re.IGNORECASE)
_TEST_RESULT_HEADINGS = LazyPattern(r"test\s*results?|results?|benchmarks?|accuracy|performance", re.IGNORECASE)
_SKIP_HEADINGS = LazyPattern(
    r"test|result|documentation update|release notes?|checklist|benchmark|accuracy|screenshots?|logs?|"
    r"before|after|reproduc|how to|optional",
    re.IGNORECASE,
)
_PLACEHOLDER = LazyPattern(
    r"^(?:n/?a|none|tbd|todo|wip|as (?:the )?title(?: says)?|see (?:the )?title|title says it all|"
    r"same as (?:the )?title|self[- ]explanatory|fix(?:es)? (?:a |the )?bug|minor fix(?:es)?|\.+|-+)\W*$",
    re.IGNORECASE,
)
_LIST_ITEM = LazyPattern(r"^\s*(?:[-*+]|\d+[.)])\s+")
_MD_IMAGE = LazyPattern(r"!\[[^\[\]]{0,300}\]\([^()\s]{0,1000}\)")
_MD_LINK = LazyPattern(r"\[([^\[\]]{1,300})\]\([^()\s]{0,1000}(?:\([^()\s]{0,200}\)[^()\s]{0,200})?\)")
_BARE_URL_IN_PARENS = LazyPattern(r" ?\( ?https?://[^\s()]{1,1000} ?\)")
_MD_BOLD = LazyPattern(r"\*\*([^*\n]{1,300})\*\*|__([^_\n]{1,300})__")
_GITHUB_URL = LazyPattern(r"https?://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)(?:[#?][^\s)]*)?")

WHAT_CHANGED_CHARS = 480
# GitHub's limit on a PR description; anything longer did not come from GitHub.
MAX_BODY_CHARS = 65536


@dataclass
class _Section:
    heading: str  # "" for text before the first heading
    lines: list[str]


def clean_body(body: str) -> str:
    """The PR description without template boilerplate: comments, checklists, sign-offs, the
    "essential elements" block. Headings and text are kept; this is also what a model is shown."""
    text = (body or "").replace("\r\n", "\n").replace("\r", "\n")
    text = _HTML_COMMENT.sub("", text[:MAX_BODY_CHARS])
    text = _CHECKLIST_DETAILS.sub(lambda m: "" if _CHECKLIST_SUMMARY.search(m.group(0)[:300]) else m.group(0), text)
    text = _CUT_BELOW.sub("", text)
    text = "\n".join(line for line in text.split("\n") if not _boilerplate(line))
    text = _HTML_TAG.sub("", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _boilerplate(line: str) -> bool:
    stripped = line.strip()
    return bool(_BOILERPLATE_LINE.match(stripped)) or _TEMPLATE_PHRASE in stripped.lower()


def _heading(line: str) -> str | None:
    """The text of a Markdown heading line ("## Purpose", "**Purpose**"), else None."""
    if len(line) > 200:
        return None
    atx = _ATX_HEADING.fullmatch(line.rstrip())
    if atx:
        return atx.group(1).rstrip("#").strip()
    bold = _BOLD_HEADING.fullmatch(line.rstrip())
    return (bold.group(1) or bold.group(2)).strip() if bold else None


def _sections(text: str) -> list[_Section]:
    sections = [_Section("", [])]
    fenced = False
    for line in text.split("\n"):
        if is_fence(line):
            fenced = not fenced
            sections[-1].lines.append(line)
            continue
        heading = None if fenced else _heading(line)
        if heading is not None:
            sections.append(_Section(_inline(heading).strip(" :"), []))
        else:
            sections[-1].lines.append(line)
    return sections


def _paragraphs(lines: list[str]) -> list[list[str]]:
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


def _inline(text: str) -> str:
    """Markdown inline syntax reduced to the words a reader sees."""
    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _GITHUB_URL.sub(lambda m: f"#{m.group(2)}", text)
    text = _BARE_URL_IN_PARENS.sub("", text)
    text = _MD_BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    return " ".join(text.split())


def _meaningful(text: str) -> bool:
    words = english_words(text)
    placeholder = len(text) <= 60 and _PLACEHOLDER.match(text)
    return len(words) >= 3 and sum(len(word) for word in words) >= 15 and not placeholder


def _prose(block: list[str]) -> str:
    """A paragraph as sentences; a list becomes one sentence per item (or a ;-list after a colon)."""
    intro = [_inline(line) for line in block if not _LIST_ITEM.match(line)]
    items = [_inline(_LIST_ITEM.sub("", line)) for line in block if _LIST_ITEM.match(line)]
    items = [item for item in items if item][:4]
    if not items:
        return _imperative_to_statement(sentence(" ".join(intro)))
    if intro and intro[-1].endswith(":"):
        listed = "; ".join(_lower_first(item.rstrip(".;")) for item in items)
        return sentence(" ".join(intro) + " " + listed)
    actions = [_action(item.rstrip(".;")) for item in items]
    if not intro and all(actions):
        return sentence("This PR " + join_words([action for action in actions if action]))
    return " ".join(sentence(part) for part in [" ".join(intro), *items] if part)


_NOUN_USE = frozenset({"for", "of", "to", "is", "was", "in", "on", "with", "that", "which"})


def _imperative_to_statement(text: str) -> str:
    """ "Add Foo, a new model." -> "This PR adds Foo, a new model." (also "Adds"/"Added"); else unchanged.

    Only the first sentence, and not where the verb is used as a noun ("Fix for the crash...").
    """
    first, rest = lead_and_rest(text)
    words = first.split(" ", 2)
    if len(words) < 2 or words[1].lower() in _NOUN_USE:
        return text
    action = _action(first)
    if not action:
        return text
    return " ".join(part for part in (f"This PR {action}", rest) if part)


def _first_paragraph(sections: list[_Section]) -> str:
    preferred = [s for s in sections if _WHAT_HEADINGS.search(s.heading) and not _SKIP_HEADINGS.search(s.heading)]
    others = [s for s in sections if s not in preferred and not _SKIP_HEADINGS.search(s.heading)]
    for section in preferred + others:
        for block in _paragraphs(section.lines):
            text = _prose(block)
            if _meaningful(text):
                return text
    return ""


def _section_text(sections: list[_Section], heading: LazyPattern) -> list[str]:
    return [line for s in sections if heading.search(s.heading) for line in s.lines if line.strip()]


# ---------------------------------------------------------------- sentences


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower():
        return text[0].lower() + text[1:]
    return text


def _clip(text: str, limit: int) -> str:
    """Whole sentences up to `limit` characters; a first sentence longer than that is cut at a word."""
    parts = sentences(text) or [""]
    kept = parts[0]
    for part in parts[1:]:
        if len(kept) + 1 + len(part) > limit:
            break
        kept += " " + part
    if len(kept) > limit:
        kept = kept[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
    return kept


def _refs(text: str) -> list[str]:
    """Issue/PR references in a matched group as "#123"."""
    found = []
    for ref in re.findall(_ISSUE_REF, text):
        number = _REF_NUMBER.search(ref)
        label = f"#{number.group(1) or number.group(2)}" if number else ref
        if label not in found:
            found.append(label)
    return found


# ---------------------------------------------------------------- titles

# Imperative verbs PR titles start with; anything else is treated as a noun phrase.
_VERBS = frozenset(
    ["add", "adjust", "adopt", "align", "allow", "apply", "avoid", "bump", "cache", "change", "clarify", "clean", "cleanup", "consolidate", "correct", "deduplicate", "default", "defer", "delete", "deprecate", "disable", "document", "drop", "dedupe", "enable", "enforce", "ensure", "expose", "extend", "fix", "gate", "guard", "handle", "harden", "hide", "ignore", "implement", "import", "improve", "include", "increase", "initialize", "integrate", "introduce", "invalidate", "keep", "limit", "log", "make", "mark", "migrate", "move", "optimize", "override", "pass", "patch", "pin", "prefer", "prepack", "prevent", "propagate", "raise", "read", "record", "reduce", "refactor", "register", "reject", "relax", "remove", "rename", "reorder", "replace", "reset", "resolve", "respect", "restore", "restrict", "return", "reuse", "revert", "rewrite", "run", "set", "share", "show", "simplify", "skip", "sort", "speed", "split", "standardize", "stop", "streamline", "support", "switch", "sync", "tune", "turn", "unify", "unpin", "update", "upgrade", "use", "validate", "warn", "wrap", "exclude", "port", "accept", "emit", "check", "compute", "convert", "create", "detect", "load", "parse", "preserve", "print", "refine", "release", "rework", "save", "select", "silence", "store", "tweak", "unblock", "retry", "reorganize", "relocate", "prune", "polish", "normalize", "isolate", "inline", "infer", "hoist", "format", "filter", "fetch", "extract", "explain", "escape", "downgrade", "decouple", "customize", "configure", "cap", "call", "bound", "block", "batch", "bypass", "build", "allocate", "abort", "fuse", "free", "gather", "generalize", "reland", "land", "pad", "quantize", "shard", "offload", "overlap", "prefetch", "profile", "schedule", "stream", "tidy", "trim", "unskip", "vectorize", "wire", "truncate", "clamp", "count", "drain", "dump", "encode", "decode", "evict", "expand", "flatten", "flush", "forward", "instantiate", "launch", "map", "measure", "monitor", "pack", "pick", "plumb", "populate", "preprocess", "refresh", "reload", "remap", "render", "replay", "report", "resize", "reshape", "retain", "route", "sample", "scale", "send", "serve", "slice", "spawn", "start", "submit", "swap", "toggle", "track", "trigger", "unwrap", "upload", "verify", "wait", "write"]
)
_FINITE = LazyPattern(r"\b(?:should|must|is|are|was|were|will|can|cannot|now|no longer|does|do|doesn't|don't)\b", re.I)
_REVERT_QUOTED = LazyPattern(r'^\s*revert\s*"(?P<inner>.*?)(?:\s*\((?P<ref>#\d+)\))?"\s*(?:\((?P<self>#\d+)\))?\s*$', re.I)
_REVERT_REF = LazyPattern(r"^\s*revert\s+(?:pr\s+)?(?P<ref>#\d+)\b(?P<rest>.*)$", re.I)
_REVERT = LazyPattern(r"^\s*revert\b", re.I)
_PREFIX = LazyPattern(
    r"^\s*(?:(?:\[[^\[\]]*\][\s:]*)+|(?:feat|fix|docs|style|refactor|perf|test|build|ci|chore)(?:\([^)]*\))?!?:\s*)",
    re.I,
)
_SERIES = LazyPattern(r"\[(\d+)\s*/\s*(\d+|n)\]", re.I)
_KIND_BY_TAG = (
    ("bugfix", "bug fix"), ("perf", "performance change"), ("performance", "performance change"),
    ("doc", "documentation change"), ("feature", "feature"), ("refactor", "refactor"),
    ("model", "model change"), ("newmodel", "new model"), ("kernel", "kernel change"),
    ("ci", "CI change"), ("cibuild", "CI and build change"), ("build", "build change"), ("test", "test change"),
    ("frontend", "frontend change"), ("core", "core change"), ("hardware", "hardware support change"),
)


def _third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _kind(title: str) -> str:
    tags = set(title_tags(title))
    for tag, noun in _KIND_BY_TAG:
        if tag in tags:
            return noun
    return "change"


def is_revert(pr: PullRequest) -> bool:
    return bool(_REVERT.match(pr.title))


def title_sentence(title: str) -> str:
    """The title as a sentence: "[Perf] Optimize X" -> "This PR optimizes X."."""
    quoted = _REVERT_QUOTED.match(title)
    if quoted:
        inner = _PREFIX.sub("", quoted["inner"]).strip() or quoted["inner"]
        ref = f" {quoted['ref']}," if quoted["ref"] else ""
        return f"This PR reverts{ref} \u201c{inner.rstrip('.')}\u201d."
    by_ref = _REVERT_REF.match(title)
    if by_ref:
        rest = by_ref["rest"].strip(" :-")
        return sentence(f"This PR reverts {by_ref['ref']}" + (f" ({rest})" if rest else ""))
    rest = _PREFIX.sub("", title).strip().rstrip(".") or title.strip().rstrip(".")
    action = _action(rest)
    if action and " " in action:
        return sentence(f"This PR {action}")
    scoped = _SCOPED.match(rest)
    if scoped and " " in (_action(scoped["rest"]) or ""):
        return f"For {scoped['scope']}, this PR {_action(scoped['rest'])}."
    if _FINITE.search(rest):
        return sentence(rest)
    if " " not in rest:
        return f"This {_kind(title)} is titled \u201c{rest}\u201d."
    return sentence(f"This {_kind(title)} concerns {rest}")


_AND_VERB = LazyPattern(r"(\b(?:and|,)\s+)([A-Za-z]+)\b")
_SCOPED = LazyPattern(r"^(?P<scope>[^:]{2,40}):\s+(?P<rest>.+)$")


def _base_verb(word: str) -> str | None:
    """The verb a title or sentence starts with, in its base form: "Add", "Adds", "Added", "Adding" -> "add"."""
    word = word.lower()
    if word in _VERBS:
        return word
    candidates: tuple[str, ...] = ()
    if word.endswith("ing"):
        candidates = (word[:-3], word[:-3] + "e", word[:-4])
    elif word.endswith("ed"):
        candidates = (word[:-2], word[:-1], word[:-3] + "y", word[:-3])
    elif word.endswith("s"):
        candidates = (word[:-1], word[:-2], word[:-3] + "y")
    return next((candidate for candidate in candidates if candidate in _VERBS), None)


def _action(text: str) -> str | None:
    """ "Optimize X" -> "optimizes X"; None when the text does not start with a known verb."""
    words = text.split(" ", 1)
    verb = _base_verb(words[0])
    if verb is None:
        return None
    # "Fix X and add Y": the second verb agrees as well.
    tail = _AND_VERB.sub(
        lambda m: m.group(1) + _third_person(m.group(2).lower()) if m.group(2).lower() in _VERBS else m.group(0),
        words[1] if len(words) > 1 else "",
    )
    if verb == "support":
        return f"adds support for {tail}"
    if verb == "cleanup":
        return f"cleans up {tail}"
    return f"{_third_person(verb)} {tail}".strip()


_TOKEN = LazyPattern(r"[A-Za-z][A-Za-z0-9]*")
_ABOUT_THE_PR = LazyPattern(r"^This (?:PR|pull request|change|patch|commit)\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    stems = set()
    for word in _TOKEN.findall(text.lower()):
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        stems.add(word.rstrip("e") if len(word) > 4 else word)
    return stems


def _overlaps(title: str, paragraph: str) -> bool:
    """Whether the paragraph already says what the title says (nearly all its words but the shortest)."""
    words = {stem for stem in _stems(_PREFIX.sub("", title)) if len(stem) > 2}
    # A paragraph that opens by saying what the PR does needs less agreement to stand alone.
    share = 0.5 if _ABOUT_THE_PR.match(paragraph) else 0.8
    return bool(words) and len(words & _stems(paragraph)) >= share * len(words)


# ---------------------------------------------------------------- type


def _lines(pr: PullRequest) -> int | None:
    if pr.additions is None or pr.deletions is None:
        return None
    return pr.additions + pr.deletions


_TYPO = LazyPattern(r"\b(?:typos?|spelling|misspell\w*|grammar|wording|nits?|cosmetic|whitespace|formatting)\b", re.I)
_MINOR = LazyPattern(r"\[minor\]|\b(?:redundant|unused|dead code|clean ?up|cleanups)\b", re.I)
_CODE_KINDS = frozenset({"source", "kernel", "config", "build"})
_NOT_TRIVIAL = LazyPattern(r"\b(?:fix\w*|bug\w*|revert|security|cve|perf\w*|crash\w*|leak|regression)\b", re.I)


def trivial_reason(pr: PullRequest) -> str | None:
    """Why a PR is trivial ("it only changes documentation"), or None when it is substantial."""
    grouped = kinds(pr.files)
    present = set(grouped)
    lines = _lines(pr)
    if pr.files and present <= {"docs", "meta"}:
        return "it only changes documentation" if "docs" in present else "it only changes repository metadata"
    if is_revert(pr):
        return None
    if pr.files and present <= {"test", "docs", "meta"} and (lines is None or lines <= 200):
        return "it only changes tests"
    if "doc" in title_tags(pr.title) and pr.files and not present & _CODE_KINDS:
        return "it only changes documentation"
    small = (lines is not None and lines <= 100) or (lines is None and pr.file_count <= 4)
    if _MINOR.search(pr.title) and small and not present & {"kernel", "build"}:
        return "it is a minor clean-up"
    if _TYPO.search(pr.title) and ((lines is not None and lines <= 20) or (lines is None and pr.file_count <= 3)):
        return "it fixes a typo or wording"
    risky = present & {"kernel", "build", "config"}
    if lines is not None and lines <= 2 and not risky and not _NOT_TRIVIAL.search(pr.title):
        return f"its diff is {plural(lines, 'line')}"
    return None


def classify_type(pr: PullRequest) -> str:
    """ "trivial" for docs, metadata, tests-only, typo and tiny changes; otherwise "substantial"."""
    return "trivial" if trivial_reason(pr) else "substantial"


# ---------------------------------------------------------------- sections


def _what_changed(pr: PullRequest, sections: list[_Section], closes: list[str]) -> str:
    paragraph = _clip(_first_paragraph(sections), WHAT_CHANGED_CHARS)
    parts = [] if paragraph and _overlaps(pr.title, paragraph) else [title_sentence(pr.title)]
    if paragraph:
        parts.append(paragraph)
    missing = [ref for ref in closes if ref not in paragraph]
    if missing:
        parts.append(f"It resolves {join_words(missing)}.")
    return " ".join(parts)


def _directory(path: str, depth: int = 3) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts else path


def _files_sentence(pr: PullRequest) -> str:
    files = pr.files
    where = ""
    if len(files) <= 3:
        where = join_words([f"`{path}`" for path in files])
        return f"It changes {where}." if files else ""
    counts = Counter(_directory(path) for path in files).most_common()
    total = f"{pr.file_count} files" + (f" ({len(files)} listed)" if pr.file_count > len(files) else "")
    if len(counts) <= 3:
        where = join_words([f"`{directory}` ({count})" for directory, count in counts])
        return f"It changes {total}, all under {where}."
    if counts[0][1] == 1:
        where = join_words([f"`{directory}`" for directory, _ in counts[:3]])
        return f"It changes {total} in {len(counts)} directories, among them {where}."
    top = [(directory, count) for directory, count in counts[:3] if count > 1]
    where = join_words([f"`{directory}` ({count})" for directory, count in top])
    return f"It changes {total}, mostly under {where}."


def _size_sentence(pr: PullRequest) -> str:
    if pr.additions is None or pr.deletions is None:
        return ""
    if pr.additions and pr.deletions:
        return f"The diff adds {plural(pr.additions, 'line')} and removes {pr.deletions}."
    if pr.additions:
        return f"The diff only adds lines ({pr.additions})."
    return f"The diff only removes lines ({pr.deletions})." if pr.deletions else ""


def _mix_sentence(pr: PullRequest) -> str:
    grouped = kinds(pr.files)
    code = [kind for kind in ("source", "kernel", "config", "bench") if kind in grouped]
    others = [kind for kind in grouped if kind not in code]
    described = [f"{KIND_NOUNS[kind]} ({plural(len(grouped[kind]), 'file')})" for kind in others]
    if code and others:
        return f"Alongside the code it updates {join_words(described)}."
    if others and len(pr.files) > 1:
        return f"It is limited to {join_words([KIND_NOUNS[kind] for kind in others])}."
    return ""


def _impact(pr: PullRequest, areas: list[str]) -> str:
    parts = []
    if areas:
        label = "area" if len(areas) == 1 else "areas"
        parts.append(f"The change belongs to the {join_words(areas)} {label}.")
    parts.extend([_files_sentence(pr), _size_sentence(pr), _mix_sentence(pr)])
    text = " ".join(part for part in parts if part)
    return text or "The store holds no file list for this PR, so its reach is unknown."


_DEPRECATION = LazyPattern(r"\bdeprecat\w*|\b(?:remove|drop)(?:s|ed|ping)? (?:the )?support\b|\bbreaking\b", re.I)
_ENV_VAR = LazyPattern(r"\bVLLM_[A-Z0-9_]{3,}\b")
_CLI_FLAG = LazyPattern(r"(?<![\w-])--[a-z][a-z0-9-]{2,}\b")
_ENTRYPOINTS = LazyPattern(r"(?:^|/)entrypoints/|(?:^|/)api_server\.py$")
LARGE_LINES = 1000
LARGE_FILES = 30


def _example(paths: list[str]) -> str:
    return f"`{paths[0]}`" + (f" and {plural(len(paths) - 1, 'other')}" if len(paths) > 1 else "")


def _risks(pr: PullRequest, body: str, trivial: str | None) -> str:
    grouped = kinds(pr.files)
    text = f"{pr.title}\n{body}"
    risks: list[str] = []
    if is_revert(pr):
        risks.append("It reverts an earlier change, so whatever that change fixed or enabled is undone until it lands again.")
    if _DEPRECATION.search(text):
        risks.append("It deprecates or removes behaviour, which can break users who still rely on it.")
    if "kernel" in grouped:
        risks.append(
            f"It changes kernel code ({_example(grouped['kernel'])}); mistakes there show up as wrong results "
            "or crashes on specific hardware rather than as Python errors."
        )
    settings = grouped.get("config", []) + sorted(set(_ENV_VAR.findall(pr.title)) | set(_CLI_FLAG.findall(pr.title)))
    if settings:
        names = [f"`{s}`" if not s.startswith("`") else s for s in settings]
        what = _example(settings) if grouped.get("config") else join_words(names[:3])
        risks.append(f"It changes configuration or options ({what}), so deployments that set them should check the new behaviour.")
    if "build" in grouped:
        risks.append(f"It changes the build or dependencies ({_example(grouped['build'])}), which affects how the project is installed.")
    lines = _lines(pr)
    if (lines or 0) >= LARGE_LINES or pr.file_count >= LARGE_FILES:
        size = plural(pr.file_count, "file") + (f", {lines} lines" if lines else "")
        risks.append(f"It is a large change ({size}), which makes regressions harder to review and to bisect.")
    if any(_ENTRYPOINTS.search(path) for path in pr.files) and not trivial:
        risks.append("It touches the serving entrypoints, which clients call directly.")
    if {"source", "kernel"} & set(grouped) and "test" not in grouped and not trivial:
        risks.append("No tests change with it, so it relies on existing coverage.")
    if not risks:
        return "Nothing in the title, description or changed files signals a particular risk."
    return " ".join(risks[:3])


_COMMAND = LazyPattern(r"^(?:pytest|python3?|vllm|lm_eval|torchrun|bash|sh|uv|pip|make|docker|[A-Z_]+=\S+)\b")


def _test_plan(sections: list[_Section]) -> str:
    lines = _section_text(sections, _TEST_PLAN_HEADINGS)
    fenced = False
    for line in lines:
        if is_fence(line):
            fenced = not fenced
            continue
        text = _inline(_LIST_ITEM.sub("", line)).strip()
        command = text.strip("` ")
        if command and not command.startswith("#") and (fenced or _COMMAND.match(command)):
            return f"The author tested it with `{command[:120]}`."
        if not fenced and _meaningful(text):
            return f"The test plan: {_lower_first(_clip(sentence(text), 200))}"
    return ""


_MEASURED = LazyPattern(r"\d[\d.,]{0,20} ?(?:%|x\b|ms\b|s\b|tok/s|tokens/s|req/s|gb\b)|throughput|latency|speedup|accuracy", re.I)


def _insights(pr: PullRequest, body: str, sections: list[_Section], trivial: str | None) -> str:
    parts = []
    series = _SERIES.search(pr.title)
    if series:
        total = "" if series[2].lower() == "n" else f" of {series[2]}"
        parts.append(f"It is part {series[1]}{total} of a series of changes.")
    follow = [ref for match in _FOLLOW_UP.finditer(body) for ref in _refs(match.group(1))]
    if follow:
        parts.append(f"It builds on {join_words(list(dict.fromkeys(follow)))}.")
    plan = _test_plan(sections)
    if plan:
        parts.append(plan)
    if _MEASURED.search("\n".join(_section_text(sections, _TEST_RESULT_HEADINGS))):
        parts.append("The description includes measured results.")
    if trivial:
        parts.append(f"It is marked trivial because {trivial}.")
    if not pr.body.strip():
        parts.append("No PR description is stored, so this summary comes from the title and the changed files.")
    return " ".join(parts)


def _closing_refs(body: str) -> tuple[list[str], str]:
    """The issues that lines like "FIX #123" or "Closes owner/repo#4" close, and the body without those lines."""
    refs: list[str] = []
    kept = []
    for line in body.split("\n"):
        closing = _CLOSING.fullmatch(line.strip()) if len(line) <= 300 else None
        if closing:
            refs += [ref for ref in _refs(closing.group(1)) if ref not in refs]
        else:
            kept.append(line)
    return refs, "\n".join(kept)


def extractive_summary(pr: PullRequest) -> Summary:
    """The four sections from the PR's own data; "What changed" is never empty."""
    body = clean_body(pr.body)
    closes, body_without_refs = _closing_refs(body)
    sections = _sections(body_without_refs)
    areas = pr.areas or classify(pr.title, pr.files, pr.labels, pr.repo)
    trivial = trivial_reason(pr)
    return Summary(
        what_changed=_what_changed(pr, sections, closes),
        impact=_impact(pr, areas),
        risks=_risks(pr, body_without_refs, trivial),
        insights=_insights(pr, body_without_refs, sections, trivial),
        source="extractive",
    )
