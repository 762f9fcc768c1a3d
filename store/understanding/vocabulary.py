"""vLLM's vocabulary (vocabulary.toml beside this module): hardware, metrics and techniques by all their names,
and the words that name files rather than topics."""
from __future__ import annotations

from functools import cache
from typing import Any

from store.text.prose import atoms


@cache
def _data() -> dict[str, Any]:
    # Imported here: only a question with words in it reads the vocabulary.
    import tomllib
    from importlib import resources

    return tomllib.loads(resources.files(__package__).joinpath("vocabulary.toml").read_text(encoding="utf-8"))


def groups() -> list[dict[str, list[str]]]:
    """Groups of terms that mean the same, each with its narrower terms."""
    return list(_data().get("group", []))


@cache
def area_nouns() -> frozenset[str]:
    """Words that, after an area's name, only name it further ("the CPU backend", "ROCm stuff")."""
    return frozenset(_data().get("area_nouns", []))


@cache
def path_words() -> dict[tuple[str, ...], tuple[str, ...]]:
    """Words (as their atoms) that name files, to the lowercase path fragments they mean."""
    return {tuple(atoms(words)): tuple(fragments) for words, fragments in _data().get("paths", {}).items()}
