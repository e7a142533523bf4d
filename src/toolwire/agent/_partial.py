"""A typed run's partial output: the ``T`` built from the fields complete so far.

Theory of operation
-------------------
:meth:`toolwire.Agent.stream_output` turns the live partial JSON of the
answer (:class:`~toolwire.run.OutputDelta.partial`) into partial objects of
the output type. What is complete is asked of the incremental parser
(:meth:`~toolwire.stream.partial.PartialJSONParser.settled`, O(1)), never
guessed from the text, and each complete value is validated once, alone:

* an object type (pydantic model, dataclass, ``TypedDict``): a field appears
  once its value is complete, validated with the field's own type; a field
  whose type is a ``list[...]`` appears as soon as its list starts and grows
  by complete items, each validated with the item type;
* a ``list[...]``: it grows by complete items;
* anything else (a ``Literal``, a union answered natively): nothing until
  the validated output itself.

A pydantic model is made with ``model_construct`` (``model_fields_set``
names the fields there; one not there yet has its default, if it has one,
else is unset), a dataclass without ``__init__`` (``object.__new__``, then
its fields there set: ``vars()`` names them; one not there reads as its
class default, if it has one, else is unset), a ``TypedDict`` is a dict. A
value that does not validate alone does not appear (the answer as a whole
is then refused anyway).

Each delta costs O(1) when nothing completes; each complete value is
serialized and validated once (strict JSON mode, as the whole answer is): the
reading stays linear in the output's size. A list (the output's, or a list
field's) is the builder's own, grown in place from one partial to the next:
copy it (or ``model_dump()``) to keep a snapshot.
"""

from __future__ import annotations

import dataclasses
import itertools
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from toolwire.stream import jsonio

__all__ = ["ListShape", "ObjectShape", "PartialOutput", "Settled", "Shape", "shape_of"]

Settled = Callable[[Any, int], bool]
"""Whether every value so far in a container opened at a depth is complete."""

Kind = Literal["model", "dataclass", "dict"]


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectShape:
    """How to build a partial object type: its fields by JSON key."""

    cls: Any
    kind: Kind
    fields: dict[str, tuple[str, TypeAdapter[Any]]]
    """JSON key -> (attribute name, the field's adapter)."""
    items: dict[str, TypeAdapter[Any]]
    """JSON key -> the item adapter of a field that is a ``list[...]``."""


@dataclasses.dataclass(frozen=True, slots=True)
class ListShape:
    """How to build a partial ``list[...]``: its item adapter."""

    item: TypeAdapter[Any]


Shape = ObjectShape | ListShape


def shape_of(output_type: Any) -> Shape | None:
    """The shape of ``output_type``; ``None`` for a type built only whole."""
    if get_origin(output_type) is list and get_args(output_type):
        return ListShape(TypeAdapter(get_args(output_type)[0]))
    try:
        if isinstance(output_type, type) and issubclass(output_type, BaseModel):
            return _model_shape(output_type)
        if dataclasses.is_dataclass(output_type) and isinstance(output_type, type):
            return _hinted_shape(output_type, "dataclass")
        if is_typeddict(output_type):
            return _hinted_shape(output_type, "dict")
    except (NameError, TypeError):  # hints that do not resolve: built whole
        return None
    return None


def _model_shape(cls: type[BaseModel]) -> ObjectShape:
    fields: dict[str, tuple[str, TypeAdapter[Any]]] = {}
    items: dict[str, TypeAdapter[Any]] = {}
    for name, info in cls.model_fields.items():
        key = info.alias or name
        annotated: Any = Annotated[info.annotation, info]  # the field's constraints too
        fields[key] = (name, TypeAdapter(annotated))
        item = _list_item(info.annotation)
        if item is not None:
            items[key] = item
    return ObjectShape(cls, "model", fields, items)


def _hinted_shape(cls: Any, kind: Kind) -> ObjectShape:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, tuple[str, TypeAdapter[Any]]] = {}
    items: dict[str, TypeAdapter[Any]] = {}
    names = [f.name for f in dataclasses.fields(cls)] if kind == "dataclass" else list(hints)
    for name in names:
        fields[name] = (name, TypeAdapter(hints[name]))
        item = _list_item(hints[name])
        if item is not None:
            items[name] = item
    return ObjectShape(cls, kind, fields, items)


