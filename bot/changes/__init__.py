"""The one change pipeline every write goes through: ask, claim once, the approval gate, as the
person, the record (`pipeline`, `approval`, `record`). Each feature that writes plugs in its
kinds (`kinds.ChangeKind`, listed in `registry`) with typed parameters (`params`).

`kinds` and `params` sit below the features (they import `bot.access` and below); the rest sits
above the features and below `handlers` and `bot.service.deps`.
"""
