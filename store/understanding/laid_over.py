"""An operator's TOML file laid over data shipped with the package: areas (PRDIGEST_AREAS), vocabulary (PRDIGEST_VOCABULARY)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def lay_over(
    path: Path | None,
    laid: dict[str, Any],
    use: Callable[[dict[str, Any]], dict[str, Any]],
    check: Callable[[], None],
    mistakes: tuple[type[Exception], ...] = (ValueError,),
) -> None:
    """Lay the file at `path` (None: none) over the shipped data through `use`, which returns the file laid before,
    unless it is `laid` already; `check` then reads everything, and at a mistake the file laid before is laid again.

    Raises ValueError naming the file when it cannot be read or holds a mistake."""
    import tomllib  # here: the file is read when a command starts, and only when one is set

    try:
        extra = tomllib.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if extra == laid:
        return
    previous = use(extra)
    try:
        check()
    except mistakes as exc:
        use(previous)
        raise ValueError(f"{path}: {exc}") from None
