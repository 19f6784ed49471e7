"""Gemini CLI: its chat log read as output (`chat`) and tokens (`usage`), and the `AgentProgram` that
ties them together (`program`). Kept light: the hooks' hot path imports modules of this package."""
