"""Each evaluation set's floors, kept as data in tests/eval/floors.toml, one line a set.

A set's line gives, for each share (precision and recall of citations, first line), the floor it may not
fall below, and for "said none merged" the count it may not rise above. tests/eval/test_eval.py asks every
set with floors and fails any set out of them. A line reading "unread" keeps a set blind: it is not asked,
and its folder is not even opened, until its line becomes floors. A set with no line fails the test, which
names it: a new batch is guarded, or declared unread, on purpose.
"""
from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

# Shares a set may not fall below, and counts it may not rise above.
SHARES = ("precision", "recall", "first line")
COUNTS = ("said none merged",)
# A floor is the figure measured less this, so that a change that loses about two answers in a hundred fails.
MARGIN = 0.02
UNREAD = "unread"

Floors = dict[str, float]
Lines = dict[str, "Floors | str"]

HEADER = f"""\
# Each evaluation set's floors: {", ".join(SHARES)} at the figure measured less {MARGIN}, and
# "{COUNTS[0]}" at most the count measured. tests/eval/test_eval.py fails a set out of them.
# `python bench/eval.py --write-floors` measures the sets below again and rewrites their lines;
# `--write-floors --set NAME` writes NAME's, also a new set's or one kept unread.
# NAME = "{UNREAD}" keeps a set blind: it is never asked, nor its folder opened, until given floors.
"""


def read_floors(path: Path) -> Lines:
    """The floors file's lines, by set; SystemExit naming a line that is neither floors nor "unread"."""
    lines = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for name, value in lines.items():
        if value != UNREAD and not (isinstance(value, dict) and set(value) <= {*SHARES, *COUNTS}
                                    and all(isinstance(v, int | float) for v in value.values())):
            raise SystemExit(f"{path}: {name} is neither floors ({', '.join((*SHARES, *COUNTS))}) nor {UNREAD!r}")
    return lines


def unread(lines: Lines) -> set[str]:
    return {name for name, value in lines.items() if value == UNREAD}


def floors_of(figures: Mapping[str, float]) -> Floors:
    """The floors of a set measured at `figures`: shares less the margin, rounded down; counts as they are.
    A share with nothing to measure (no question with a known first line) has no floor."""
    floors: Floors = {name: math.floor(round((figures[name] - MARGIN) * 1000, 6)) / 1000
                      for name in SHARES if figures[name] == figures[name]}
    return floors | {name: figures[name] for name in COUNTS}


def out_of_bounds(figures: Mapping[str, float], floors: Floors) -> dict[str, str]:
    """Each figure beyond its floor or ceiling, as "measured vs. bound"."""
    out = {name: f"{figures[name]:.3f} < {floor}" for name, floor in floors.items()
           if name in SHARES and not figures[name] >= floor}
    return out | {name: f"{figures[name]} > {most}" for name, most in floors.items()
                  if name in COUNTS and not figures[name] <= most}


def write_floors(path: Path, lines: Lines, order: Iterable[str]) -> None:
    """The floors file with `lines`, in the sets' order (then any set no longer found, as it was)."""
    known = list(order)
    names = [name for name in known if name in lines] + [name for name in lines if name not in known]
    path.write_text(HEADER + "".join(f"{name} = {_value(lines[name])}\n" for name in names), encoding="utf-8")


def _value(value: Floors | str) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    shown = [f"{_key(name)} = {bound:.3f}" if name in SHARES else f"{_key(name)} = {int(bound)}"
             for name, bound in value.items()]
    return "{" + ", ".join(shown) + "}"


def _key(name: str) -> str:
    return name if name.isidentifier() else f'"{name}"'
