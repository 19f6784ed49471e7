"""Everything Telegram: the bot routes bus events into forum topics and relays replies through the bus.

`app` wires the rooms, each a subpackage whose `__init__.py` says what it holds. Imports go down only,
in this order (tests/unit/test_import_layers.py holds it): app, handlers, review, runtime (what the
handlers share), feeds, attention, config, delivery, topics, render, errors. bot never imports worker.
"""
