-- nbc 0.16.0 -> 0.17.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.17.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Rows skipped for a NULL label (issue #42 item 3): nb_info's
-- rows_null_label (format version 4, flag 4) in its comment; a live
-- model's trigger keeps the count of a statement whose rows all have a
-- NULL label through nbc_live_delta, since nb_train gives NULL over them.

COMMENT ON FUNCTION nb_info(nb_model) IS 'summary of a model: classes, vocabulary, documents, tokens, rows skipped for a NULL label, features, format version, bytes';

-- nbc_live_delta(model, null_labels): the model of rows of a live model's
-- source from nb_train over them (NULL when they all have a NULL label)
-- and the count of those nb_train skips for a NULL label: the model, else
-- a model of no class holding the count, else NULL (src/pg_live_check.c)
CREATE FUNCTION nbc_live_delta(model nb_model, null_labels bigint)
	RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---------------------------------------------------------------------------
-- nb_train_em_history: nb_train_em_trace without the models.
-- nbc_em_iterate's one signature (components, trace, models, started): the
-- 0.16.0 declaration is dropped, and the C function refuses any other
-- number of arguments with a hint to update; nbc_em_run takes models
-- (DEFAULT true: its other callers are unchanged).
DROP FUNCTION nbc_em_run(regclass, text, text, jsonb, boolean);
DROP FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz, integer);

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   components integer, trace boolean, models boolean, started timestamptz)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;
COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, integer, boolean, boolean, timestamptz) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): components per class (EM-CM) if more than 1; every iteration (trace true) or the last, with its model (models true) or NULL';

CREATE FUNCTION nbc_em_run(rel regclass, label_column text, features_column text,
						   options jsonb, trace boolean, models boolean DEFAULT true)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
LANGUAGE plpgsql STABLE
-- relocatable: nbc's objects through its schema, found at run time
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	opts record;
	ftype regtype;
	first record;
	started timestamptz := clock_timestamp();
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the options and the columns
	EXECUTE format('SELECT * FROM %s.nbc_em_options($1)', ext) INTO opts USING options;
	EXECUTE format('SELECT %s.nbc_em_features_type($1, $2, $3, $4)', ext)
		INTO ftype USING rel, label_column, features_column, opts.tokenizer;

	-- An error or a cancel in an internal statement is raised again with a
	-- sentence saying what EM was doing (doing; NULL: nothing to add), as
	-- nb_cross_validate does, instead of a CONTEXT quoting the statement.
	BEGIN
	-- the model of the labelled rows, and how many rows are unlabelled
	doing := format('EM on "%s" was training the model of the labelled rows.', rel);
	EXECUTE format('SELECT %1$s.nb_train(%2$I::text, %3$I::%4$s%5$s) FILTER (WHERE %2$I IS NOT NULL) AS model, '
				   'count(*) FILTER (WHERE %2$I IS NULL AND %3$I IS NOT NULL) AS unlabelled FROM %6$s',
				   ext, label_column, features_column, ftype,
				   CASE WHEN ftype = 'text'::regtype THEN ', $1' ELSE '' END, rel)
		INTO first USING opts.tokenizer;
	doing := NULL;
	IF first.model IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled row', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'EM starts from a model of the rows whose label is not NULL (and whose features are not NULL).';
	END IF;
	-- the OUT column model holds the current model (a variable of type
	-- nb_model would need nbc's schema in the search path)
	model := first.model;
	IF opts.train_options IS NOT NULL THEN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, opts.train_options;
	END IF;

	-- the iterations, in C (src/workflows/pg_em_run.c), which adds what it was doing
	-- to an error of its own; without trace, a row of the last iteration
	-- only (RETURN QUERY: the model is copied once more, not three times
	-- as by INTO and RETURN NEXT)
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)', ext)
		USING model, rel, label_column, features_column, ftype, opts.lambda, opts.train_options, opts.tokenizer,
			  opts.iterations, opts.tolerance, first.unlabelled, opts.components, trace, models, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		IF e_message LIKE 'unrecognized naive Bayes option%' THEN
			e_hint := 'nb_train_em''s own options are lambda, iterations, tolerance, tokenizer, components, folds and fold_column; the others are the model''s. ' || e_hint;
		END IF;
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_detail = '' AND e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
		ELSIF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		ELSIF e_detail = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
END
$$;
COMMENT ON FUNCTION nbc_em_run(regclass, text, text, jsonb, boolean, boolean) IS 'the work of nb_train_em (trace false: the last iteration only), nb_train_em_trace (trace true: every iteration) and nb_train_em_history (models false: each row''s model NULL)';

CREATE FUNCTION nb_train_em_history(rel regclass, label_column text, features_column text,
									options jsonb DEFAULT NULL)
RETURNS TABLE (iteration integer, log_likelihood float8)
-- VOLATILE: choosing lambda makes a temporary table (nb_cross_validate_em)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	RETURN QUERY EXECUTE format('SELECT r.iteration, r.log_likelihood FROM %1$s.nbc_em_run($1, $2, $3, %1$s.nbc_em_choose($1, $2, $3, $4), true, false) r', ext)
		USING rel, label_column, features_column, options;
END
$$;
COMMENT ON FUNCTION nb_train_em_history(regclass, text, text, jsonb) IS 'nb_train_em_trace without the models: each iteration''s log likelihood, no model copied into a row';
