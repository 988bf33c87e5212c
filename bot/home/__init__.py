"""Feature: the App Home tab (docs/design.md §2 "Home tab"): every cluster, alert, pause and recent
change
at a glance. Pure model, assembly and rendering; reads through `bot.kube.ports` only."""
