"""The `ib` command line (typer): one module per area, wired together in `app`."""
