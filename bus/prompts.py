"""Dialogs agents show that wait for a person (`prompt:<agent>`): recorded by the agent's hooks (or the
pane watcher, for dialogs that come before any hook), answered once (`prompt-answered:<id>`)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

import redis

from bus.hashes import read_hash
from bus.keys import Keys

PROMPT_TTL = 86400
ANSWERED_TTL = 86400


@dataclass(frozen=True)
class Prompt:
    id: str
    agent: str
    kind: str  # permission | plan | ask | trust
    tool: str = ""
    detail: str = ""  # the command, path or plan; the folder of a trust dialog
    question: str = ""
    options: tuple[str, ...] = ()
    at: float = 0.0
    question_id: str = ""  # the question an AskUserQuestion dialog opened

    @classmethod
    def from_hash(cls, agent: str, data: dict[str, str]) -> Prompt:
        try:
            options = json.loads(data.get("options") or "[]")
        except ValueError:
            options = []
        return cls(
            id=data.get("id", ""),
            agent=agent,
            kind=data.get("kind", ""),
            tool=data.get("tool", ""),
            detail=data.get("detail", ""),
            question=data.get("question", ""),
            options=tuple(str(o) for o in options) if isinstance(options, list) else (),
            at=float(data.get("at") or 0),
            question_id=data.get("question_id", ""),
        )


class PromptStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def get(self, agent: str) -> Prompt | None:
        data = read_hash(self.client, self.keys.prompt(agent))
        return Prompt.from_hash(agent, data) if data.get("id") else None

    def record(self, agent: str, kind: str, detail: str = "", options: tuple[str, ...] = ()) -> Prompt:
        """A dialog seen on the pane (the trust dialog, which comes before any hook)."""
        prompt_id = f"p-{uuid.uuid4().hex[:8]}"
        prompt = Prompt(prompt_id, agent, kind, detail=detail, options=options, at=time.time())
        key = self.keys.prompt(agent)
        pipe = self.client.pipeline()
        pipe.delete(key)
        pipe.hset(
            key,
            mapping={
                "id": prompt.id,
                "kind": kind,
                "detail": detail,
                "options": json.dumps(list(options)),
                "at": str(prompt.at),
            },
        )
        pipe.expire(key, PROMPT_TTL)
        pipe.execute()
        return prompt

    def claim(self, prompt_id: str) -> bool:
        """The first answer to a dialog takes it; every later one gets False."""
        return bool(self.client.set(self.keys.prompt_answered(prompt_id), "1", nx=True, ex=ANSWERED_TTL))

    def answered(self, prompt_id: str) -> bool:
        return bool(self.client.exists(self.keys.prompt_answered(prompt_id)))

    def clear(self, agent: str, prompt_id: str | None = None) -> None:
        """Forget the agent's dialog (only if it is still `prompt_id`), and the question it opened."""
        current = self.get(agent)
        if current is None or (prompt_id is not None and current.id != prompt_id):
            return
        pipe = self.client.pipeline()
        pipe.delete(self.keys.prompt(agent))
        if current.question_id:
            pipe.delete(self.keys.question(current.question_id))
            pipe.zrem(self.keys.questions, current.question_id)
        pipe.execute()
