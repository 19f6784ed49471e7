"""The id rule shared by tasks, agents and projects, and slugs made from titles."""

from __future__ import annotations

import pytest

from bus.errors import InvalidInput
from bus.wire.ids import MAX_ID_LENGTH, folder_project, slugify, validate_id


@pytest.mark.parametrize(
    "value",
    ["a", "design-auth", "agent-1", "v1_2-beta", "0", "a" * MAX_ID_LENGTH],
    ids=["one-char", "slug", "agent", "underscores", "digit", "longest"],
)
def test_good_ids_pass_through(value: str) -> None:
    assert validate_id("task", value) == value


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("", "empty"),
        ("a" * (MAX_ID_LENGTH + 1), "65 characters"),
        ("Design", "use 1-64"),
        ("-lead", "use 1-64"),
        (".hidden", "use 1-64"),
        ("has space", "use 1-64"),
        ("a/b", "use 1-64"),
        ("a:b", "use 1-64"),
        ("a..b", "use 1-64"),
        ("end.", "use 1-64"),
        ("a.b", "use 1-64"),
        ("caf\u00e9", "use 1-64"),
    ],
    ids=[
        "empty",
        "too-long",
        "upper",
        "dash-first",
        "dot-first",
        "space",
        "slash",
        "colon",
        "dotdot",
        "trailing-dot",
        "dot",
        "non-ascii",
    ],
)
def test_bad_ids_are_refused_naming_value_and_rule(value: str, hint: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_id("agent", value)
    message = str(caught.value)
    assert "agent id" in message
    assert hint in message
    if value:
        assert repr(value) in message


def test_non_text_is_refused() -> None:
    with pytest.raises(InvalidInput, match="expected text"):
        validate_id("task", 12)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Design auth", "design-auth"),
        ("  Implement the REST endpoints!  ", "implement-the-rest-endpoints"),
        ("Caf\u00e9 cr\u00e8me v2.0", "cafe-creme-v2-0"),
        ("!!!", "task"),
        ("\u65e5\u672c\u8a9e", "task"),
        ("x" * 100, "x" * 48),
        ("a" * 47 + " b", "a" * 47),
    ],
    ids=["simple", "punctuation", "accents", "nothing-left", "no-ascii", "truncated", "no-trailing-dash"],
)
def test_slugify(title: str, slug: str) -> None:
    assert slugify(title) == slug
    assert validate_id("task", slugify(title)) == slug


@pytest.mark.parametrize(
    ("folder", "project"),
    [("backend", "backend"), ("MyApp", "myapp"), ("my app!", "my-app"), ("x" * 70, "x" * MAX_ID_LENGTH)],
    ids=["good-id", "upper-case", "spaces", "too-long"],
)
def test_folder_project(folder: str, project: str) -> None:
    assert folder_project(folder) == project
