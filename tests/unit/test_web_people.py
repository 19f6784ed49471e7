"""The people let into `ib web` by name: their file read and written (web.people, web.people_file), a name
checked, a token looked up, the gate's decision with several people (web.guard) and whom a click is from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from web.actions import sender_of
from web.guard import OWNER, Asked, Decision, Verdict, decide
from web.invite import Change
from web.people import NOBODY, People, PeopleError, digest, parse, text_of
from web.people_file import PeopleWatch, read_people, write_people

OWNER_TOKEN = "o" * 43
ALICE, BOB = "a" * 43, "b" * 43
OWN = "https://box.example:8443"
TEAM = NOBODY.invited("alice", ALICE).invited("bob", BOB)


def _asked(cookie: str = "", query: str = "", origin: str = "", site: str = "") -> Asked:
    return Asked(cookie, query, origin, site, OWN)


@pytest.mark.parametrize(
    ("asked", "people", "decision"),
    [
        (_asked(cookie=OWNER_TOKEN), TEAM, Decision(Verdict.PASS, OWNER)),
        (_asked(cookie=ALICE), TEAM, Decision(Verdict.PASS, "alice")),
        (_asked(cookie=BOB, query=ALICE), TEAM, Decision(Verdict.PASS, "bob")),
        (_asked(query=BOB), TEAM, Decision(Verdict.ADMIT, "bob")),
        (_asked(query=ALICE, origin=OWN, site="same-origin"), TEAM, Decision(Verdict.ADMIT, "alice")),
        (_asked(cookie=ALICE, query=OWNER_TOKEN), TEAM.without("alice"), Decision(Verdict.ADMIT, OWNER)),
        (_asked(cookie=ALICE), TEAM.without("alice"), Decision(Verdict.REFUSE)),
        (_asked(query=ALICE), TEAM.without("alice"), Decision(Verdict.REFUSE)),
        (_asked(cookie=ALICE), NOBODY, Decision(Verdict.REFUSE)),
        (_asked(query=ALICE, origin="https://evil.example"), TEAM, Decision(Verdict.REFUSE)),
        (_asked(query=BOB, site="cross-site"), TEAM, Decision(Verdict.REFUSE)),
        (_asked(cookie=ALICE[:-1]), TEAM, Decision(Verdict.REFUSE)),
        (_asked(cookie=digest(ALICE)), TEAM, Decision(Verdict.REFUSE)),  # the kept hash is no token
    ],
    ids=[
        "owner-cookie",
        "alice-cookie",
        "cookie-before-query",
        "bob-query",
        "alice-query-same-origin",
        "revoked-cookie-owner-query",
        "revoked-cookie",
        "revoked-query",
        "nobody-let-in",
        "alice-query-other-origin",
        "bob-query-cross-site",
        "alice-cookie-short",
        "the-hash-itself",
    ],
)
def test_who_may_in_with_several_people(asked: Asked, people: People, decision: Decision) -> None:
    assert decide(asked, OWNER_TOKEN, people) == decision


@pytest.mark.parametrize(
    ("person", "sender"), [(OWNER, "web"), ("alice", "web:alice")], ids=["owner", "alice"]
)
def test_a_click_is_from_the_person_who_made_it(person: str, sender: str) -> None:
    assert sender_of(person) == sender


def test_the_file_keeps_names_and_hashes_and_reads_back() -> None:
    text = text_of(TEAM)
    assert ALICE not in text and BOB not in text and digest(ALICE) in text
    assert parse(text, "f") == TEAM
    assert parse("\n# a note\n  alice " + digest(ALICE) + "  \n", "f").names == ("alice",)
    assert TEAM.name_of(ALICE) == "alice" and TEAM.name_of(BOB) == "bob"
    assert TEAM.name_of(OWNER_TOKEN) is None and TEAM.without("bob").name_of(BOB) is None


GOOD = digest(ALICE)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (f"al/ice {GOOD}\n", "f line 1: bad name 'al/ice'"),
        (f"# head\n\nalice {GOOD[:-1]}\n", "f line 3: a name and a SHA-256"),
        (f"alice {GOOD.upper()}\n", "f line 1: a name and a SHA-256"),
        ("alice\n", "f line 1: a name and a SHA-256"),
        (f"alice {GOOD}\nalice {digest(BOB)}\n", "f line 2: alice is there twice"),
        (f"web:alice {GOOD}\n", "f line 1: bad name 'web:alice'"),
    ],
    ids=["bad-name", "short-hash", "upper-hash", "no-hash", "twice", "colon"],
)
def test_a_corrupt_people_file_names_its_line(text: str, said: str) -> None:
    with pytest.raises(PeopleError) as raised:
        parse(text, "f")
    assert str(raised.value).startswith(said) and str(raised.value).endswith(
        "fix the line or delete the file"
    )


@pytest.mark.parametrize(
    "name", ["", "-alice", "al ice", "al:ice", "a..b", "x" * 65, "älice", "../x"], ids=str
)
def test_a_bad_name_is_not_invited(name: str) -> None:
    with pytest.raises(PeopleError, match="bad name"):
        TEAM.invited(name, "t" * 43)


def test_a_second_invitation_and_an_unknown_revocation_change_nothing() -> None:
    with pytest.raises(PeopleError, match="alice is let in already: --revoke alice first"):
        TEAM.invited("alice", "t" * 43)
    with pytest.raises(PeopleError, match=r"'carol' is not let in \(who is: alice, bob\)"):
        TEAM.without("carol")
    with pytest.raises(PeopleError, match="who is: nobody but you"):
        NOBODY.without("carol")


def test_the_file_is_the_owners_alone_and_is_refused_otherwise(tmp_path: Path) -> None:
    path = str(tmp_path / "web-people")
    assert read_people(path) == NOBODY
    write_people(path, TEAM)
    assert os.stat(path).st_mode & 0o777 == 0o600 and read_people(path) == TEAM
    os.chmod(path, 0o644)
    with pytest.raises(PeopleError, match=f"may be read by others: chmod 600 {path}"):
        read_people(path)
    os.chmod(path, 0o600)
    (tmp_path / "binary").write_bytes(b"\xff\xfe")
    os.chmod(tmp_path / "binary", 0o600)
    with pytest.raises(PeopleError, match="is not text"):
        read_people(str(tmp_path / "binary"))
    with pytest.raises(PeopleError, match="is not a regular file"):
        read_people(str(tmp_path))


def test_the_watch_follows_the_file_and_a_bad_one_lets_the_owner_alone_in(tmp_path: Path) -> None:
    path = str(tmp_path / "web-people")
    watch = PeopleWatch(path)
    assert watch.current() == NOBODY
    write_people(path, TEAM)
    assert watch.current() == TEAM
    write_people(path, TEAM.without("alice"))
    assert watch.current().names == ("bob",)
    os.chmod(path, 0o640)
    assert watch.current() == NOBODY
    os.chmod(path, 0o600)
    assert watch.current().names == ("bob",)
    Path(path).write_text("bob nothing\n")
    assert watch.current() == NOBODY
    os.unlink(path)
    assert watch.current() == NOBODY


@pytest.mark.parametrize(
    ("change", "asked", "problem"),
    [
        (Change(), False, None),
        (Change(invite=""), True, None),  # an empty name is asked for, and refused as a bad name
        (Change(revoke="bob"), True, None),
        (Change(invite="x", people=True), True, "give one of --invite, --revoke and --people at a time"),
        (Change(invite="x", revoke="y"), True, "give one of --invite, --revoke and --people at a time"),
    ],
    ids=["serve", "empty-invite", "revoke", "invite-and-list", "invite-and-revoke"],
)
def test_one_change_at_a_time(change: Change, asked: bool, problem: str | None) -> None:
    assert change.asked is asked and change.problem() == problem
