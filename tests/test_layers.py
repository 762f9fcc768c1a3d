"""The house: imports run one way (bot -> store, and down the layers inside each), with no cycles.

Every import counts, function-local ones too, read from the source with ast.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Lower first. A module may import its own part and the parts below it; parts on one level stay apart.
LAYERS: list[tuple[str, ...]] = [
    ("store.text",),
    ("store.days", "store.model"),
    ("store.understanding",),
    ("store.subscription",),
    ("store.migrations",),
    ("store.db",),
    ("store.tables",),
    ("store.retrieval", "store.report"),
    ("store.sources",),
    ("bot.config",),
    ("bot.model",),
    ("bot.runtime", "bot.ingest"),
    ("bot.messages",),
    ("bot.answers",),
    ("bot.terminal",),
    ("bot.slack",),
    ("bot.doctor",),
    ("bot.cli",),
    ("bot.__main__",),
]


def modules() -> dict[str, Path]:
    found = {}
    for package in ("bot", "store"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return {target for target in targets if target in known and target != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def part_of(module: str) -> tuple[int, str] | None:
    """The layer and part a module belongs to; None for the packages' faces (bot, store)."""
    for level, parts in enumerate(LAYERS):
        for part in parts:
            if module == part or module.startswith(part + "."):
                return level, part
    return None


def downward_breaches(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a part on the same level or above, and of bot from store."""
    wrong = []
    for name, targets in edges.items():
        here = part_of(name)
        for target in targets:
            there = part_of(target)
            if here is None or there is None or there[1] == here[1]:
                continue
            if there[0] >= here[0]:
                wrong.append(f"{name} -> {target}")
    return wrong


def circles_in(edges: dict[str, set[str]]) -> list[list[str]]:
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(edges.get(name, ())):
            if state.get(target) == 1:
                circles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    return circles


def test_every_module_has_a_place_in_the_layers() -> None:
    unplaced = [name for name in graph() if name not in ("bot", "store") and part_of(name) is None]
    assert unplaced == []


def test_imports_run_one_way_down_the_layers() -> None:
    assert downward_breaches(graph()) == []


def test_no_module_imports_itself_round_a_circle() -> None:
    assert circles_in(graph()) == []


def test_the_checks_catch_a_local_upward_import_and_a_circle(tmp_path: Path) -> None:
    (tmp_path / "late.py").write_text("def f():\n    from bot.config import Settings\n", encoding="utf-8")
    edges = {"store.db": imports_of("store.db", tmp_path / "late.py", {"store.db", "bot.config"})}
    assert downward_breaches(edges) == ["store.db -> bot.config"]
    assert circles_in({"store.db": {"store.tables.prs"}, "store.tables.prs": {"store.db"}}) == [
        ["store.db", "store.tables.prs", "store.db"]
    ]
