-- Room on each page for a memory's new version: reinforcing or decaying a memory
-- changes no indexed column, so with free space on its page the update is HOT and
-- adds no entry to the HNSW (or any other) index. Pages written from now on keep 15%
-- free; older pages get it when the table is rewritten (VACUUM FULL, a reindex swap).
ALTER TABLE memories SET (fillfactor = 85);
