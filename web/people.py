"""The people the owner let into the page by name (`ib web --invite NAME`), as `IB_TELEGRAM_ALLOWED_USERS`
lets people into the bot: each with a token of their own, kept as its SHA-256 only. Pure: the file's text
read and written, a name checked, a token looked up in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from bus.wire.names import name_problem
from web.errors import WebConfigError

HEADER = "# ib web: the people let in (ib web --invite NAME, --revoke NAME): a name and its token's SHA-256\n"
HEX = frozenset("0123456789abcdef")
PERSON_RULE = "1-64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit, no '..'"


class PeopleError(WebConfigError):
    """The people file, a name or an invitation is wrong; the message says which and the fix."""


@dataclass(frozen=True)
class Person:
    name: str
    digest: str  # the hex SHA-256 of the person's token


@dataclass(frozen=True)
class People:
    """Who is let in besides the owner, in the order they were invited."""

    people: tuple[Person, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.people)

    def name_of(self, token: str) -> str | None:
        """The person whose token this is, or None; every digest is compared, in constant time each."""
        given = digest(token)
        found = None
        for person in self.people:
            if hmac.compare_digest(given, person.digest):
                found = person.name
        return found

    def invited(self, name: str, token: str) -> People:
        """These people and `name` with `token`; PeopleError for a bad name or one let in already."""
        problem = person_problem(name)
        if problem:
            raise PeopleError(problem)
        if name in self.names:
            raise PeopleError(f"{name} is let in already: --revoke {name} first for a new address")
        return People((*self.people, Person(name, digest(token))))

    def without(self, name: str) -> People:
        """These people but `name`; PeopleError when `name` is not one of them."""
        if name not in self.names:
            known = ", ".join(self.names) or "nobody but you"
            raise PeopleError(f"{name!r} is not let in (who is: {known}); nothing was changed")
        return People(tuple(p for p in self.people if p.name != name))


NOBODY = People()


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def person_problem(name: str) -> str | None:
    """What is wrong with `name` as a person's name (it goes into senders like `web:NAME`), or None."""
    return name_problem("name", name, "._-", PERSON_RULE)


def parse(text: str, where: str) -> People:
    """The people in a people file's text; PeopleError naming the line (`where` names the file)."""
    found: list[Person] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, hashed = line.partition(" ")
        hashed = hashed.strip()
        problem = person_problem(name)
        if problem is None and (len(hashed) != 64 or not set(hashed) <= HEX):
            problem = "a name and a SHA-256 (64 hex digits) are expected"
        if problem is None and name in (p.name for p in found):
            problem = f"{name} is there twice"
        if problem:
            raise PeopleError(f"{where} line {number}: {problem}; fix the line or delete the file")
        found.append(Person(name, hashed))
    return People(tuple(found))


def text_of(people: People) -> str:
    return HEADER + "".join(f"{p.name} {p.digest}\n" for p in people.people)
