"""Paths a question names, keeps to, or leaves out: "vllm/config/", "envs.py", "didn't touch tests/"."""
from __future__ import annotations

import re

from store.retrieval.reading.lookup import Lookup
from store.retrieval.reading.synonyms import subwords_of
from store.text.patterns import LazyPattern
from store.understanding import vocabulary

# A path as people write one: with a slash ("vllm/config/", "tests/v1/core"), a file with an extension
# ("envs.py", "CMakeLists.txt"), or a dot folder (".buildkite").
_EXTENSIONS = "py|pyi|cu|cuh|cpp|cc|c|h|hpp|txt|toml|yaml|yml|json|md|rst|sh|cmake|in|cfg|ini|jinja|j2|dockerfile"
_PATH = LazyPattern(
    rf"(?<![\w/.@-])(\.?[a-z0-9_][\w.-]*(?:/[\w.-]+)+/?|\.?[a-z0-9_][\w.-]+/(?![\w])|[a-z0-9_][\w-]*(?:\.[\w-]+)*\.(?:{_EXTENSIONS})|\.[a-z][\w-]+)(?![\w/])"
)


# "owner/name": a repository's name as much as a folder; a path only where a changed file has it.
_TWO_PARTS = LazyPattern(r"[\w-]+/[\w-]+")


# "didn't touch anything under tests/", "without touching any test files": files a PR must not have changed.
_UNTOUCHED = LazyPattern(
    r"\b(?:(?:did|does|do)n'?t|(?:did|does|do)\s+not|never|without|not)\s+(?:touch(?:ing)?|chang(?:e|ing)|modify(?:ing)?|edit(?:ing)?)"
    r"\s+(?:any(?:thing)?\s+)?(?:(?:under|in)\s+)?(?:the\s+)?(?P<what>[\w./-]+)(?:\s+files?)?",
    re.IGNORECASE,
)


def take_untouched(text: str, excluded_paths: list[str]) -> str:
    def leave_out(m: re.Match[str]) -> str:
        what = m["what"].lower()
        path = vocabulary.folders().get(what) or (what if _PATH.fullmatch(what) else None)
        if path is None:
            return m[0]
        if path not in excluded_paths:
            excluded_paths.append(path)
        return " "

    return _UNTOUCHED.sub(leave_out, text)


def take_paths(text: str, paths: list[str], lookup: Lookup | None) -> str:
    """The paths the question names, taken out of its words."""

    def take(found: re.Match[str]) -> str:
        path = found[1].lower()
        if _TWO_PARTS.fullmatch(path) and not (lookup and lookup.is_path(path)):
            return found[0]
        if "/" not in path and not path.startswith(".") and lookup is not None and not lookup.is_path(path):
            return found[0]  # "llama.cpp", "vllm.ai": a name with a dot that no changed file has is a word
        if path not in paths:
            paths.append(path)
        return " "

    return _PATH.sub(take, text)


def path_words_at(words: list[str], i: int, paths: list[str]) -> int:
    """How many words from `i` name files ("requirements files", "cmake"); their fragments join `paths`."""
    for size in (3, 2, 1):
        said = subwords_of(words[i : i + size])
        fragments = vocabulary.path_words().get(said) if len(words[i : i + size]) == size else None
        if fragments:
            paths.extend(fragment for fragment in fragments if fragment not in paths)
            return size
    return 0
