"""`ib web`: one page over the bus, live by server-sent events whose ids are the events stream's ids.

Like the bot, it reaches agents only through the bus (the worker commands on `cmd:<worker>`), so it runs
on any machine; it never imports worker. Modules import only down, in this order (held by
tests/unit/test_import_layers.py): app (the wiring, uvicorn), routes (the Starlette app), stream (the
events after a cursor as SSE), actions (a click into a worker command), guard (token, cookie, CSRF,
Origin), page_token (the token file), render (Jinja2, pure), queues (tasks, merges, /auto read from the
bus), board (the agents and their dialogs read from the bus), errors.
"""
