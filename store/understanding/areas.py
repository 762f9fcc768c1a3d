"""Areas of the tracked repository a pull request belongs to.

The rules are data (areas.toml beside this module) so they can follow the
repository's own labelling without code changes. They are read and compiled
once; classify() then runs for every PR of the store.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path

from store.text.patterns import LazyPattern
from store.text.prose import atoms
from store.understanding.laid_over import lay_over

_AREA_KEYS = frozenset({"aliases", "tags", "words", "title", "files", "files_all", "labels"})

_SEPARATORS = LazyPattern(r"[\s_\-]+")
_ESCAPE = LazyPattern(r"\\.")
# An optional `Revert "` keeps a revert in the areas of the change it undoes.
_LEADING_TAGS = LazyPattern(r'^\s*(?:revert\s*"?\s*)?((?:\[[^\[\]]*\][\s:]*)+)', re.IGNORECASE)
_TAG = LazyPattern(r"\[([^\[\]]*)\]")
_CONVENTIONAL = LazyPattern(
    r"^\s*(feat|fix|docs|style|refactor|perf|test|build|ci|chore|revert)(?:\(([^)]*)\))?!?:",
    re.IGNORECASE,
)
# Series counters such as [6/N] or [2/3] say nothing about the area.
_COUNTER = LazyPattern(r"^\d+/(?:\d+|n)$")


def normalize_name(text: str) -> str:
    """The form names, aliases, tags and labels are compared in: lowercase, no spaces, _ or -."""
    return _SEPARATORS.sub("", text.lower())


def _normalize_tag(tag: str, synonyms: dict[str, str]) -> str:
    folded = normalize_name(tag)
    return synonyms.get(folded, folded)


@dataclass(frozen=True)
class _Area:
    """The signals of one area that take a search rather than a lookup."""

    name: str
    title: re.Pattern[str] | None
    files: re.Pattern[str] | None
    files_all: tuple[re.Pattern[str], ...]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one per repository
class _Rules:
    names: tuple[str, ...]
    specs: dict[str, dict]  # each area's rules as written, for its patterns
    aliases: dict[str, str]
    tag_synonyms: dict[str, str]
    # Exact-match signals as indexes (tag, word or label -> areas), so a PR
    # costs a few dict lookups instead of one set test per area.
    by_tag: dict[str, frozenset[str]]
    by_word: dict[str, frozenset[str]]
    by_label: dict[str, frozenset[str]]

    @cached_property
    def areas(self) -> tuple[_Area, ...]:
        """The patterns, compiled on first use: most commands never classify a PR, and compiling is most of loading."""
        return tuple(_parse_area(name, spec) for name, spec in self.specs.items())

    @cached_property
    def title_searches(self) -> tuple[tuple[str, Callable[[str], re.Match[str] | None]], ...]:
        """Each area's title search, for the areas that have title patterns: classify runs them all for every PR."""
        return tuple((area.name, area.title.search) for area in self.areas if area.title is not None)

    @cached_property
    def all_files(self) -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
        """The areas with patterns that every PR's paths must meet between them (files_all)."""
        return tuple((area.name, area.files_all) for area in self.areas if area.files_all)


def _compile(area: str, field: str, source: str) -> re.Pattern[str]:
    try:
        return re.compile(source)
    except re.error as exc:
        raise ValueError(f"areas.toml: bad regex in [areas.{area}] {field}: {exc}") from exc


def _union(area: str, field: str, patterns: list[str]) -> re.Pattern[str] | None:
    """One alternation per area and field, so a title or path costs one search per area."""
    if not patterns:
        return None
    return _compile(area, field, "|".join(f"(?:{pattern})" for pattern in patterns))


def _lowercase_title(area: str, patterns: list[str]) -> list[str]:
    # Titles are lowercased once per PR: far cheaper than IGNORECASE, which
    # stops `re` from skipping ahead to a pattern's first letter.
    for pattern in patterns:
        if _ESCAPE.sub("", pattern) != _ESCAPE.sub("", pattern).lower():
            raise ValueError(f"areas.toml: [areas.{area}] title regex {pattern!r} must be lowercase")
    return patterns


