"""`python -m bot`: the Telegram bot (the same as `ib bot`)."""

from __future__ import annotations

import sys

from bot.app import main

sys.exit(main())
