-- nbc 0.11.0 -> 0.12.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.12.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- One class's probability as float8 (#28): a view's column or a sum reads
-- one class of nb_predict_proba's object, which made the object of every
-- class, wrote each number as numeric and read one back as text per row
-- (a fifth of scoring a held-out split end to end).  nb_probability gives
-- the same double without the object.
CREATE FUNCTION nb_probability(model nb_model, features text[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features tsvector, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features jsonb, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features float8[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, body text, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_probability(nb_model, text[], text, jsonb) IS 'posterior probability of one class of a bag of tokens, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, text, jsonb) IS 'posterior probability of one class of a tsvector, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, text, jsonb) IS 'posterior probability of one class of a row of named features, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, float8[], text, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, text, text, jsonb) IS 'posterior probability of one class of a document of text, as nb_predict_proba gives it';


-- ---------------------------------------------------------------------------
-- nb_train_em's iterations driven in C (issue #31, section 1: an iteration
-- costs at most twice an nb_train and an nb_predict_proba pass, with many
-- classes too).  nbc_em_iterate reads the rows with a cursor once per
-- iteration and keeps the current model in its own memory between them
-- (src/pg_em_run.c); nbc_em_run keeps its checks and the model of the
-- labelled rows, and calls it instead of running the aggregate nbc_em_step
-- once per iteration, which passed the model between statements (copied
-- several times per iteration) and prepared it through the backend's cache.

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   trace boolean, started timestamptz)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;

COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): every iteration (trace true) or the last';

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
	cols record;
	ftype regtype;
	lambda float8 := 1;
	max_iterations integer := 20;
	tolerance float8 := 1e-6;
	tokenizer jsonb;
	train_options jsonb;
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
		max_iterations := (options ->> 'iterations')::integer;
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
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer', '{}');
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	ELSIF ftype = 'character varying[]'::regtype THEN
		ftype := 'text[]'::regtype;
	END IF;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;

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
		INTO first USING tokenizer;
	doing := NULL;
	IF first.model IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled row', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'EM starts from a model of the rows whose label is not NULL (and whose features are not NULL).';
	END IF;
	-- the OUT column model holds the current model (a variable of type
	-- nb_model would need nbc's schema in the search path)
	model := first.model;
	IF train_options IS NOT NULL THEN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, train_options;
	END IF;

	-- the iterations, in C (src/pg_em_run.c), which adds what it was doing
	-- to an error of its own; without trace, a row of the last iteration
	-- only (RETURN QUERY: the model is copied once more, not three times
	-- as by INTO and RETURN NEXT)
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', ext)
		USING model, rel, label_column, features_column, ftype, lambda, train_options, tokenizer,
			  max_iterations, tolerance, first.unlabelled, trace, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
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



-- ---------------------------------------------------------------------------
-- nb_grid_options makes each option set as it returns it (#26 item 5): it
-- built every combination of a part's values as one jsonb array, key after
-- key, and copied them into its result: 14 MB for its largest grid of
-- 10,000 small sets.  The same sets in the same order; errors as before.
CREATE OR REPLACE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 20
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	part jsonb;
	k text;
	vals jsonb;
	sets bigint := 0;
	part_sets bigint;
	key_names text[];
	key_lens bigint[];
	key_strides bigint[];
	option_set jsonb;
BEGIN
	IF jsonb_typeof(grid) = 'object' THEN
		grid := jsonb_build_array(grid);
	ELSIF jsonb_typeof(grid) <> 'array' OR jsonb_array_length(grid) = 0 THEN
		RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The grid is %s.', grid);
	END IF;
	FOR part IN SELECT e FROM jsonb_array_elements(grid) AS e LOOP
		IF jsonb_typeof(part) <> 'object' THEN
			RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Element %s is not an object.', part);
		END IF;
		-- count the option sets before making any: a few lists multiply
		part_sets := 1;
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) = 'array' THEN
				part_sets := part_sets * greatest(jsonb_array_length(vals), 1);
			END IF;
			EXIT WHEN part_sets > 10000;
		END LOOP;
		sets := sets + part_sets;
		IF sets > 10000 THEN
			RAISE EXCEPTION 'grid has more than 10000 option sets'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = 'Every combination of an object''s values is an option set.',
					  HINT = 'Give fewer values per key, or search the grid in parts.';
		END IF;
		key_names := '{}';
		key_lens := '{}';
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) = 'array' AND jsonb_array_length(vals) = 0 THEN
				RAISE EXCEPTION 'grid key "%" has no values', k
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			key_names := key_names || k;
			key_lens := key_lens || CASE WHEN jsonb_typeof(vals) = 'array' THEN jsonb_array_length(vals) ELSE 1 END::bigint;
		END LOOP;
		-- option set s (from 0) is a number in mixed radix, a digit per key
		-- in the object's key order, the last key's the fastest: each set is
		-- made as it is returned, and none is held but in the result
		key_strides := array_fill(1::bigint, ARRAY[greatest(cardinality(key_names), 1)]);
		FOR i IN REVERSE cardinality(key_names) - 1 .. 1 LOOP
			key_strides[i] := key_strides[i + 1] * key_lens[i + 1];
		END LOOP;
		FOR s IN 0 .. part_sets - 1 LOOP
			option_set := '{}';
			FOR i IN 1 .. cardinality(key_names) LOOP
				vals := part -> key_names[i];
				IF jsonb_typeof(vals) = 'array' THEN
					vals := vals -> ((s / key_strides[i]) % key_lens[i])::integer;
				END IF;
				option_set := option_set || jsonb_build_object(key_names[i], vals);
			END LOOP;
			RETURN NEXT option_set;
		END LOOP;
	END LOOP;
END
$$;
