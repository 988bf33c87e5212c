"""`python -m bot` is `kai-chatops`."""

import sys

from bot.cli import main

sys.exit(main())
