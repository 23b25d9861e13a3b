-- nbc's objects, 70: learning from unlabelled rows with EM: nb_train_em,
-- nb_train_em_trace and nb_cross_validate_em, which chooses lambda.

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

CREATE FUNCTION nbc_em_features_type(rel regclass, label_column text, features_column text,
									 tokenizer jsonb)
RETURNS regtype
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	cols record;
	ftype regtype;
BEGIN
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

	RETURN ftype;
END
$$;
COMMENT ON FUNCTION nbc_em_features_type(regclass, text, text, jsonb) IS 'the checks of nb_train_em''s columns: the type its features are read as (text, text[] or tsvector, through domains and varchar)';

-- nbc_em_run does the work of the three: each iteration as a row (trace), or
-- only the last, so that nb_train_em keeps one model at a time rather than a
-- tuplestore of them all; without the models (nb_train_em_history: each
-- row's model NULL), so that no iteration's model is copied into a row.
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
		IF e_message LIKE 'unrecognized naive Bayes option%' AND e_detail LIKE '%about tokenizing text%' THEN
			e_hint := format('nb_train_em takes the tokenizer''s options inside its option "tokenizer": ''{"tokenizer": {%s: ...}}''.',
							 substring(e_message FROM '"[^"]*"'));
		ELSIF e_message LIKE 'unrecognized naive Bayes option%' THEN
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

CREATE FUNCTION nb_train_em_trace(rel regclass, label_column text, features_column text,
											 options jsonb DEFAULT NULL)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
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
	RETURN QUERY EXECUTE format('SELECT * FROM %1$s.nbc_em_run($1, $2, $3, %1$s.nbc_em_choose($1, $2, $3, $4), true)', ext)
		USING rel, label_column, features_column, options;
END
$$;
COMMENT ON FUNCTION nb_train_em_trace(regclass, text, text, jsonb) IS 'semi-supervised training by EM (rows with a NULL label are unlabelled): each iteration''s model with its log likelihood';

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

CREATE FUNCTION nb_train_em(rel regclass, label_column text, features_column text,
									   options jsonb DEFAULT NULL)
RETURNS nb_model
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	result record;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT model FROM %1$s.nbc_em_run($1, $2, $3, %1$s.nbc_em_choose($1, $2, $3, $4), false)', ext)
		INTO result USING rel, label_column, features_column, options;
	RETURN result.model;
END
$$;
COMMENT ON FUNCTION nb_train_em(regclass, text, text, jsonb) IS 'semi-supervised training by EM (Nigam et al. 2000): a model of the labelled rows improved with the unlabelled ones (those with a NULL label)';

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   components integer, trace boolean, models boolean, started timestamptz)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;
COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, integer, boolean, boolean, timestamptz) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): components per class (EM-CM) if more than 1; every iteration (trace true) or the last, with its model (models true) or NULL';

-- nbc_em_cv_rows: the checks of nb_cross_validate's arguments and the
-- temporary table nbc_em_cv_rows (fold, actual, features) of the labelled
-- rows with their folds and the unlabelled rows (actual and fold NULL),
-- documents of text as their tokens, so that no EM run tokenizes them again.
CREATE FUNCTION nbc_em_cv_rows(rel regclass, label_column text, features_column text,
							   folds integer, fold_column text, tokenizer jsonb,
							   OUT ftype regtype, OUT fold_ids bigint[])
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	setup record;
	counts record;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_em_cv_rows';
	ftype := setup.ftype;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, ftype
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	EXECUTE format('CREATE TEMPORARY TABLE nbc_em_cv_rows ON COMMIT DROP AS '
				   'SELECT fold, actual, %1$s AS features FROM ('
				   '  %2$s UNION ALL '
				   '  SELECT NULL::bigint, NULL::text, %3$I::%4$s FROM %5$s WHERE %6$I IS NULL AND %3$I IS NOT NULL) r',
				   CASE WHEN ftype = 'text'::regtype THEN format('%s.nb_tokens(features, %L::jsonb)', ext, tokenizer)
						ELSE 'features' END,
				   setup.rows_sql, features_column, ftype, rel, label_column);
	EXECUTE 'SELECT array_agg(fold ORDER BY fold) AS folds, max(n) AS largest, '
			'       (SELECT count(*) FROM pg_temp.nbc_em_cv_rows WHERE actual IS NOT NULL) AS labelled '
			'FROM (SELECT fold, count(*) AS n FROM pg_temp.nbc_em_cv_rows '
			'      WHERE actual IS NOT NULL AND fold IS NOT NULL GROUP BY fold) f'
		INTO counts;
	IF counts.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(counts.folds, 1) < coalesce(folds, 5) THEN
		RAISE EXCEPTION 'relation "%" has fewer labelled rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s labelled rows in %s folds.', array_length(counts.folds, 1), coalesce(folds, 5));
	END IF;
	IF counts.largest = counts.labelled THEN
		RAISE EXCEPTION 'one fold holds every labelled row of relation "%"', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the labelled rows outside it.';
	END IF;
	fold_ids := counts.folds;
