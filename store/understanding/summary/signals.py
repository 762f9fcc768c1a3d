"""Risks a PR's own data supports: a revert, changed defaults, flags or environment variables,
removed or renamed APIs, kernels or scheduler code changed without tests, a change across many
areas, dependency changes, and a risk the description states. Nothing else is ever claimed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from store.model import PullRequest
from store.text.patterns import LazyPattern
from store.text.prose import join_words, plural, sentences
from store.understanding.paths import kinds
from store.understanding.summary.body import Body, paragraphs
from store.understanding.summary.components import SUPPORT, components
from store.understanding.summary.titles import PREFIX, is_revert
from store.understanding.summary.verbs import base_verb, third_person
from store.understanding.summary.wording import as_statement, inline

NO_RISK = "Nothing in the title, description or changed files signals a particular risk."

_ENV_VAR = LazyPattern(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b")
_VLLM_VAR = LazyPattern(r"\bVLLM_[A-Z0-9_]{2,}\b")
# Other upper-case names are constants as often as variables; the sentence must say which.
_SAYS_ENV = LazyPattern(r"\benv(?:ironment)?\b|\benv[ _-]?vars?\b", re.I)
_CLI_FLAG = LazyPattern(r"(?<![\w-])--[a-z][a-z0-9-]{2,}\b")
_ENV_FILE = LazyPattern(r"(?:^|/)envs?\.py$")
_DEFAULT_CHANGE = LazyPattern(
    r"\b(?:chang|flip|switch|updat|mak|set|turn|enabl|disabl)\w*\b[^.\n]{0,60}\b(?:by default|default)|"
    r"\bdefaults? (?:is|are|now|to)\b|\bnow defaults?\b|\bnew default",
    re.I,
)
_SETTING_VERB = LazyPattern(r"\b(?:add|introduc|renam|remov|drop|deprecat|chang|replac|default)\w*\b", re.I)
_REMOVAL_VERBS = frozenset({"remove", "rename", "deprecate", "drop", "delete"})
# What a removal may name and still be internal housekeeping rather than an interface.
_INTERNAL = LazyPattern(
    r"\b(?:unused|dead|redundant|duplicate\w*|debug|stale|obsolete|leftover|comments?|tests?|warnings?|logs?|"
    r"logging|prints?|todo|workaround|hack|noise|spam|dependency on|never (?:read|used)|internal|private)\b",
    re.I,
)
# A list item names an interface when it names one of these, or quotes a name.
_INTERFACE = LazyPattern(r"`|\b(?:argument|parameter|flag|option|field|method|function|class|endpoint|api|support|variable)s?\b", re.I)
_SCHEDULER = LazyPattern(r"(?:^|/)(?:sched(?:uler)?s?|scheduling)(?:/|[._])")
_STATED = LazyPattern(
    r"\bbreaking\b|\bbackward(?:s)?[- ]incompatib|\bnot backward(?:s)?[- ]compatible|\bmay (?:regress|break|slow)|"
    r"\bcould (?:regress|break)|\bknown (?:issue|limitation)|\bcaveat|\brisks?\b|\bbehaviou?r change",
    re.I,
)
# A wide change: this many areas, or this many components of code, or this many files.
WIDE_AREAS = 4
WIDE_COMPONENTS = 6
WIDE_FILES = 40


@dataclass(frozen=True)
class Risk:
    signal: str  # revert, stated, api, settings, untested, wide, dependencies
    text: str


def _example(paths: list[str]) -> str:
    return f"`{paths[0]}`" + (f" and {plural(len(paths) - 1, 'other')}" if len(paths) > 1 else "")


def _stated(body: Body) -> Risk | None:
    lines = [line for line in body.lines("risks") if line.strip()]
    candidates = [" ".join(block) for block in paragraphs(lines)]
    candidates += [part for block in paragraphs(body.lines("", "purpose", "changes", "notes")) for part in sentences(" ".join(block))
                   if _STATED.search(part)]
    for candidate in candidates:
        said = next((as_statement(part) for part in sentences(inline(candidate)) if as_statement(part)), None)
        if said:
            return Risk("stated", f"The description itself flags a risk: {said}")
    return None


def _removal(pr: PullRequest, body: Body) -> Risk | None:
    title = PREFIX.sub("", pr.title).strip().rstrip(".")
    items = [inline(line.strip().lstrip("-*+ ").strip()) for line in body.lines("", "purpose", "changes") if line.strip().startswith(("-", "*", "+"))]
    for text in [title, *[item for item in items if _INTERFACE.search(item)]]:
        verb_word, _, rest = text.partition(" ")
        verb = base_verb(verb_word)
        if verb in _REMOVAL_VERBS and rest and not _INTERNAL.search(rest):
            if verb == "deprecate":
                return Risk("api", f"It deprecates {rest}, so users of it should move off it before it is removed.")
            still = "the old name" if verb == "rename" else "it"
            return Risk("api", f"It {third_person(verb)} {rest}, so anything that still uses {still} breaks.")
    return None


def _options(text: str) -> set[str]:
    variables = _ENV_VAR if _SAYS_ENV.search(text) else _VLLM_VAR
    return set(variables.findall(text)) | set(_CLI_FLAG.findall(text))


def _settings(pr: PullRequest, body: Body) -> Risk | None:
    changes = " ".join(inline(line) for line in body.lines("", "purpose", "changes"))
    named = _options(pr.title)
    for part in sentences(changes):
        if _SETTING_VERB.search(part):
            named |= _options(part)
    env_files = [path for path in pr.files if _ENV_FILE.search(path)]
    default = _DEFAULT_CHANGE.search(pr.title) or _DEFAULT_CHANGE.search(changes)
    if not (named or env_files or default):
        return None
    shown = [f"`{name}`" for name in sorted(named)[:3]] + ([_example(env_files)] if env_files else [])
    what = "defaults or options" if default else "options or environment variables"
    where = f" ({join_words(shown)})" if shown else ""
    return Risk("settings", f"It changes {what}{where}, so deployments that set or rely on them should check the new behaviour.")


def _untested(pr: PullRequest) -> Risk | None:
    grouped = kinds(pr.files)
    if "test" in grouped:
        return None
    if "kernel" in grouped:
        return Risk("untested", f"It changes kernel code ({_example(grouped['kernel'])}) without changing tests; mistakes there "
                                "show up as wrong results or crashes on specific hardware.")
    scheduler = [path for path in pr.files if _SCHEDULER.search(path) and kinds([path]).get("source")]
    if scheduler:
        return Risk("untested", f"It changes scheduler code ({_example(scheduler)}) without changing tests, so it relies on existing coverage.")
    return None


def _wide(pr: PullRequest, areas: list[str]) -> Risk | None:
    code = [name for name in components(pr.files) if name not in SUPPORT]
    if len(areas) >= WIDE_AREAS and len(code) >= WIDE_AREAS:
        return Risk("wide", f"It spans {len(areas)} areas ({join_words(areas)}), so a regression may surface far from the code reviewed.")
    if len(code) >= WIDE_COMPONENTS or pr.file_count >= WIDE_FILES:
        return Risk("wide", f"It reaches across {plural(len(code), 'component')} in {plural(pr.file_count, 'file')}, "
                            "so a regression may surface far from the code reviewed.")
    return None


def _dependencies(pr: PullRequest) -> Risk | None:
    build = kinds(pr.files).get("build")
    if not build:
        return None
    return Risk("dependencies", f"It changes the build or dependencies ({_example(build)}), which affects how the project is installed.")


def risks(pr: PullRequest, body: Body, areas: list[str]) -> list[Risk]:
    """Every risk the PR's data supports, most telling first."""
    found = [
        Risk("revert", "It reverts an earlier change, so whatever that change fixed or enabled is undone until it lands again.")
        if is_revert(pr) else None,
        _stated(body),
        _removal(pr, body),
        _settings(pr, body),
        _untested(pr),
        _wide(pr, areas),
        _dependencies(pr),
    ]
    return [risk for risk in found if risk is not None]


def risk_text(found: list[Risk]) -> str:
    return " ".join(risk.text for risk in found[:3]) if found else NO_RISK

