"""The web package's exceptions: one base, and the kinds a person gets told about in one line."""

from __future__ import annotations


class WebError(Exception):
    """Base of every error raised by the web package."""


class WebConfigError(WebError):
    """`ib web` cannot start with these options or this token file; the message says the fix."""


class Refused(WebError):
    """A click the page cannot act on (no such agent, no such option); nothing was sent."""
