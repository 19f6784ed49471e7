"""The worker commands: the workers on the bus (ids, who is alive, who is down: `workers`), the commands a
worker runs for others, one frozen model each (`worker_commands`), and the wire that carries them and their
answers (`worker_rpc`: `cmd:<worker>` and `reply:<id>`).

May import every other room of bus; none imports it.
"""
