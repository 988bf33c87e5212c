"""PagerDuty's Events API v2 (docs/design.md §2 **PagerDuty**): the events an incident owes
(`bot.alerts.pages`) built (`events`), sent (`client`) and recorded (`delivery`)."""
