"""What the programs ittybus starts in its bubblewrap box share (Codex CLI, Gemini CLI): the binary on
PATH as the command, the version read by its own shape, the box's checks (installed, seen in the box,
bubblewrap there), no notes and no trust carried to a file other sessions share. Each program says its
names, release and version shape; everything else it implements itself."""

from __future__ import annotations

from worker.programs import probe
from worker.programs.bubblewrap import boxed_unfinished
from worker.programs.program import Release, Version


class BoxedProgram:
    """The base of an `AgentProgram` ittybus starts in its bubblewrap box."""

    name: str
    title: str
    binary: str
    release: Release
    version_shape: str  # a pattern of what `<binary> --version` prints

    def command(self, configured: str) -> str:
        return self.binary  # IB_AGENT_COMMAND is Claude Code's (or its stand-in's)

    def version(self, command: str) -> Version | None:
        return probe.reported_version(command, self.version_shape)

    def unfinished(self) -> str | None:
        return boxed_unfinished(self.title)

    def missing(self, command: str) -> str | None:
        return probe.not_installed(self, command) or probe.hidden_in_box(self, command)

    def notes(self, command: str, root: str) -> list[str]:
        return []

    def carried_trust(self, cwd: str, root: str) -> bool:
        """False: each program keeps its trust where no other session writes it (Codex CLI in the agent's
        own CODEX_HOME), or shows no folder-trust dialog (Gemini CLI)."""
        return False
