"""The bus: settings, events, streams, spool and the stores that live on Redis.

Its modules sit in rooms, each a subpackage whose `__init__.py` says what it holds and stays a docstring
(the hooks import single modules, never a room's worth). Imports go down only, in this order
(tests/unit/test_import_layers.py holds it): commands, readers, inbox, tasks, stores, events, connection,
settings, costs, wire, then `poll` and `errors` at the top of the package. Imports neither worker nor bot.
"""
