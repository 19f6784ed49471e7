"""Questions agents ask the person (`ib ask`): pending in Redis until acknowledged."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass

import redis

from bus.errors import NotFound
from bus.hashes import ordered, read_hash, read_hashes, write_hash
from bus.keys import Keys


@dataclass(frozen=True)
class Question:
    id: str
    agent: str
    text: str
    asked_at: float
    project: str = ""
    options: tuple[str, ...] = ()
    dialog: str = ""  # the prompt id when the question is an agent's AskUserQuestion dialog

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> Question:
        return cls(
            id=data["id"],
            agent=data.get("agent", ""),
            text=data.get("text", ""),
            asked_at=float(data.get("asked_at") or 0),
            project=data.get("project", ""),
            options=tuple(json.loads(data.get("options") or "[]")),
            dialog=data.get("dialog", ""),
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


class QuestionStore:
    def __init__(self, client: redis.Redis, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def ask(self, agent: str, text: str, project: str = "", options: tuple[str, ...] = ()) -> Question:
        question = Question(f"q-{uuid.uuid4().hex[:8]}", agent, text, time.time(), project, options)
        pipe = self.client.pipeline()
        write_hash(
            pipe,
            self.keys.question(question.id),
            {
                "id": question.id,
                "agent": agent,
                "text": text,
                "asked_at": str(question.asked_at),
                "project": project,
                "options": json.dumps(list(options)),
            },
        )
        pipe.zadd(self.keys.questions, {question.id: question.asked_at})
        pipe.execute()
        return question

    def pending(self, agent: str | None = None) -> list[Question]:
        ids = ordered(self.client, self.keys.questions)
        found = [
            Question.from_hash(d) for d in read_hashes(self.client, [self.keys.question(i) for i in ids]) if d
        ]
        return [q for q in found if agent is None or q.agent == agent]

    def get(self, question_id: str) -> Question:
        data = read_hash(self.client, self.keys.question(question_id))
        if not data:
            raise NotFound(f"no pending question {question_id!r} (see `ib questions`)")
        return Question.from_hash(data)

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
