"""The one conversion between records and Redis hashes: every record kept as a hash subclasses `HashRecord`.

A hash holds strings: numbers are decimal strings, booleans "1" / "0" (an empty string reads as False),
None is "", tuples, lists, dicts and nested models are JSON. Reading ignores keys the record does not have
and reads an empty number as the field's default, as the hand-written readers before it did; a value that
does not fit raises `BadRecord`, one line naming the field.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Any, ClassVar, Self, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from bus.errors import BadRecord

_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}
_EXACT = {"str": (str,), "int": (int,), "float": (float, int), "bool": (bool,)}  # no check needed
_MAX_SHOWN = 60  # characters of a bad value quoted in an error


class _Codec:
    """How one field is kept: its hash key, its kind (str, int, float, bool or json), None allowed or not."""

    __slots__ = ("adapter", "annotation", "exact", "field", "has_default", "key", "kind", "optional", "plain")

    def __init__(self, field: str, key: str, annotation: Any, has_default: bool) -> None:
        self.field, self.key, self.has_default, self.annotation = field, key, has_default, annotation
        self.optional = False
        bare = annotation
        if get_origin(annotation) in (Union, types.UnionType):
            inner = [a for a in get_args(annotation) if a is not type(None)]
            self.optional = len(inner) < len(get_args(annotation))
            bare = inner[0] if len(inner) == 1 else annotation
        self.kind = _SCALARS.get(bare, "json")
        self.exact = _EXACT.get(self.kind, ())
        self.plain = self.kind == "str" and not self.optional  # any string, "" too, is the value
        self.adapter: TypeAdapter[Any] | None = None  # built on the first partial update of this field

    def decode(self, raw: str) -> Any:
        """The Python value of a stored string that is not plain text (an empty one, or JSON); pydantic
        then checks its type. `_DEFAULT` stands for "the field's default"."""
        if raw == "":
            if self.optional:
                return None
            if self.kind == "bool":
                return False
            return _DEFAULT if self.has_default else raw
        try:
            return json.loads(raw)
        except ValueError:
            raise BadRecord(f"field {self.key!r} is not JSON: {_shown(raw)}") from None

    def encode(self, value: Any) -> str:
        """The stored string of a value in pydantic's JSON mode (tuples as lists, models as dicts)."""
        if value is None:
            return ""
        if self.kind == "json":
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, bool):
            return "1" if value else "0"
        return value if isinstance(value, str) else str(value)


_DEFAULT = object()


class HashRecord(BaseModel):
    """A frozen record stored as one Redis hash. `hash_keys` renames fields whose key differs."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    hash_keys: ClassVar[dict[str, str]] = {}
    _codecs: ClassVar[dict[str, _Codec]]  # by field name
    _by_key: ClassVar[dict[str, _Codec]]  # by hash key

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._codecs = {
            name: _Codec(name, cls.hash_keys.get(name, name), info.annotation, not info.is_required())
            for name, info in cls.model_fields.items()
        }
        cls._by_key = {c.key: c for c in cls._codecs.values()}

    @classmethod
    def from_hash(cls, data: Mapping[str, str], *, key: str = "", **known: Any) -> Self:
        """The record in `data` (a hash as read); `known` gives fields kept elsewhere (other keys, the key's
        own name) as Python values. `key` names the hash in errors."""
        where = _where(cls, f"at {key}" if key else "")
        values: dict[str, Any] = {}
        by_key = cls._by_key
        try:
            for name, raw in data.items():
                codec = by_key.get(name)
                if codec is None:
                    continue
                if codec.plain or (raw and codec.kind != "json"):
                    values[codec.field] = raw  # pydantic parses numbers and "1" / "0" itself, fast
                elif (value := codec.decode(raw)) is not _DEFAULT:
                    values[codec.field] = value
        except BadRecord as e:
            raise BadRecord(f"{where}: {e}") from None
        values.update(known)
        try:
            return cls.model_validate(values)
        except ValidationError as e:
            raise BadRecord(f"{where}: {_first_error(cls, e, values)}") from None

    @classmethod
    def from_dict(cls, body: Mapping[str, Any], *, source: str = "") -> Self:
        """The record in `body`, the form `as_dict` gives (a worker's reply, a JSON file); `source` names
        where it came from in errors."""
        try:
            return cls.model_validate(body)
        except ValidationError as e:
            where = _where(cls, f"from {source}" if source else "")
            raise BadRecord(f"{where}: {_first_error(cls, e, body)}") from None

    def to_hash(self) -> dict[str, str]:
        """Every field as the hash stores it."""
        dumped = self.model_dump(mode="json")
        return {c.key: c.encode(dumped[name]) for name, c in self._codecs.items()}

    @classmethod
    def hash_fields(cls, **changes: Any) -> dict[str, str]:
        """A partial update as the hash stores it: each name must be a field, each value must fit it."""
        out: dict[str, str] = {}
        for name, value in changes.items():
            codec = cls._codecs.get(name)
            if codec is None:
                raise BadRecord(f"{cls.__name__} has no field {name!r}")
            if type(value) in codec.exact or (value is None and codec.optional):
                out[codec.key] = codec.encode(value)
                continue
            if codec.adapter is None:
                codec.adapter = TypeAdapter(codec.annotation)
            try:
                checked = codec.adapter.validate_python(value)
            except ValidationError as e:
                problem = e.errors()[0]["msg"]
                raise BadRecord(f"{cls.__name__} field {name!r} = {_shown(value)}: {problem}") from None
            out[codec.key] = codec.encode(codec.adapter.dump_python(checked, mode="json"))
        return out

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes`, each name a field and each value checked (pydantic's `model_copy` checks
        neither)."""
        for name in changes:
            if name not in self._codecs:
                raise BadRecord(f"{type(self).__name__} has no field {name!r}")
        try:
            return self.model_validate({**self.__dict__, **changes})
        except ValidationError as e:
            raise BadRecord(f"{_where(type(self), '')}: {_first_error(type(self), e, changes)}") from None

    @classmethod
    def hash_key(cls, name: str) -> str:
        """The hash key of field `name`, for commands that touch one field (HGET, HSETNX, HMGET)."""
        codec = cls._codecs.get(name)
        if codec is None:
            raise BadRecord(f"{cls.__name__} has no field {name!r}")
        return codec.key

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values (tuples as lists), for `--json` output and replies."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """The record as one JSON object, unicode kept as is."""
        return json.dumps(self.as_dict(), ensure_ascii=False)


def _where(cls: type[HashRecord], place: str) -> str:
    return f"bad {cls.__name__} record" + (f" {place}" if place else "")


def _first_error(cls: type[HashRecord], error: ValidationError, values: Mapping[str, Any]) -> str:
    first = error.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else ""
    codec = cls._codecs.get(name)
    field = codec.key if codec else name
    if first["type"] == "missing":
        return f"field {field!r} is missing"
    return f"field {field!r} = {_shown(values.get(name))}: {first['msg']}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."