END
$$;
COMMENT ON FUNCTION nbc_em_cv_rows(regclass, text, text, integer, text, jsonb) IS 'the work of nb_cross_validate_em before its EM runs: the checks, and the temporary table nbc_em_cv_rows of the labelled rows with their folds (nb_cross_validate''s) and the unlabelled rows';

-- nbc_em_cv_fold: for each pair (lambdas[i], components[i]), nb_train_em
-- on every row of nbc_em_cv_rows outside the fold (through the temporary
-- view nbc_em_cv_fold) and nb_grid_metrics of its model on the fold's
-- labelled rows, in the order of the pairs.
CREATE FUNCTION nbc_em_cv_fold(fold bigint, lambdas float8[], components integer[], options jsonb)
RETURNS jsonb[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	trained record;
	scores jsonb[];
	result jsonb[] := '{}';
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('CREATE OR REPLACE TEMPORARY VIEW nbc_em_cv_fold AS '
				   'SELECT actual, features FROM pg_temp.nbc_em_cv_rows WHERE fold IS DISTINCT FROM %s', fold);
	FOR i IN 1 .. array_length(lambdas, 1) LOOP
		EXECUTE format('SELECT model FROM %s.nbc_em_run(''pg_temp.nbc_em_cv_fold'', ''actual'', ''features'', $1, false)', ext)
			INTO trained USING options || jsonb_build_object('lambda', lambdas[i], 'components', components[i]);
		-- the model keeps the options it was trained with: '{}' scores with them
		EXECUTE format('SELECT %s.nb_grid_metrics($1, features, actual, ARRAY[''{}''::jsonb]) '
					   'FROM pg_temp.nbc_em_cv_rows WHERE fold = $2', ext)
			INTO scores USING trained.model, fold;
		result := result || scores[1];
	END LOOP;
	RETURN result;
END
$$;
COMMENT ON FUNCTION nbc_em_cv_fold(bigint, float8[], integer[], jsonb) IS 'one fold of nb_cross_validate_em: for each pair of lambda and components, the metrics on the fold''s labelled rows of nb_train_em on the rows outside it';

-- nbc_em_cv_summary: a row per pair (lambdas[i], counts[i]) of lambda and
-- components (lambda 0 and 1 component first) of the means and spreads over the folds of
-- metrics[fold][i], and which is chosen; the NOTICE when that is the first.
CREATE FUNCTION nbc_em_cv_summary(lambdas float8[], counts integer[], metrics jsonb[])
RETURNS TABLE (lambda float8, components integer, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8,
			   log_loss_gain float8, log_loss_gain_se float8, chosen boolean)
-- STABLE, not IMMUTABLE: it may raise a NOTICE, which planning must not do
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	per_lambda jsonb;
	zero jsonb;
	best jsonb;
	pick integer := 1;
BEGIN
	-- the gain of a lambda: the fold's log loss at lambda 0 less its own,
	-- averaged; its standard error the folds' sample deviation / sqrt(folds)
	-- (float8 in jsonb keeps every bit: it is written in its shortest exact form)
	SELECT jsonb_agg(to_jsonb(r) ORDER BY r.n) INTO per_lambda FROM (
		SELECT l.n, l.lambda, counts[l.n] AS components, avg(m.acc ORDER BY m.k) AS accuracy, stddev_pop(m.acc ORDER BY m.k) AS accuracy_std,
			   avg(m.f1 ORDER BY m.k) AS macro_f1, stddev_pop(m.f1 ORDER BY m.k) AS macro_f1_std,
			   avg(m.ll ORDER BY m.k) AS log_loss, stddev_pop(m.ll ORDER BY m.k) AS log_loss_std,
			   avg(m.ll0 - m.ll ORDER BY m.k) AS log_loss_gain,
			   stddev_samp(m.ll0 - m.ll ORDER BY m.k) / sqrt(count(*)) AS log_loss_gain_se
		FROM unnest(lambdas) WITH ORDINALITY AS l(lambda, n)
		JOIN (SELECT k, n, (metrics[k][n] ->> 'accuracy')::float8 AS acc,
					 (metrics[k][n] -> 'macro' ->> 'f1')::float8 AS f1,
					 (metrics[k][n] ->> 'log_loss')::float8 AS ll,
					 (metrics[k][1] ->> 'log_loss')::float8 AS ll0
			  FROM generate_subscripts(metrics, 1) AS k, generate_subscripts(metrics, 2) AS n) m
		  ON m.n = l.n
		GROUP BY l.n, l.lambda) r;
	zero := per_lambda -> 0;
	-- the lowest mean log loss but the first's (ties: the first in the grid)
	SELECT e INTO best FROM jsonb_array_elements(per_lambda) AS e
	WHERE (e ->> 'n')::integer > 1
	ORDER BY (e ->> 'log_loss')::float8, (e ->> 'n')::integer LIMIT 1;
	IF (best ->> 'log_loss_gain')::float8 > coalesce((best ->> 'log_loss_gain_se')::float8, 0) THEN
		pick := (best ->> 'n')::integer;
	ELSE
		RAISE NOTICE '%', CASE WHEN (SELECT max(k) FROM unnest(counts) AS k) > 1
			THEN 'neither the unlabelled rows nor mixture components improved the model on the labelled rows'' cross-validation'
			ELSE 'the unlabelled rows did not improve the model on the labelled rows'' cross-validation' END
			USING DETAIL = CASE WHEN best IS NULL THEN
				format('Cross-validated log loss %s with the labelled rows alone; no lambda above 0 was tried.',
					   round((zero ->> 'log_loss')::numeric, 4))
			ELSE
				format('Cross-validated log loss %s with the labelled rows alone (lambda 0), %s at best with the unlabelled rows (lambda %s%s): a gain of %s, not above its standard error %s.',
					   round((zero ->> 'log_loss')::numeric, 4), round((best ->> 'log_loss')::numeric, 4),
					   best ->> 'lambda', CASE WHEN (best ->> 'components')::integer > 1
											   THEN format(', %s components', best ->> 'components') ELSE '' END,
					   round((best ->> 'log_loss_gain')::numeric, 4), round((best ->> 'log_loss_gain_se')::numeric, 4))
			END,
				  HINT = 'Lambda 0 is chosen: the model of the labelled rows alone.';
	END IF;
	RETURN QUERY
		SELECT x.lambda, x.components, x.accuracy, x.accuracy_std, x.macro_f1, x.macro_f1_std, x.log_loss, x.log_loss_std,
			   x.log_loss_gain, x.log_loss_gain_se, x.n = pick
		FROM jsonb_to_recordset(per_lambda) AS x(n integer, lambda float8, components integer, accuracy float8, accuracy_std float8,
												  macro_f1 float8, macro_f1_std float8, log_loss float8,
												  log_loss_std float8, log_loss_gain float8, log_loss_gain_se float8)
		ORDER BY x.n;
END
$$;
COMMENT ON FUNCTION nbc_em_cv_summary(float8[], integer[], jsonb[]) IS 'the rows of nb_cross_validate_em from the metrics of each fold and pair of lambda and components: means, spreads, the gain in log loss over lambda 0 (1 component) with its standard error, and the pair chosen';

CREATE FUNCTION nb_cross_validate_em(rel regclass, label_column text, features_column text,
									 folds integer DEFAULT NULL, lambdas float8[] DEFAULT NULL,
									 fold_column text DEFAULT NULL, options jsonb DEFAULT NULL,
									 component_counts integer[] DEFAULT NULL)
RETURNS TABLE (lambda float8, components integer, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8,
			   log_loss_gain float8, log_loss_gain_se float8, chosen boolean)
-- VOLATILE: its rows go into a temporary table
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	fold bigint;
	per_fold jsonb[];
	fold_metrics jsonb[];
	-- nbc.progress: a NOTICE after a fold when nbc.progress_interval has
	-- passed since the start or the last one (each EM run reports its own)
	every interval;
	started timestamptz := clock_timestamp();
	reported timestamptz := started;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF options IS NOT NULL AND jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_cross_validate_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' OR options ? 'components' THEN
		RAISE EXCEPTION 'nb_cross_validate_em options must not name "lambda" or "components"'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'The weights of the unlabelled rows and the components per class to try are the arguments lambdas and component_counts.';
	END IF;
	component_counts := coalesce(component_counts, '{1}');
	IF array_position(component_counts, NULL) IS NOT NULL
	   OR EXISTS (SELECT FROM unnest(component_counts) AS k WHERE NOT k BETWEEN 1 AND 100) THEN
		RAISE EXCEPTION 'nb_cross_validate_em component_counts must be from 1 to 100'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('They are %s.', component_counts);
	END IF;
	-- the grid, sorted, with 0 (the labelled rows alone) first
	lambdas := coalesce(lambdas, '{0, 0.01, 0.03, 0.1, 0.3, 1}');
	IF array_position(lambdas, NULL) IS NOT NULL OR EXISTS (SELECT FROM unnest(lambdas) AS l WHERE NOT l BETWEEN 0 AND 1) THEN
		RAISE EXCEPTION 'nb_cross_validate_em lambdas must be between 0 and 1'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('They are %s.', lambdas);
	END IF;
	-- the grid: every pair of lambda and components, lambda 0 (the baseline)
	-- only with 1 component: components of the labelled rows alone can win
	-- on log loss and lose accuracy (test/bench/results.md, the fortunes)
	SELECT array_agg(l ORDER BY k, l), array_agg(k ORDER BY k, l) INTO lambdas, component_counts
	FROM (SELECT DISTINCT l FROM unnest(lambdas || 0::float8) AS l) ls,
		 (SELECT DISTINCT k FROM unnest(component_counts || 1) AS k) ks
	WHERE l > 0 OR k = 1;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT %s.nbc_progress_every()', ext) INTO every;
	EXECUTE format('SELECT * FROM %s.nbc_em_cv_rows($1, $2, $3, $4, $5, $6)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column,
						 CASE WHEN jsonb_typeof(options -> 'tokenizer') = 'object' THEN options -> 'tokenizer' END;
	-- each fold's EM runs on the documents' tokens: no tokenizer for it
	options := coalesce(options, '{}') - 'tokenizer';
	FOREACH fold IN ARRAY setup.fold_ids LOOP
		EXECUTE format('SELECT %s.nbc_em_cv_fold($1, $2, $3, $4)', ext)
			INTO per_fold USING fold, lambdas, component_counts, options;
		-- [fold][lambda]
		fold_metrics := fold_metrics || ARRAY[per_fold];
		IF clock_timestamp() - reported >= every THEN
			RAISE NOTICE 'nb_cross_validate_em: fold % of %: % EM runs',
				array_position(setup.fold_ids, fold), array_length(setup.fold_ids, 1), array_length(lambdas, 1)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 1));
			reported := clock_timestamp();
		END IF;
	END LOOP;
	DROP VIEW pg_temp.nbc_em_cv_fold;
	DROP TABLE pg_temp.nbc_em_cv_rows;
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_cv_summary($1, $2, $3)', ext)
		USING lambdas, component_counts, fold_metrics;
