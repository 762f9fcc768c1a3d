"""A Query as plain data (JSON's types), to keep with a thread's turns, and back.

Read strictly: data of another shape (a field added, dropped or retyped since it was
kept, or text that is no kept Query) is refused with ValueError, and the turn is then
read again from its text. Bump FORMAT when what a field means changes.
"""
from __future__ import annotations

import dataclasses
import types
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any, Union, get_args, get_origin, get_type_hints

from store.retrieval.reading.query import Query

FORMAT = 1


def query_data(query: Query) -> dict[str, Any]:
    """The query as JSON's types."""
    return {"format": FORMAT, "query": _data(query)}


def query_from_data(data: Any) -> Query:
    """The query kept as `data`; ValueError when it is not one, or not of this version's shape."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not a kept query of this format")
    try:
        return _value(data.get("query"), Query)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a kept query: {exc}") from None


def _data(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return [[_data(key), _data(item)] for key, item in value.items()]
    if isinstance(value, frozenset):
        return sorted(_data(item) for item in value)
    if isinstance(value, tuple | list):
        return [_data(item) for item in value]
    return value


def _value(data: Any, hint: Any) -> Any:
    """`data` read back as a value of the type `hint`."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return None if data is None else _value(data, next(arg for arg in get_args(hint) if arg is not type(None)))
    if origin is not None:
        return _collection(data, origin, get_args(hint))
    if dataclasses.is_dataclass(hint):
        return _dataclass(data, hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if hint is datetime:
        return datetime.fromisoformat(_checked(data, str))
    return _checked(data, hint)


def _collection(data: Any, origin: Any, args: tuple[Any, ...]) -> Any:
    items = _checked(data, list)
    if origin is dict:
        return {_value(key, args[0]): _value(item, args[1]) for key, item in items}
    if origin is frozenset:
        return frozenset(_value(item, args[0]) for item in items)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_value(item, args[0]) for item in items)
    if len(items) != len(args):
        raise TypeError(f"expected {len(args)} items, got {len(items)}")
    return tuple(_value(item, arg) for item, arg in zip(items, args))


def _dataclass(data: Any, cls: Any) -> Any:
    hints = _hints(cls)
    fields = _checked(data, dict)
    if set(fields) != set(hints):
        raise TypeError(f"{cls.__name__} has fields {sorted(hints)}, not {sorted(fields)}")
    return cls(**{name: _value(fields[name], hint) for name, hint in hints.items()})


@cache
def _hints(cls: Any) -> dict[str, Any]:
    hints = get_type_hints(cls)
    return {field.name: hints[field.name] for field in dataclasses.fields(cls)}


def _checked(data: Any, kind: type) -> Any:
    if not isinstance(data, kind) or (kind is int and isinstance(data, bool)):
        raise TypeError(f"expected {kind.__name__}, got {type(data).__name__}")
    return data
