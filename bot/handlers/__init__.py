"""What people do in the chat, as python-telegram-bot handlers: the door every update passes first
(`gate`), one async function per command by area (`topic_handlers`, `agent_handlers`, `task_handlers`,
`plan_handlers`, `schedule_handlers`, `cost_handlers`, `limit_handlers`, `attention_handlers`), the text
and taps that reach agents (`relay`), what a command or a button does to an agent (`actions`), and what
they share: the command list and its pure parsers (`chat_commands`) and each handler's context
(`command_context`). Each area module ends with its `CommandHandler`s and `CallbackQueryHandler`s (a
button's `pattern` is its whole callback data), which bot.app adds in one group, the relay's last.

May import every bot room below it (review, runtime, feeds, delivery, topics, render, errors) and bus;
only bot.app imports it.
"""
