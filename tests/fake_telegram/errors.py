"""The one error of the fake Bot API: an answer with ok=false, as Telegram words it."""

from __future__ import annotations


class ApiError(Exception):
    """A Bot API error: HTTP status and `error_code`, Telegram's description, and retry_after for 429."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def body(self) -> dict[str, object]:
        out: dict[str, object] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.retry_after is not None:
            out["parameters"] = {"retry_after": self.retry_after}
        return out


def bad_request(what: str) -> ApiError:
    return ApiError(400, f"Bad Request: {what}")
