"""The YAML settings (`settings`) and the converters of their values (`values`).

Pure; imports only `bot.core`.
"""
