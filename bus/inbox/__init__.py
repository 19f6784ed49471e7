"""What waits on the person: attention items and when they are repeated (`attention`, `attention_rules`,
`ages`), questions, messages, the dialogs agents show (`prompts`, recorded once through `prompt_record`),
review comments and their prompt, and what is pushed into the person's Claude Code sessions (`push_store`,
`session_inbox`, `session_socket`).

May import stores, events, connection, settings, costs, wire, poll and errors. `prompt_record` and
`session_inbox` are on the hooks' path: the standard library, wire and errors only.
"""
