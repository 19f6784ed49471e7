"""The page's token: made once into `.ib/web-token` (0600), so an open page and its cookie outlive a restart
of `ib web`; delete the file for a new one. The CSRF field is derived from it, never the token itself."""

from __future__ import annotations

import hashlib
import hmac
import os

from bus.errors import ConfigError
from bus.settings.kept_token import kept_token
from bus.settings.repo_paths import ensure_state_dir
from web.errors import WebConfigError

TOKEN_FILE = "web-token"


def token_path(root: str) -> str:
    return os.path.join(ensure_state_dir(root), TOKEN_FILE)


def load_token(root: str) -> str:
    """The token in `.ib/web-token`, made the first time."""
    try:
        return kept_token(token_path(root))
    except ConfigError as e:
        raise WebConfigError(f"{e}: delete it and start ib web again") from e


def csrf_of(token: str) -> str:
    """The CSRF field of every POST: a keyed hash of the token (the page shows it; the token it does not)."""
    return hmac.new(token.encode(), b"ib web csrf", hashlib.sha256).hexdigest()


def same(given: str, wanted: str) -> bool:
    return hmac.compare_digest(given.encode(), wanted.encode())
