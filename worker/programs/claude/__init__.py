"""Claude Code: its settings file and hooks (`settings`), version facts (`version`), folder trust
(`trust`), sandbox settings (`sandbox`), transcript (`transcript`, `usage`), and the `AgentProgram` that
ties them together (`program`). Kept light: the hooks' hot path imports modules of this package."""
