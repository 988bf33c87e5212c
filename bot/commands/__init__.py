"""The slash-command grammar (`grammar`), the parsed command types (`parsed`) and the usage texts.

Pure; imports only `bot.core`.
"""
