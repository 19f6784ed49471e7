"""How things read in Telegram, all pure: an event's text and buttons (`render`, which escapes every piece
of dynamic text), with the views of dialogs, plans, budgets and reviews (`dialog_render`, `plan_render`,
`budget_render`, `review_render`), what waits on a person and a digest of the routine rest
(`digest_render`), an agent's output items (`streaming`), the callback data of the inline buttons
(`callbacks`), and fitting text into Telegram's messages (`split`).

May import bot.errors and bus only.
"""