def _each(area: str, field: str, patterns: list[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(_compile(area, field, pattern) for pattern in patterns)


def _add_alias(aliases: dict[str, str], alias: str, area: str) -> None:
    key = normalize_name(alias)
    if aliases.setdefault(key, area) != area:
        raise ValueError(f"areas.toml: {alias!r} names both {aliases[key]} and {area}")


def _check_keys(name: str, spec: dict) -> None:
    unknown = set(spec) - _AREA_KEYS
    if unknown:
        raise ValueError(f"areas.toml: [areas.{name}] has unknown keys {sorted(unknown)}")


def _index(index: dict[str, set[str]], keys: Iterable[str], area: str) -> None:
    for key in keys:
        index.setdefault(key, set()).add(area)


def _freeze(index: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    return {key: frozenset(areas) for key, areas in index.items()}


def _parse_area(name: str, spec: dict) -> _Area:
    return _Area(
        name=name,
        title=_union(name, "title", _lowercase_title(name, spec.get("title", []))),
        files=_union(name, "files", spec.get("files", [])),
        files_all=_each(name, "files_all", spec.get("files_all", [])),
    )


def _build_rules(specs: dict[str, dict], synonyms: dict[str, str], compile_now: bool) -> _Rules:
    aliases: dict[str, str] = {}
    by_tag: dict[str, set[str]] = {}
    by_word: dict[str, set[str]] = {}
    by_label: dict[str, set[str]] = {}
    for name, spec in specs.items():
        _check_keys(name, spec)
        for alias in [name, *spec.get("aliases", []), *spec.get("labels", [])]:
            _add_alias(aliases, alias, name)
        _index(by_tag, (_normalize_tag(tag, synonyms) for tag in spec.get("tags", [])), name)
        _index(by_word, (word.lower() for word in spec.get("words", [])), name)
        _index(by_label, (normalize_name(label) for label in spec.get("labels", [])), name)
    rules = _Rules(
        names=tuple(specs),
        specs=specs,
        aliases=aliases,
        tag_synonyms=synonyms,
        by_tag=_freeze(by_tag),
        by_word=_freeze(by_word),
        by_label=_freeze(by_label),
    )
    if compile_now:
        rules.areas  # noqa: B018  (compiling is what reports a bad pattern)
    return rules


def _repo_specs(defaults: dict[str, dict], repo: str, override: dict) -> dict[str, dict]:
    """The default areas less the override's `drop`, with its own areas replacing or following them."""
    unknown = set(override) - {"drop", "areas"}
    if unknown:
        raise ValueError(f"areas.toml: [repos.\"{repo}\"] has unknown keys {sorted(unknown)}")
    dropped = set(override.get("drop", []))
    missing = dropped - set(defaults)
    if missing:
        raise ValueError(f"areas.toml: [repos.\"{repo}\"] drops unknown areas {sorted(missing)}")
    specs = {name: spec for name, spec in defaults.items() if name not in dropped}
    specs.update(override.get("areas", {}))
    return specs


def _parse_rules(text: str, compile_now: bool = True, repo: str | None = None) -> _Rules:
    """The rules in `text` for `repo` (None: the default table); every mistake raises ValueError,
    those in patterns only once compiled."""
    import tomllib  # here, as the rules are read on first use

    return _rules_from(tomllib.loads(text), repo, compile_now)


def _rules_from(data: dict, repo: str | None, compile_now: bool) -> _Rules:
    synonyms = {normalize_name(k): normalize_name(v) for k, v in data.get("tag_synonyms", {}).items()}
    overrides = {name.lower(): (name, spec) for name, spec in data.get("repos", {}).items()}
    if repo is None or repo.lower() not in overrides:
        return _build_rules(data["areas"], synonyms, compile_now)
    name, override = overrides[repo.lower()]
    return _build_rules(_repo_specs(data["areas"], name, override), synonyms, compile_now)


_extra: dict = {}  # the operator's own areas file (use_areas_file), laid over the shipped one


@cache
def _data() -> dict:
    import tomllib
    from importlib import resources

    shipped = tomllib.loads(resources.files(__package__).joinpath("areas.toml").read_text(encoding="utf-8"))
    # The extra file's tables replace the shipped ones of the same name; repositories add up.
    return {**shipped, **_extra, "repos": {**shipped.get("repos", {}), **_extra.get("repos", {})}}


def use_areas_file(path: Path | None) -> None:
    """Lay an areas file over the shipped areas.toml; ValueError (naming the file) when it is unreadable or wrong."""
    lay_over(path, _extra, _use, _compile_every_table, (ValueError, KeyError, TypeError, AttributeError))


def _compile_every_table() -> None:
    for repo in (None, *_data().get("repos", {})):
        _rules_of(repo.lower() if repo else None).areas  # noqa: B018  (compiling reports a bad pattern)


def _use(extra: dict) -> dict:
    """Make `extra` the laid-over file, forgetting every table read from the last one; returns the last one."""
    global _extra
    previous, _extra = _extra, extra
    for cached in (_data, _rules_of, _rules, _path_areas, _normalized_tags):
        cached.cache_clear()
    return previous


@cache
def _rules_of(repo: str | None) -> _Rules:
    return _rules_from(_data(), repo, compile_now=False)


@cache
def _rules(repo: str | None = None) -> _Rules:
    """The rules `repo` is classified by: its own where areas.toml has an override, else the default."""
    if repo is not None and any(name.lower() == repo.lower() for name in _data().get("repos", {})):
        return _rules_of(repo.lower())
    return _rules_of(None)


def area_names(repo: str | None = None) -> tuple[str, ...]:
    """Every canonical area of `repo` (None: the default table), in the order areas.toml lists them."""
    return _rules(repo).names


def __getattr__(name: str) -> tuple[str, ...]:
    # AREAS is read from areas.toml when first asked for, not on import: most commands never need it.
    if name == "AREAS":
        return area_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UnknownArea(ValueError):
    """An area name that is neither a canonical name nor an alias."""

    def __init__(self, name: str, repo: str | None = None) -> None:
        self.name = name
        self.closest = closest_area(name, repo)
        guess = f"did you mean {self.closest}? " if self.closest else ""
        super().__init__(f"unknown area {name!r}; {guess}known areas: {', '.join(area_names(repo))}")


def closest_area(name: str, repo: str | None = None) -> str | None:
    """The area of `repo` whose name or alias `name` most resembles, as a typo of it ("rcom": rocm); None if none does."""
    import difflib  # here, as only a mistyped area needs it

    accepted = _rules(repo).aliases
    close = difflib.get_close_matches(normalize_name(name), list(accepted), n=1, cutoff=0.6)
    return accepted[close[0]] if close else None


def aliases(repo: str | None = None) -> dict[str, str]:
    """Every accepted name (normalized with normalize_name) -> canonical area of `repo`."""
    return dict(_rules(repo).aliases)


def resolve_area(name: str, repo: str | None = None) -> str | None:
    """The canonical area of `repo` for a name or alias, ignoring case, spaces, _ and -, and a plural's s ("TPUs")."""
    aliases = _rules(repo).aliases
    key = normalize_name(name)
    return aliases.get(key) or (aliases.get(key[:-1]) if len(key) > 3 and key.endswith("s") else None)


def require_area(name: str, repo: str | None = None) -> str:
    """resolve_area, or UnknownArea listing the repository's known areas."""
    area = resolve_area(name, repo)
    if area is None:
        raise UnknownArea(name, repo)
    return area


def _raw_tags(title: str) -> list[str]:
    leading = _LEADING_TAGS.match(title)
    if leading:
        return [part for tag in _TAG.findall(leading.group(1)) for part in tag.split(",")]
    conventional = _CONVENTIONAL.match(title)
    if conventional:
        kind, scope = conventional.groups()
        return [kind, *(scope or "").split(",")]
    return []


def title_tags(title: str) -> list[str]:
    """The title's leading [Tags] (or conventional-commit type and scope), normalized, in order."""
    return list(_normalized_tags(_rules(), tuple(_raw_tags(title))))


@lru_cache(maxsize=1 << 12)
def _normalized_tags(rules: _Rules, raw: tuple[str, ...]) -> tuple[str, ...]:
    # Titles repeat a few runs of tags ([Bugfix], [Core][V1], ...), so each run is normalized once.
    tags: list[str] = []
    for tag in (_normalize_tag(part, rules.tag_synonyms) for part in raw):
        if tag and not _COUNTER.match(tag) and tag not in tags:
            tags.append(tag)
    return tuple(tags)


@lru_cache(maxsize=1 << 16)
def _path_areas(rules: _Rules, path: str) -> frozenset[str]:
    # The same paths change PR after PR, so each is matched against the rules once.
    return frozenset(area.name for area in rules.areas if area.files is not None and area.files.search(path))


def classify(title: str, files: Iterable[str], labels: Iterable[str] = (), repo: str | None = None) -> list[str]:
    """The PR's areas, in area_names(repo) order: an area counts when its tags, title, paths or labels say so."""
    rules = _rules(repo)
    lowered = title.lower()
    paths = tuple(files)
    hits: set[str] = set().union(*(_path_areas(rules, path) for path in paths))
    for index, keys in (
        (rules.by_tag, title_tags(title)),
        (rules.by_word, atoms(lowered)),
        (rules.by_label, map(normalize_name, labels)),
    ):
        for key in index.keys() & keys:
            hits.update(index[key])
    for name, search in rules.title_searches:
        if name not in hits and search(lowered):
            hits.add(name)
    for name, patterns in rules.all_files:
        if name not in hits and all(any(pattern.search(path) for path in paths) for pattern in patterns):
            hits.add(name)
    return [name for name in rules.names if name in hits]
