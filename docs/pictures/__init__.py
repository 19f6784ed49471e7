"""The documentation's pictures, drawn from what ittybus really does: each module runs one scenario with the
real programs (the fakes stand only where the tests' do: the model API and the Bot API) and paints the result
with the screenshot code of `ib look --png`. `python -m docs.pictures.telegram_topic` redraws
docs/img/telegram-topic.png; docs/development.md says when to.
"""
