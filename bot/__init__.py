"""kai-chatops: Slack ChatOps for GPU clusters on KAI Scheduler, KEDA and GitOps."""

from __future__ import annotations


def version() -> str:
    """The installed version (from the git tag it was built from), or "unknown" from a bare tree."""
    from importlib import metadata

    try:
        return metadata.version("kai-chatops")
    except metadata.PackageNotFoundError:
        return "unknown"
