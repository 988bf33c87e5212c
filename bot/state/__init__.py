"""Where the bot keeps what must outlive a request: one storage layer under every store.

`retry` (pure): the shared errors, the version of a document never written, and the one retry
policy; `sqlite`: a file opened on first use behind one lock, and a table of versioned documents;
`configmap`: a ConfigMap read and written with compare-and-set; `watched`: one watched copy of
the bot's own ConfigMaps, so reads at rest ask nothing; `shards`: one ConfigMap per key, the
legacy shared one mirrored while it exists; `names` (pure): what each is called. Imports
`bot.kube` ports and copies, never the Kubernetes client; the stores that use it (alerts,
journal, replay memory, approvals) live above.
"""
