"""What waits on a person reaches them when nobody answers in the chat: the escalation that repeats an
unanswered "needs you" as a direct message, then through the configured channels (`escalation`), and
those channels (push, e-mail and chat webhooks through apprise: `channels`).

May import bus only; bot.app starts it.
"""
