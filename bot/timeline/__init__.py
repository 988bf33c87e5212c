"""What changed (docs/design.md §2 "What changed"): `/kai timeline`, the alert thread's "What
changed in the hour before", and the postmortem draft of `/kai timeline ALERT_ID`. Reads across
the features (the journal, the alert state and its memory of moves, evictions, Flux, Argo CD,
rollouts), so this package sits above the ones it reads.
"""
