-- nbc 0.16.0 -> 0.17.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.17.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Rows skipped for a NULL label (issue #42 item 3): nb_info's
-- rows_null_label needs no SQL change (format version 4, flag 4); a live
-- model's trigger keeps the count of a statement whose rows all have a
-- NULL label through nbc_live_delta, since nb_train gives NULL over them.

-- nbc_live_delta(model, null_labels): the model of rows of a live model's
-- source from nb_train over them (NULL when they all have a NULL label)
-- and the count of those nb_train skips for a NULL label: the model, else
-- a model of no class holding the count, else NULL (src/pg_live_check.c)
CREATE FUNCTION nbc_live_delta(model nb_model, null_labels bigint)
	RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
