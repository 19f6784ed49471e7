"""The warm `ib`: a server that has every command's modules loaded forks a process per command, so an
everyday `ib` costs a bare interpreter and the command's own work instead of importing typer, pydantic and
redis-py each time. `wire` is what both ends share, `client` the hot half `ib` runs, `server` the other."""
