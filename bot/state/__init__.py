"""Where the bot keeps what must outlive a request: one storage layer under every store.

`retry` (pure): the shared errors, the version of a document never written, and the one retry
policy; `sqlite`: a file opened on first use behind one lock, and a table of versioned documents;
`configmap`: a ConfigMap read and written with compare-and-set. Imports `bot.kube` ports, never
the Kubernetes client; the stores that use it (alerts, journal, replay memory) live above.
"""
