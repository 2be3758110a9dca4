"""Statement similarity (issue 10, item 8): the one home for normalisation, stop words, stemming,
identifier keys (:mod:`.text`), static embeddings (:mod:`.embed`), pair features (:mod:`.features`),
the learned pair scorer (:mod:`.scorer`), semantic candidate pairs (:mod:`.candidates`) and the
labelled pairs it is trained and measured on (:mod:`.pairs`).

Used by the dedupe, conflict and compaction jobs, recall and MCP proposals. Pure: no I/O except
reading the committed model file and the embedding weights shipped in the ``wordllama`` wheel.
This package module imports nothing, so :mod:`memtui.similarity.statements` may import :mod:`.text`.
"""
