"""Questions agents ask the person (`ib ask`): pending in Redis until acknowledged."""

from __future__ import annotations

import time
import uuid

import redis

from bus.errors import NotFound
from bus.stores.hash_record import HashRecord
from bus.stores.hashes import ordered, read_hash, read_hashes, write_hash
from bus.wire.keys import Keys


class Question(HashRecord):
    """One question. The hooks write it too (worker/hooks/agent_event.py), as strings by hand: the hot path
    cannot afford pydantic; tests/unit/test_hash_record.py reads what they write."""

    id: str
    agent: str = ""
    text: str = ""
    asked_at: float = 0.0
    project: str = ""
    options: tuple[str, ...] = ()
    dialog: str = ""  # the prompt id when the question is an agent's AskUserQuestion dialog


class QuestionStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def ask(
        self, agent: str, text: str, project: str = "", options: tuple[str, ...] = (), dialog: str = ""
    ) -> Question:
        """A pending question; `dialog` names the prompt when the question is a dialog on the agent's pane."""
        question = Question(
            id=f"q-{uuid.uuid4().hex[:8]}",
            agent=agent,
            text=text,
            asked_at=time.time(),
            project=project,
            options=options,
            dialog=dialog,
        )
        pipe = self.client.pipeline()
        write_hash(pipe, self.keys.question(question.id), question.to_hash())
        pipe.zadd(self.keys.questions, {question.id: question.asked_at})
        pipe.execute()
        return question

    def pending(self, agent: str | None = None) -> list[Question]:
        keys = [self.keys.question(i) for i in ordered(self.client, self.keys.questions)]
        hashes = zip(keys, read_hashes(self.client, keys), strict=True)
        found = [Question.from_hash(d, key=k) for k, d in hashes if d]
        return [q for q in found if agent is None or q.agent == agent]

    def get(self, question_id: str) -> Question:
        key = self.keys.question(question_id)
        data = read_hash(self.client, key)
        if not data:
            raise NotFound(f"no pending question {question_id!r} (see `ib questions`)")
        return Question.from_hash(data, key=key)

    def acknowledge(self, question_id: str) -> Question:
        question = self.get(question_id)
        pipe = self.client.pipeline()
        pipe.delete(self.keys.question(question_id))
        pipe.zrem(self.keys.questions, question_id)
        pipe.execute()
        return question

    def forget_agent(self, agent: str) -> None:
        for question in self.pending(agent):
            self.acknowledge(question.id)