def _list_item(annotation: Any) -> TypeAdapter[Any] | None:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is list and get_args(annotation):
        return TypeAdapter(get_args(annotation)[0])
    return None


class _Growing:
    """A list being read: its JSON list, our validated items, how many were taken."""

    __slots__ = ("item", "json", "key", "out", "taken")

    def __init__(self, key: str, json: list[Any], item: TypeAdapter[Any]) -> None:
        self.key = key
        self.json = json
        self.item = item
        self.out: list[Any] = []
        self.taken = 0


class PartialOutput:
    """The partial ``T`` of one answer, updated from its partial JSON (see the module docstring).

    ``depth`` is where the output's own value is in the parsed JSON (1 when
    it is wrapped as ``{"response": ...}``), for :data:`Settled`."""

    __slots__ = ("_done", "_growing", "_keys", "_settled", "depth", "shape", "strict")

    def __init__(self, shape: Shape, settled: Settled, *, depth: int, strict: bool) -> None:
        self.shape = shape
        self._settled = settled
        self.depth = depth
        self.strict = strict
        self._keys = 0
        """How many keys of the object were taken (complete)."""
        self._done: dict[str, Any] = {}
        """Attribute name -> validated value, of the fields there."""
        self._growing: _Growing | None = None
        """The list being read: the output, or the object's last field."""

    def update(self, partial: Any) -> Any:
        """The partial ``T`` when this delta completed more of it, else ``None``."""
        shape = self.shape
        if isinstance(shape, ListShape):
            if not isinstance(partial, list):
                return None
            growing = self._growing
            if growing is None or growing.json is not partial:
                growing = self._growing = _Growing("", partial, shape.item)
            return growing.out if self._items(growing, self.depth) else None
        if not isinstance(partial, dict):
            return None
        return self._build(shape) if self._fields(shape, partial) else None

    def _items(self, growing: _Growing, depth: int) -> bool:
        """Take the complete items of a list (open at ``depth``) not taken yet;
        say if any were. An item that does not validate alone is left out."""
        json = growing.json
        n = len(json)
        if n and not self._settled(json, depth):
            n -= 1  # the last item is still being read
        if n <= growing.taken:
            return False
        out = growing.out
        for value in json[growing.taken : n]:
            checked = self._check(growing.item, value)
            if checked is not _FAILED:
                out.append(checked)
        growing.taken = n
        return True

    def _fields(self, shape: ObjectShape, json: dict[str, Any]) -> bool:
        """Take the object's fields complete since the last delta, and the
        items of a list field being read; say if anything was taken."""
        changed = False
        n = len(json)
        settled = self._settled(json, self.depth)
        complete = n if settled else n - 1
        if complete > self._keys:
            for key in itertools.islice(json, self._keys, complete):
                changed |= self._whole(shape, key, json[key])
            self._keys = complete
        if not settled and n:
            last = next(reversed(json))
            growing = self._growing
            if growing is None or growing.key != last:
                item = shape.items.get(last)
                value = json[last]
                if item is None or not isinstance(value, list):
                    return changed
                growing = self._growing = _Growing(last, value, item)
                self._done[shape.fields[last][0]] = growing.out
                changed = True
            changed |= self._items(growing, self.depth + 1)
        return changed

    def _whole(self, shape: ObjectShape, key: str, value: Any) -> bool:
        """Take a complete field; say if it is one of the type's."""
        found = shape.fields.get(key)
        if found is None:
            return False
        name, adapter = found
        growing = self._growing
        if growing is not None and growing.key == key:
            self._growing = None
            self._items(growing, self.depth + 1)  # it closed: its last items
            return True
        checked = self._check(adapter, value)
        if checked is _FAILED:
            return False
        self._done[name] = checked
        return True

    def _check(self, adapter: TypeAdapter[Any], value: Any) -> Any:
        try:
            return adapter.validate_json(jsonio.dumps(value), strict=self.strict)
        except (ValidationError, ValueError):
            return _FAILED

    def _build(self, shape: ObjectShape) -> Any:
        done = dict(self._done)
        if shape.kind == "dict":
            return done
        if shape.kind == "model":
            return shape.cls.model_construct(_fields_set=set(done), **done)
        obj = object.__new__(shape.cls)
        for name, value in done.items():
            object.__setattr__(obj, name, value)
        return obj


_FAILED: Any = object()
"""A value that did not validate alone."""