END
$$;
COMMENT ON FUNCTION nb_cross_validate_em(regclass, text, text, integer, float8[], text, jsonb, integer[]) IS 'EM''s weight of the unlabelled rows and components per class chosen by cross-validation on the labelled rows: per pair, mean and spread over the folds of accuracy, macro F1 and log loss, the gain over lambda 0 (1 component) and its standard error, and the one chosen';

-- nbc_em_choose: nb_train_em's options with "lambda" and "components"
-- numbers: as given, or for "auto" (nb_cross_validate_em's grid; components
-- 1, 2 and 4) or an array of candidates of either, the pair
-- nb_cross_validate_em chooses (a number of the other its one candidate),
-- with the options "folds" and "fold_column" its folds; a NOTICE says which.
CREATE FUNCTION nbc_em_choose(rel regclass, label_column text, features_column text, options jsonb)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	candidates float8[];
	ks integer[];
	folds integer;
	picked record;
	o text;
BEGIN
	IF jsonb_typeof(options) IS DISTINCT FROM 'object'
	   OR (jsonb_typeof(options -> 'lambda') IS DISTINCT FROM 'array' AND options -> 'lambda' IS DISTINCT FROM '"auto"'
		   AND jsonb_typeof(options -> 'components') IS DISTINCT FROM 'array' AND options -> 'components' IS DISTINCT FROM '"auto"') THEN
		IF options ? 'folds' OR options ? 'fold_column' THEN
			RAISE EXCEPTION 'nb_train_em options "folds" and "fold_column" need "lambda" or "components" "auto" or an array of candidates'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		FOREACH o IN ARRAY ARRAY['lambda', 'components'] LOOP
			IF jsonb_typeof(options -> o) = 'string' THEN
				RAISE EXCEPTION 'nb_train_em option "%" must be a number, "auto" or an array of numbers', o
					USING ERRCODE = 'invalid_parameter_value',
						  DETAIL = format('It is %s.', options -> o);
			END IF;
		END LOOP;
		RETURN options;
	END IF;
	FOREACH o IN ARRAY ARRAY['lambda', 'components'] LOOP
		IF jsonb_typeof(options -> o) IN ('array', 'string') AND options -> o <> '"auto"'
		   AND (jsonb_typeof(options -> o) = 'string'
				OR EXISTS (SELECT FROM jsonb_array_elements(options -> o) AS e WHERE jsonb_typeof(e) <> 'number')) THEN
			RAISE EXCEPTION 'nb_train_em option "%" must be a number, "auto" or an array of numbers', o
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> o);
		END IF;
	END LOOP;
	IF options ? 'components' AND options -> 'components' <> '"auto"' AND EXISTS (
		SELECT FROM jsonb_array_elements(CASE jsonb_typeof(options -> 'components') WHEN 'array' THEN options -> 'components'
											  ELSE jsonb_build_array(options -> 'components') END) AS e
		WHERE CASE WHEN jsonb_typeof(e) <> 'number' THEN true ELSE e::text::numeric <> trunc(e::text::numeric) END) THEN
		RAISE EXCEPTION 'nb_train_em option "components" must be an integer, "auto" or an array of integers'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('It is %s.', options -> 'components');
	END IF;
	candidates := CASE jsonb_typeof(options -> 'lambda')
		WHEN 'array' THEN ARRAY(SELECT e::text::float8 FROM jsonb_array_elements(options -> 'lambda') AS e)
		WHEN 'number' THEN ARRAY[(options ->> 'lambda')::float8] END;
	ks := CASE WHEN options -> 'components' = '"auto"' THEN '{1, 2, 4}'::integer[]
		WHEN jsonb_typeof(options -> 'components') = 'array' THEN ARRAY(SELECT e::text::numeric::integer FROM jsonb_array_elements(options -> 'components') AS e)
		WHEN jsonb_typeof(options -> 'components') = 'number' THEN ARRAY[(options ->> 'components')::numeric::integer] END;
	IF options ? 'folds' THEN
		IF jsonb_typeof(options -> 'folds') <> 'number'
		   OR (options ->> 'folds')::numeric <> trunc((options ->> 'folds')::numeric)
		   OR (options ->> 'folds')::numeric NOT BETWEEN 2 AND 2147483647 THEN
			RAISE EXCEPTION 'nb_train_em option "folds" must be an integer at least 2'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'folds');
		END IF;
		folds := (options ->> 'folds')::integer;
	END IF;
	IF options ? 'fold_column' AND jsonb_typeof(options -> 'fold_column') <> 'string' THEN
		RAISE EXCEPTION 'nb_train_em option "fold_column" must be the name of a column'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT lambda, components FROM %s.nb_cross_validate_em($1, $2, $3, $4, $5, $6, $7, $8) WHERE chosen', ext)
		INTO picked USING rel, label_column, features_column, folds, candidates, options ->> 'fold_column',
						  options - 'lambda' - 'folds' - 'fold_column' - 'components', ks;
	IF ks IS NULL THEN
		RAISE NOTICE 'nb_train_em: lambda % chosen by cross-validation on the labelled rows', picked.lambda;
	ELSE
		RAISE NOTICE 'nb_train_em: lambda % and components % chosen by cross-validation on the labelled rows',
			picked.lambda, picked.components;
	END IF;
	RETURN options - 'folds' - 'fold_column' || jsonb_build_object('lambda', picked.lambda, 'components', picked.components);
END
$$;
COMMENT ON FUNCTION nbc_em_choose(regclass, text, text, jsonb) IS 'nb_train_em''s options with lambda and components numbers: for "auto" or an array of candidates, the pair nb_cross_validate_em chooses';
