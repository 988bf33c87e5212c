"""The App Home tab (docs/design.md §2 "Home tab"): every cluster, alert, pause and recent change
at a glance, and `/kai changes`. Pure model, assembly and rendering; the use-case (`usecase`)
composes the health check, the queues, the alert desk's public read, the held objects, the
journal and the approvals, so this package sits above the features it reads.
"""
