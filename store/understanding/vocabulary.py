"""The lexicon questions are read by (vocabulary.toml beside this module), with an operator's own file laid over it.

It holds the words that say nothing of a PR, fillers, hardware, metrics and techniques by all their names, the
words that name files, and cue phrases; its header says what belongs in it and what stays in code. It is read
on first use: a command that reads no question never reads it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from store.understanding.laid_over import lay_over

_Read = TypeVar("_Read", bound=Callable[..., Any])
_tables: list[Any] = []  # every table read from the lexicon, forgotten when the file laid over it changes
_extra: dict[str, Any] = {}  # the operator's file (use_vocabulary_file)
_generation = 0  # counts the files laid over, so a cue compiled from another lexicon compiles again

# A cue refers to another as {name}.
_REFERENCE = re.compile(r"(?<!\\)\{([a-z_]+)\}")
# Kept as written in the operator's file; lists add to the shipped ones, cues replace them.
_CUES = "cues"


def cached(read: _Read) -> _Read:
    """`read`, cached until the file laid over the lexicon changes."""
    cached = cache(read)
    _tables.append(cached)
    return cached  # type: ignore[return-value]


@cached
def _data() -> dict[str, Any]:
    # Imported here: only a question with words in it reads the vocabulary.
    import tomllib
    from importlib import resources

    shipped = tomllib.loads(resources.files(__package__).joinpath("vocabulary.toml").read_text(encoding="utf-8"))
    return _laid_over(shipped, _extra, "") if _extra else shipped


def use_vocabulary_file(path: Path | None) -> None:
    """Lay an operator's vocabulary over the shipped one; ValueError (naming the file) when it is unreadable or wrong."""
    lay_over(path, _extra, _use, lambda: _check(_data()))


def _use(extra: dict[str, Any]) -> dict[str, Any]:
    """Make `extra` the file laid over the lexicon, forgetting every table read from the last one; returns the last one."""
    global _extra, _generation
    previous, _extra = _extra, extra
    _generation += 1
    for read in _tables:
        read.cache_clear()
    return previous


def _laid_over(shipped: Any, extra: Any, where: str) -> Any:
    """`extra` laid over `shipped`: lists add up, tables merge key by key, and a cue (or any other value) replaces."""
    if isinstance(shipped, list) and isinstance(extra, list):
        return shipped + extra
    if isinstance(shipped, dict) and isinstance(extra, dict):
        if not where:
            unknown = sorted(set(extra) - set(shipped))
            if unknown:
                raise ValueError(f"unknown keys {unknown}; known: {sorted(shipped)}")
        merged = dict(shipped)
        for key, value in extra.items():
            merged[key] = value if where == _CUES or key not in shipped else _laid_over(shipped[key], value, key)
        return merged
    if type(shipped) is not type(extra):
        raise ValueError(f"{where or 'a key'} holds {type(extra).__name__}, not {type(shipped).__name__}")
    return extra


# ---------------------------------------------------------------- checking a lexicon


def _check(data: dict[str, Any]) -> None:
    """Raise ValueError at the first thing wrong in a lexicon, so a bad file stops every command at its start."""
    for key in ("stopwords", "area_nouns"):
        _strings(data[key], key)
    for name, words in data["words"].items():
        _strings(words, f"[words] {name}")
    for table in ("paths", "folders"):
        for words, value in data[table].items():
            _strings(value if isinstance(value, list) else [value], f"[{table}] {words!r}")
    for index, group in enumerate(data["group"]):
        _group(group, f"[[group]] {index + 1}")
    for name, written in data[_CUES].items():
        _strings([written] if isinstance(written, str) else written, f"[cues] {name}")
        pattern = _compiled(name)
        if pattern.groups:
            raise ValueError(f"[cues] {name} has a capturing group; use (?:…): code reads only whether a cue is there")


def _strings(value: Any, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where} must be a list of strings")


def _group(group: Any, where: str) -> None:
    if not isinstance(group, dict) or not group.get("terms"):
        raise ValueError(f"{where} needs terms")
    unknown = sorted(set(group) - {"terms", "narrower", "family"})
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}")
    _strings(group["terms"], f"{where} terms")
    _strings(group.get("narrower", []), f"{where} narrower")
    if not isinstance(group.get("family", False), bool):
        raise ValueError(f"{where} family must be true or false")


# ---------------------------------------------------------------- words


@cached
def stopwords() -> frozenset[str]:
    """Words that say nothing of what a PR is about: "what", "merged", "anything", "pls"."""
    return frozenset(_data()["stopwords"])


@cached
def words(name: str) -> frozenset[str]:
    """One list of [words]: "often_mistyped", "compound_fillers", "negated_nouns", "made_up_fillers" or "bot_names"."""
    return frozenset(_data()["words"][name])


@cached
def folders() -> dict[str, str]:
    """Words for the folders people most often mean ("tests", "docs"), to the folder."""
    return dict(_data()["folders"])


def groups() -> list[dict[str, list[str]]]:
    """Groups of terms that mean the same, each with its narrower terms."""
    return list(_data()["group"])


@cached
def area_nouns() -> frozenset[str]:
    """Words that, after an area's name, only name it further ("the CPU backend", "ROCm stuff")."""
    return frozenset(_data()["area_nouns"])


@cached
def path_words() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Words (as their atoms) that name files, to the lowercase path fragments they mean."""
    from store.text.prose import atoms

    return {tuple(atoms(words)): tuple(fragments) for words, fragments in _data()["paths"].items()}


# ---------------------------------------------------------------- cues


class Cue:
    """A regular expression in which {name} stands for the lexicon's cue of that name: compiled on first use, and
    again once another vocabulary is laid over the shipped one. A cue of the lexicon is Cue("{name}")."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._pattern: re.Pattern[str] | None = None
        self._generation = -1

    def _compiled(self) -> re.Pattern[str]:
        if self._pattern is None or self._generation != _generation:
            self._pattern = re.compile(_expanded(self._source, ()), self._flags)
            self._generation = _generation
        return self._pattern

    def search(self, string: str) -> re.Match[str] | None:
        return self._compiled().search(string)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self._compiled().finditer(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self._compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str) -> tuple[str, int]:
        return self._compiled().subn(repl, string)


def cue(name: str) -> Cue:
    """The lexicon's cue of that name."""
    return Cue("{" + name + "}")


@cached
def _compiled(name: str) -> re.Pattern[str]:
    try:
        return re.compile(_expanded("{" + name + "}", ()))
    except re.error as exc:
        raise ValueError(f"[cues] {name} is no regular expression: {exc}") from None


def _expanded(source: str, within: tuple[str, ...]) -> str:
    """`source` with each {name} replaced by that cue, itself expanded."""

    def cue_text(reference: re.Match[str]) -> str:
        name = reference[1]
        if name in within:
            raise ValueError(f"[cues] {name} refers to itself through {' → '.join(within)}")
        written = _data()[_CUES].get(name)
        if written is None:
            raise ValueError(f"[cues] {within[-1] if within else 'a cue'} refers to {{{name}}}, which is no cue")
        return _expanded("".join(written) if isinstance(written, list) else written, (*within, name))

    return _REFERENCE.sub(cue_text, source)
