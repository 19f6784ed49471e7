"""Plain records for the hot paths, which cannot afford `typing` (NamedTuple) or `dataclasses` at import.

A subclass lists its fields in `__slots__` and sets them in `__init__`; equality and repr come from here.
"""

from __future__ import annotations


class Record:
    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and type(self) is type(other) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"
