"""Claude Code hooks: small, fast commands that run inside an agent's turn and never fail it."""
