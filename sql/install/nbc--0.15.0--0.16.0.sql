-- nbc 0.15.0 -> 0.16.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.16.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- EM-CM (#43 item 2): nb_train_em's option "components", several mixture
-- components per class.  nbc_em_options gains an OUT column and
-- nbc_em_iterate an argument: both dropped and created again; nbc_em_run
-- passes the option on.
DROP FUNCTION nbc_em_options(jsonb);
DROP FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz);
CREATE FUNCTION nbc_em_options(options jsonb, OUT lambda float8, OUT iterations integer,
							   OUT tolerance float8, OUT tokenizer jsonb, OUT train_options jsonb,
							   OUT components integer)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	lambda := 1;
	iterations := 20;
	tolerance := 1e-6;
	components := 1;
	options := coalesce(options, '{}');
	IF jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_train_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' THEN
		IF jsonb_typeof(options -> 'lambda') <> 'number' THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		lambda := (options ->> 'lambda')::float8;
		IF NOT lambda BETWEEN 0 AND 1 THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be between 0 and 1'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
	END IF;
	IF options ? 'iterations' THEN
		IF jsonb_typeof(options -> 'iterations') <> 'number'
		   OR (options ->> 'iterations')::numeric NOT BETWEEN 0 AND 1000
		   OR (options ->> 'iterations')::numeric <> trunc((options ->> 'iterations')::numeric) THEN
			RAISE EXCEPTION 'nb_train_em option "iterations" must be an integer from 0 to 1000'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'iterations');
		END IF;
		iterations := (options ->> 'iterations')::integer;
	END IF;
	IF options ? 'tolerance' THEN
		IF jsonb_typeof(options -> 'tolerance') <> 'number'
		   OR (options ->> 'tolerance')::numeric < 0 THEN
			RAISE EXCEPTION 'nb_train_em option "tolerance" must be a number at least 0'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'tolerance');
		END IF;
		tolerance := (options ->> 'tolerance')::float8;
	END IF;
	IF options ? 'components' THEN
		IF jsonb_typeof(options -> 'components') <> 'number'
		   OR (options ->> 'components')::numeric NOT BETWEEN 1 AND 100
		   OR (options ->> 'components')::numeric <> trunc((options ->> 'components')::numeric) THEN
			RAISE EXCEPTION 'nb_train_em option "components" must be an integer from 1 to 100'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'components');
		END IF;
		components := (options ->> 'components')::integer;
	END IF;
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer' - 'components', '{}');
END
$$;
COMMENT ON FUNCTION nbc_em_options(jsonb) IS 'nb_train_em''s options checked and taken apart: lambda, iterations, tolerance, tokenizer, components and the rest, the model''s options (NULL: none)';

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   trace boolean, started timestamptz, components integer)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;
COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz, integer) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): every iteration (trace true) or the last; components per class (EM-CM) if more than 1';

CREATE OR REPLACE FUNCTION nbc_em_run(rel regclass, label_column text, features_column text,
						   options jsonb, trace boolean)
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
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)', ext)
		USING model, rel, label_column, features_column, ftype, opts.lambda, opts.train_options, opts.tokenizer,
			  opts.iterations, opts.tolerance, first.unlabelled, trace, started, opts.components;
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
COMMENT ON FUNCTION nbc_em_run(regclass, text, text, jsonb, boolean) IS 'the work of nb_train_em (trace false: the last iteration only) and nb_train_em_trace (trace true: every iteration)';
