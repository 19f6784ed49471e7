"""Everything the bot sends, on its way to Telegram: what waits to be shown in a topic (`outgoing`), the
outbound queue that merges it per topic (`outbound`, pure), the per-chat pacer (`pacing`), each topic's
live status line as the queue keeps it (`status_lines`) and its digest of the routine events folded when
the chat's budget cannot keep up (`folding`), the group's minute budget shared through Redis (`budget`),
the one task that talks to Telegram and recovers from its refusals (`sender`, with `failures` reading
them), the few Bot API calls (`forum`), and the teardown note sent and edited at once outside the queue
(`teardown_note`).

May import topics, render, errors and bus.
"""
