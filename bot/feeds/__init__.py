"""What the bot reads from the bus and shows: the events stream routed into topics (`consumer`), with
one message per dialog (`dialog_messages`, kept in Redis by `dialog_memory`) and a turn's last words
before its end (`last_words`); agents' output streams into their topics (`output_feed`); each agent's
live status line (`status_board`, decided by the pure `agent_status`); and the sweep that marks a
worker whose heartbeat expired as down (`worker_watch`).

May import delivery, topics, render, errors and bus; never the handlers or bot.bot_runtime.
"""
