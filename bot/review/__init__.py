"""Review from the phone, the bot's side: /diff's file list and one picture per file, replies to a
picture kept as comments until Request changes sends them (`review`), and Approve's one message that
follows the change through the merge queue (`approval`), with the notes it follows kept in Redis so a
restarted bot carries them on (`approval_memory`).

May import bot.bot_runtime and the rooms under it (delivery, topics, render, errors) and bus; the handlers
and bot.app call it.
"""
