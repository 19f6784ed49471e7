"""JSON for the hot paths through CPython's C accelerator (`_json`), without importing the `json` package.

`import json` pulls in `re`, `enum` and `functools` (its decoder compiles regular expressions at import):
about 7 ms on every hook call, i.e. on every tool call of every agent. The C encoder and scanner are the
very functions `json.dumps` / `json.loads` use on their fast path; where `_json` is missing (another
Python implementation) this falls back to the `json` package. A property test keeps both in agreement.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]

_WHITESPACE = " \t\n\r"


class _ScanContext:
    """The attributes the C scanner reads from a decoder (see json.decoder.JSONDecoder)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}  # noqa: RUF012 - read by the C scanner, which keeps its own memo

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


def _not_serializable(obj: object) -> object:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


if _json is not None:
    _scan = _json.make_scanner(_ScanContext())  # type: ignore[arg-type] # a duck-typed decoder
    _encode = _json.make_encoder(
        None, _not_serializable, _json.encode_basestring, None, ":", ",", False, False, True
    )


def dumps(obj: Any) -> str:
    """Compact JSON, non-ASCII kept as is, control characters escaped (= json.dumps(obj,
    ensure_ascii=False, separators=(",", ":")))."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if isinstance(obj, str):
        return _json.encode_basestring(obj)
    return "".join(_encode(obj, 0))


def loads(text: str) -> Any:
    """Parse one JSON document (= json.loads); raises ValueError on anything else."""
    if _json is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as e:
        raise ValueError(f"not JSON: expecting a value at character {e.value}") from None
    except SystemError:
        # _json reports some syntax errors through json.decoder.JSONDecodeError and fails this way when
        # that module is not loaded yet: load it (only on bad input) and let json say what is wrong.
        import json

        return json.loads(text)
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"not JSON: extra data at character {end}")
    return value
