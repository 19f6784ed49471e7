"""Dialogs agents show that wait for a person (`prompt:<agent>`): recorded once by the agent's hooks or the
pane watcher, whichever tells it first (bus.inbox.prompt_record), answered once (`prompt-answered:<id>`)."""

from __future__ import annotations

import time
import uuid

import redis

from bus.inbox import prompt_record
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import read_hash, write_hash
from bus.wire.keys import Keys

ANSWERED_TTL = 86400
LATELY = 30  # seconds a second answer to a dialog that has gone is told "already answered"


class Prompt(HashRecord):
    """One open dialog; `agent` is the key's, not a field of the hash. The hooks write it too
    (worker/hooks/agent_event.py), as strings by hand: the hot path cannot afford pydantic;
    tests/unit/test_hash_record.py reads what they write."""

    id: str = ""
    agent: str
    kind: str = ""  # permission | plan | ask | trust
    tool: str = ""
    detail: str = ""  # the command, path or plan; the folder of a trust dialog
    question: str = ""
    options: tuple[str, ...] = ()
    at: float = 0.0
    question_id: str = ""  # the question an AskUserQuestion dialog opened

    def to_hash(self) -> dict[str, str]:
        stored = super().to_hash()
        del stored["agent"]
        return stored


class PromptStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def get(self, agent: str) -> Prompt | None:
        key = self.keys.prompt(agent)
        data = read_hash(self.client, key)
        return Prompt.from_hash(data, key=key, agent=agent) if data.get("id") else None

    def record(
        self,
        agent: str,
        kind: str,
        detail: str = "",
        options: tuple[str, ...] = (),
        *,
        tool: str = "",
        question: str = "",
        replacing: str = "",
    ) -> Prompt | None:
        """A dialog seen on the pane (one no hook told: the trust dialog, auto mode's, any other), recorded
        only if the agent's record is still `replacing` (the id read, "" for none); None when another
        teller (the agent's hook) recorded first: read the record again."""
        prompt = Prompt(
            id=f"p-{uuid.uuid4().hex[:8]}",
            agent=agent,
            kind=kind,
            tool=tool,
            detail=detail,
            question=question,
            options=options,
            at=time.time(),
        )
        told = prompt_record.command(self.keys, agent, replacing, "record", prompt.to_hash())
        recorded, _found = prompt_record.outcome(self.client.execute_command(*told))
        return prompt if recorded else None

    def link_question(self, agent: str, prompt_id: str, question_id: str) -> None:
        """The question people answer the dialog by: forgotten with the dialog (`clear`)."""
        if (current := self.get(agent)) is not None and current.id == prompt_id:
            self.client.hset(self.keys.prompt(agent), "question_id", question_id)

    def claim(self, prompt_id: str, agent: str = "") -> bool:
        """The first answer to a dialog takes it; every later one gets False."""
        at = f"{time.time():.3f}"
        if not self.client.set(self.keys.prompt_answered(prompt_id), at, nx=True, ex=ANSWERED_TTL):
            return False
        if agent:
            self.client.set(self.keys.answered_lately(agent), prompt_id, ex=LATELY)
        return True

    def typed(self, prompt_id: str, at: float) -> None:
        """The claimed answer's keys were typed (again): it counts as answered at `at`."""
        self.client.set(self.keys.prompt_answered(prompt_id), f"{at:.3f}", xx=True, keepttl=True)

    def answered_lately(self, agent: str) -> bool:
        """Whether one of the agent's dialogs was answered in the last LATELY seconds (it may be gone)
        and nothing was sent to the agent since."""
        return bool(self.client.exists(self.keys.answered_lately(agent)))

    def moved_on(self, agent: str) -> None:
        """The agent got a new message: a late answer is about nothing any more."""
        self.client.delete(self.keys.answered_lately(agent))

    def answered(self, prompt_id: str) -> bool:
        return bool(self.client.exists(self.keys.prompt_answered(prompt_id)))

    def answered_at(self, prompt_id: str) -> float | None:
        """When the dialog was answered (None: not yet; 0.0: by an older ittybus, time unknown)."""
        found = self.client.get(self.keys.prompt_answered(prompt_id))
        if found is None:
            return None
        try:
            return float(found)
        except ValueError:
            return 0.0

    def clear(self, agent: str, prompt_id: str | None = None, *, closed: bool = False) -> None:
        """Forget the agent's dialog (only if it is still `prompt_id`), and the question it opened.
        `closed`: the watcher saw it close before any hook told it; its kind and question are kept for
        TOLD_LATE seconds, so that a hook telling it late tells nothing (worker.hooks.prompt_tell)."""
        current = self.get(agent)
        if current is None or (prompt_id is not None and current.id != prompt_id):
            return
        pipe = self.client.pipeline()
        pipe.delete(self.keys.prompt(agent))
        if current.question_id:
            pipe.delete(self.keys.question(current.question_id))
            pipe.zrem(self.keys.questions, current.question_id)
        if closed:
            remembered = {"id": current.id, "kind": current.kind, "question": current.question}
            write_hash(pipe, self.keys.prompt_closed(agent), remembered)
            pipe.expire(self.keys.prompt_closed(agent), int(prompt_record.TOLD_LATE))
        pipe.execute()
