"""The shared core: condition reading, durations, the verdict models, our errors, metrics, text.

Imports nothing of the bot; every other package may import it.
"""
