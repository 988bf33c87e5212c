"""Settings: the YAML file of docs/design.md §1.4 read into frozen dataclasses, by one name.

The dataclasses are `bot.config.model`'s; `parse_settings` (`bot.config.parse`) is pure and
reports every problem at once, one line each; `load_settings` (`bot.config.load`) only reads the
file. Secrets never come from here: the composition root reads them from the environment.
"""

from __future__ import annotations

from bot.config.load import load_settings
from bot.config.model import (
    AccessSettings,
    AlertmanagerSettings,
    AlertSettings,
    ApprovalSettings,
    ChangeSettings,
    ClusterSettings,
    GitopsSettings,
    GitopsShortcut,
    KaiSettings,
    KedaSettings,
    KubernetesSettings,
    LeaseSettings,
    NoticeSettings,
    PagerDutySettings,
    Settings,
    SlackSettings,
    StateSettings,
)
from bot.config.parse import parse_settings

__all__ = [
    "AccessSettings",
    "AlertSettings",
    "AlertmanagerSettings",
    "ApprovalSettings",
    "ChangeSettings",
    "ClusterSettings",
    "GitopsSettings",
    "GitopsShortcut",
    "KaiSettings",
    "KedaSettings",
    "KubernetesSettings",
    "LeaseSettings",
    "NoticeSettings",
    "PagerDutySettings",
    "Settings",
    "SlackSettings",
    "StateSettings",
    "load_settings",
    "parse_settings",
]
