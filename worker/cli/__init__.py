"""The `ib` command line: `entry` (the console script, which dispatches the hot commands before anything
heavy is imported) and the typer application, one module per area, wired together in `app`.

May import every worker area; nothing in worker imports the cli.
"""
