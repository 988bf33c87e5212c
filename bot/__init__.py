"""kai-chatops: Slack ChatOps for GPU clusters on KAI Scheduler, KEDA and GitOps."""
