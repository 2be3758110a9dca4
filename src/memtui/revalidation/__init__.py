"""The revalidation engine: evidence checked against a git checkout, no store (DESIGN.md "revalidate").

``engine`` checks quoted spans, symbols and call edges for content and decides per memory;
``references`` checks named references (paths, folders, globs, symbols a line names) for existence
and location. Used by the maintenance job, ``memtui lint`` and approval re-anchoring; imports only
``sources`` and ``domain``.
"""
