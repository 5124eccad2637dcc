"""One place where a public function's arguments become its scenario objects.

The engine's public functions take scenario objects (engine/scenarios/), and, for scripts, the CLI
and share links, the same fields as keywords. These two calls are the same:

    engine.serve_load("Llama-3.1-70B", "H100", tp=4, rate=3.0, input_tokens=1500,
                      output_tokens=300)
    engine.serve_load(Deployment("Llama-3.1-70B", "H100", tp=4),
                      Workload(input_tokens=1500, output_tokens=300, arrivals=OpenLoop(3.0)))

`bind` maps every keyword onto the one class of the call that declares it (its dataclass fields,
and the few other names its `from_fields` reads: the keyword form scripts already use), so each
field is declared once, in its class. An object may be given and then adjusted by keywords
(`serve_load(deployment, workload, rate=5.0)`): the object is copied with those fields replaced
and checked again.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from engine.assumptions import ASSUMPTION_NAMES


class Fields:
    """What every scenario class shares: built from keywords named after its fields.

    `ARG` is the object's name as a keyword argument (`deployment=`, `workload=`); `LEADING` the
    fields the keyword form passes positionally (`serve(model, hardware, ...)`); `ALIASES` other
    names of a field that earlier versions of the API took.
    """

    __slots__ = ()
    ARG: ClassVar[str] = ""
    LEADING: ClassVar[tuple[str, ...]] = ()
    ALIASES: ClassVar[Mapping[str, str]] = {}
    EXTRA: ClassVar[tuple[str, ...]] = ()  # other keywords its from_fields reads

    @classmethod
    def keywords(cls) -> frozenset[str]:
        """Every keyword this class takes from a call."""
        return _keywords(cls)

    @classmethod
    def of(cls, **values: Any) -> Self:
        """The object from keywords, the other names included (`Workload.of(rate=2.0, ...)`)."""
        return cls.from_fields(None, values)

    @classmethod
    def from_fields(cls, base: Self | None, values: dict[str, Any]) -> Self:
        """`base` with `values` replaced, or a new object from `values` (checked either way)."""
        check_known(cls, values)
        named: dict[str, Any] = values if not cls.ALIASES else {}
        if cls.ALIASES:
            for key, value in values.items():
                field = cls.ALIASES.get(key, key)
                if field in named and named[field] != value:
                    raise ValueError(f"{key}: given twice (as {field} too)")
                named[field] = value
        if base is None:
            return construct(cls, named)
        return dataclasses.replace(base, **named) if named else base  # type: ignore[type-var]


def check_known(cls: type, values: dict[str, Any]) -> None:
    """ValueError naming the first keyword `cls` does not take."""
    unknown = values.keys() - _keywords(cls)
    if unknown:
        raise ValueError(unknown_message(sorted(unknown)[0], (cls,)))


@functools.cache
def _keywords(cls: type) -> frozenset[str]:
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    return frozenset(names | set(cls.ALIASES) | set(cls.EXTRA))


@functools.cache
def _required(cls: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(cls)
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )


def construct(cls: type, values: dict[str, Any]) -> Any:
    """`cls(**values)`, with a missing field said as a ValueError naming it."""
    missing = [name for name in _required(cls) if name not in values]
    if missing:
        raise ValueError(f"{cls.__name__}: give {', '.join(missing)}")
    return cls(**values)


BIND_MEMO = 4096  # calls whose objects are kept (objects are immutable: shared safely)


def bind(leading: tuple[Any, Any], fields: dict[str, Any], *kinds: type[Fields]) -> tuple:
    """The objects of `kinds` for one call, in that order (None where nothing was given).

    A call whose arguments are all hashable is remembered (BIND_MEMO calls, keyed by each
    value's type as well, so `tp=True` is never taken for `tp=1`): a script calling
    `serve(...)` in a loop checks each distinct call once.

    Args:
        leading: the call's two leading positional arguments. The typed form passes the first
            kind's object (then the second may be another kind's object); the keyword form
            passes the first kind's LEADING fields (a model and an accelerator, say).
        fields: the call's other keywords: objects by their ARG name, or fields by name.
        kinds: the classes the function takes, the first one the leading object's.

    Raises:
        ValueError: an unknown keyword, a field given twice, or an object of the wrong kind.
    """
    try:
        key = (
            kinds,
            tuple((type(v), v) for v in leading),
            tuple((k, type(v), v) for k, v in fields.items()),
        )
        hash(key)
    except TypeError:  # an unhashable value (a list, a dict): checked afresh
        return _bind(leading, dict(fields), kinds)
    return _bind_memo(key)


@functools.lru_cache(maxsize=BIND_MEMO)
def _bind_memo(key: tuple) -> tuple:
    kinds, leading, items = key
    return _bind(tuple(v for _, v in leading), {k: v for k, _, v in items}, kinds)


def _bind(leading: tuple, fields: dict[str, Any], kinds: tuple) -> tuple:
    objects: dict[type, Any] = {}
    for kind in kinds:
        given = fields.pop(kind.ARG, None)
        if given is not None and isinstance(
            given, Mapping
        ):  # its fields as a dict (the older form of scheduler=)
            given = kind.from_fields(None, dict(given))
        if given is not None and not isinstance(given, kind):
            raise ValueError(f"{kind.ARG}: expected a {kind.__name__}, got {type(given).__name__}")
        objects[kind] = given
    _leading(leading=leading, fields=fields, objects=objects, kinds=kinds)
    route = _router(kinds)
    values: list[dict[str, Any]] = [{} for _ in kinds]
    for key, value in fields.items():
        index = route.get(key)
        if index is None:
            raise ValueError(unknown_message(key, kinds))
        values[index][key] = value
    return tuple(
        kind.from_fields(objects[kind], named) if named else objects[kind]
        for kind, named in zip(kinds, values, strict=True)
    )


@functools.cache
def _router(kinds: tuple[type, ...]) -> dict[str, int]:
    """Keyword -> the index of the kind that takes it (the first, if two would)."""
    route: dict[str, int] = {}
    for index, kind in reversed(list(enumerate(kinds))):
        route |= dict.fromkeys(kind.keywords(), index)
    return route


def _leading(leading, fields: dict, objects: dict, kinds: tuple) -> None:
    """Place the two leading positional arguments (see `bind`)."""
    head = kinds[0]
    first, second = leading
    if first is None and second is None:
        return
    if isinstance(first, head):
        objects[head] = first
        rest = [second] if second is not None else []
    else:
        for name, value in zip(head.LEADING, (first, second), strict=False):
            if value is not None and not _is_scenario(value, kinds):
                if name in fields:
                    raise ValueError(f"{name}: given twice (by position and by name)")
                fields[name] = value
        rest = [v for v in (first, second) if _is_scenario(v, kinds)]
    for value in rest:
        kind = next((k for k in kinds if isinstance(value, k)), None)
        if kind is None:
            raise ValueError(
                f"a {head.__name__} names its {' and '.join(head.LEADING)}: pass the other "
                f"arguments by name, got {type(value).__name__} {str(value)[:40]!r}"
            )
        if objects[kind] is not None:
            raise ValueError(f"{kind.ARG}: given twice")
        objects[kind] = value


def _is_scenario(value: object, kinds: tuple) -> bool:
    return isinstance(value, Fields)  # every kind is one


def unknown_message(name: str, kinds: tuple) -> str:
    """An unknown keyword, with what the call takes."""
    known = sorted(set().union(*(k.keywords() for k in kinds)) - {"overrides"})
    takes_assumptions = any("overrides" in k.keywords() for k in kinds)
    what = "unknown assumption or argument" if takes_assumptions else "unknown argument"
    extra = f"; assumptions: {', '.join(ASSUMPTION_NAMES)}" if takes_assumptions else ""
    return f"{what} {name[:60]!r} (known: {', '.join(known)}{extra})"
