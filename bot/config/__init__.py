"""The YAML settings, by one name (`settings`): their dataclasses (`model`), the pure reading of
the parsed document (`parse`), the file's loader (`load`), and the converters of their values
(`values`). Pure; imports only `bot.core`.
"""
