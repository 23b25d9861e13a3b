-- nbc 0.10.0 -> 0.11.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.11.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Live models: tiered folding (issue #30, the write overhead).  The automatic
-- fold merges the pending deltas into one delta and rewrites the base only
-- once those merged deltas weigh a quarter of it or number 16
-- (src/pg_live.c, fold_auto).  based_through is the last delta the base
-- took: the merged deltas are those past it, up to folded_through.
ALTER TABLE nbc_live ADD COLUMN based_through bigint NOT NULL DEFAULT 0;
UPDATE nbc_live SET based_through = folded_through;
