"""bus.wire.fastjson agrees with the json module on every document (it is the same C code, minus the
imports)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bus.wire import fastjson

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
documents = st.recursive(
    scalars, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_dumps_is_json_dumps(doc: object) -> None:
    assert fastjson.dumps(doc) == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(documents)
def test_loads_inverts_dumps(doc: object) -> None:
    assert fastjson.loads(json.dumps(doc)) == doc
    assert fastjson.loads(" \n" + fastjson.dumps(doc) + "\t ") == doc


@pytest.mark.parametrize(
    "text",
    ["", " ", "{", "{nope", '{"a" 1}', "[1,]", "1 2", "garbage", '{"a":1}x', "\x00"],
    ids=[
        "empty",
        "blank",
        "open",
        "bare-key",
        "no-colon",
        "trailing-comma",
        "two-values",
        "word",
        "extra",
        "nul",
    ],
)
def test_loads_refuses_what_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        fastjson.loads(text)


def test_constants_and_unserializable() -> None:
    assert math.isinf(fastjson.loads("Infinity")) and math.isnan(fastjson.loads("NaN"))
    with pytest.raises(TypeError, match="not JSON serializable"):
        fastjson.dumps({"x": object()})


def test_bad_input_in_a_fresh_interpreter_is_a_value_error() -> None:
    """Without json.decoder loaded, the C scanner cannot build its error: still a ValueError for us."""
    import subprocess
    import sys

    code = "from bus.wire import fastjson\ntry:\n fastjson.loads('{nope')\nexcept ValueError:\n print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr
