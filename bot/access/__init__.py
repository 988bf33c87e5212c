"""Who may do what (`gate`, `policy`, `identity`), signed one-time confirmations, the audit record
of every change (`audit`, `outcomes`, `journal`), the memory of used requests and Confirms
(`once`), and the record of a change waiting for approval and its store (`approvals`,
`approval_store`); the change pipeline that uses them is `bot.changes`.

Imports the stored state, the gateways, `bot.config` and `bot.core`; no feature.
"""
