-- nbc 0.15.0 -> 0.16.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.16.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- A cancel of nb_calibrate reaches the client before the memory of its
-- training is freed (issue #40): its training and scoring statements run
-- outside any exception block, whose rollback freed hundreds of megabytes
-- first; its checks move to nbc_calibrate_checks, run in the training's
-- statement (a refusal comes before the models are copied out of it),
-- their errors' DETAIL unchanged, and an error of the scoring names the
-- fold or the fit in its CONTEXT (pg_calibrate.c).

-- nbc_calibrate_checks: nb_calibrate's checks of its folds once trained
-- (a row in a fold, at least as many rows as folds, no fold of every row,
-- at least two classes, the scores' limit), each error's DETAIL saying
-- what calibration was doing; the labels of the whole model, in its order.
CREATE FUNCTION nbc_calibrate_checks(rel regclass, folds integer, fold_column text, fold_ids bigint[],
									 fold_rows bigint[], all_rows numeric, whole nb_model)
RETURNS text[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	classes text[];
	doing text := format('Calibration on "%s" was training a model per fold.', rel);
BEGIN
	IF fold_ids IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
			USING ERRCODE = 'invalid_parameter_value', DETAIL = 'A row needs a label, features and a fold. ' || doing;
	END IF;
	IF fold_column IS NULL AND array_length(fold_ids, 1) < coalesce(folds, 5) THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to calibrate on in %s folds. %s', array_length(fold_ids, 1), coalesce(folds, 5), doing);
	END IF;
	IF array_position(fold_rows, all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', fold_ids[array_position(fold_rows, all_rows)]
			USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Each fold is scored by a model of the rows outside it. ' || doing;
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc';
	EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
		INTO classes USING whole;
	IF array_length(classes, 1) < 2 THEN
		RAISE EXCEPTION 'relation "%" has one class', rel
			USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Calibration needs rows of at least two classes. ' || doing;
	END IF;
	-- the scores' limit (NB_CALIBRATION_MAX_BYTES in pg_calibrate.c), checked before any row is scored
	IF all_rows * (array_length(classes, 1) + 1) * 8 > 268435456 THEN
		RAISE EXCEPTION 'too many rows to calibrate'
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = format('The log posteriors of %s rows of %s classes would take %s bytes, more than the limit of 268435456. '
								  'Calibration on "%s" was counting its rows and classes.',
								  all_rows, array_length(classes, 1), all_rows * (array_length(classes, 1) + 1) * 8, rel);
	END IF;
	RETURN classes;
END
$$;
COMMENT ON FUNCTION nbc_calibrate_checks(regclass, integer, text, bigint[], bigint[], numeric, nb_model) IS 'the checks of nb_calibrate''s folds once trained: a row in a fold, at least as many rows as folds, no fold of every row, at least two classes, the limit of the scores'' memory; the labels of the whole model';

-- nb_calibrate: the rows and folds of nb_cross_validate (the same checks,
-- the same assignment of rows to folds), one training pass (a model per
-- fold and their merge) with the checks of them and of the scores'
-- memory, then one pass of nbc_calibration over every fold's rows in fold
-- order.
CREATE OR REPLACE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
							 folds integer DEFAULT NULL, options jsonb DEFAULT NULL,
							 fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL,
							 method text DEFAULT 'auto')
RETURNS TABLE (calibrated_options jsonb, log_loss float8, calibrated_log_loss float8,
			   brier float8, calibrated_brier float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (nb_cross_validate)
LANGUAGE plpgsql VOLATILE
-- relocatable: nbc's objects through its schema, the rest from pg_catalog
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	rows_sql text;
	trained record;
	fitted jsonb;
	-- nbc.progress: a NOTICE once the folds are trained when
	-- nbc.progress_interval has passed (the scoring reports its folds)
	every interval;
	started timestamptz := clock_timestamp();
	-- the error of the options' check, raised again
	e_state text; e_message text; e_detail text; e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL OR method IS NULL THEN
		RAISE EXCEPTION 'relation, label column, features column and method must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF method NOT IN ('auto', 'temperature', 'sigmoid') THEN
		RAISE EXCEPTION 'unrecognized calibration method "%"', method
			USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid methods are "auto", "temperature" and "sigmoid".';
	END IF;
	IF options ? 'temperature' OR options ? 'sigmoid' THEN
		RAISE EXCEPTION 'options to calibrate must not be calibrated already' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The options name "temperature" or "sigmoid"; calibration fits them.';
	END IF;
	-- refused before the folds are trained (the scoring refuses it too)
	IF options ->> 'kind' = 'complement' THEN
		RAISE EXCEPTION 'complement naive Bayes has no probabilities to calibrate' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Complement''s scores rank the classes but are not probabilities: calibrate a kind "multinomial", "bernoulli" or "dcm".';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc';
	EXECUTE format('SELECT %s.nbc_progress_every()', ext) INTO every;
	-- the checks of the folds and columns and the rows' query, nb_cross_validate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_calibrate_rows';
	rows_sql := setup.rows_sql;
	-- The training and the scoring run in no exception block: a block rolls
	-- its subtransaction back before an error goes on, freeing all that the
	-- statement took (hundreds of megabytes over many classes) before a
	-- cancel reaches the client.  The checks' errors say in their DETAIL
	-- what calibration was doing; the scoring's name the fold or the fit
	-- in a CONTEXT line (pg_calibrate.c).  The checks run in the training's
	-- statement, so that a refusal comes before its result is copied out
	-- (the models, three times, with no check for a cancel).
	-- on Citus the rows come to the coordinator first (see nb_cross_validate)
	IF setup.rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_calibrate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_calibrate_rows';
	END IF;
	EXECUTE format(
		'SELECT t.*, %1$s.nbc_calibrate_checks($1, $2, $3, t.folds, t.fold_rows, t.all_rows, t.whole) AS classes '
		'FROM (SELECT array_agg(fold ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'array_agg(model ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS models, '
		'array_agg(n ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS fold_rows, sum(n) AS all_rows, '
		'%1$s.nb_merge(model) AS whole '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'FROM (%2$s) r GROUP BY fold) f) t',
		ext, rows_sql, CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING rel, folds, fold_column;
	IF clock_timestamp() - started >= every THEN
		RAISE NOTICE 'nb_calibrate: trained % folds of % rows', array_length(trained.folds, 1), trained.all_rows
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 1));
	END IF;
	-- the options are checked against the model before any fold is scored,
	-- an error raised again saying so (the block's rollback frees only the
	-- model with the options that this statement made)
	BEGIN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), format('Calibration on "%s" was checking the options.', rel));
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	-- every fold's rows, fold by fold, scored and fitted by one aggregate
	IF setup.on_citus AND NOT setup.rows_copied THEN
		rows_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', rows_sql);
	END IF;
	EXECUTE format('SELECT %1$s.nbc_calibration(r.fold, r.features, r.actual, $1, $2, $3, $4, $5, $6) '
				   'FROM (SELECT * FROM (%2$s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r', ext, rows_sql)
		INTO fitted USING trained.whole, trained.models, trained.folds, trained.classes, options, method;
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_calibrate_rows;
	END IF;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8, (fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;

-- ---------------------------------------------------------------------------
-- Progress (#42 item 7): nb_cross_validate, nb_cross_validate_em and
-- nb_calibrate read the interval between two progress NOTICEs from one C
-- function, nbc_progress_every, instead of each from current_setting();
-- nb_live_create returns its one row through OUT parameters instead of a
-- TABLE (same columns): dropped and made again.  The NOTICEs of nb_prune,
-- nb_train and nb_grid_metrics are in the library.

CREATE FUNCTION nbc_progress_every() RETURNS interval
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION nbc_progress_every() IS 'the interval between two progress NOTICEs of nb_cross_validate, nb_cross_validate_em and nb_calibrate: nbc.progress_interval, NULL when nbc.progress is off';

CREATE OR REPLACE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (below)
LANGUAGE plpgsql VOLATILE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	rows_sql text;
	scored_sql text;
	option_sets jsonb[];
	fold_metrics jsonb[];
	trained record;
	-- nbc.progress: a NOTICE after a pass, its elapsed time in the DETAIL,
	-- when nbc.progress_interval has passed since the start or the last one
	every interval;
	started timestamptz := clock_timestamp();
	reported timestamptz := started;
	-- what the internal statements were doing when they failed (see below)
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
	EXECUTE format('SELECT %s.nbc_progress_every()', ext) INTO every;
	-- the checks of the folds and columns and the rows' query, nb_calibrate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_cross_validate_rows';
	rows_sql := setup.rows_sql;

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring passes, so that only a
	-- batch of them is ever in memory (a leave-one-out model is nearly the
	-- whole).  A fold holds every row when its rows are all the rows.
	--
	-- An error or a cancel in an internal statement is raised again from here
	-- with its SQLSTATE, message, detail and hint, and a sentence saying what
	-- cross-validation was doing (doing; NULL: nothing to add, or the helper
	-- said it): PostgreSQL's CONTEXT would otherwise quote the whole generated
	-- statement (near 1,000 characters per batch of folds).
	BEGIN
	doing := format('Cross-validation of "%s" was training a model per fold.', rel);
	IF setup.rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_cross_validate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_cross_validate_rows';
	END IF;
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql,
		CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid;
	doing := NULL;
	-- the rows a scoring pass reads: those in a fold
	scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
	IF setup.on_citus AND NOT setup.rows_copied THEN
		scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_checks($1, $2, $3, $4, $5, $6, $7)', ext)
		USING rel, coalesce(folds, 5), fold_column, trained.folds, trained.fold_rows, trained.all_rows, trained.whole;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING trained.grid;
	IF clock_timestamp() - reported >= every THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 1));
		reported := clock_timestamp();
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_score($1, $2, $3, $4, $5, $6, $7, $8, $9)', ext)
		INTO fold_metrics
		USING rel, scored_sql, option_sets, trained.whole, trained.folds, trained.models, every, started, reported;
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
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_cross_validate_rows;
	END IF;
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_cross_validate_summary($1, $2)', ext)
		USING option_sets, fold_metrics;
END
$$;



DROP FUNCTION nb_live_create(text, regclass, name, name, name, jsonb);

CREATE FUNCTION nb_live_create(name text, source regclass, label name, features name,
		weight name DEFAULT NULL, options jsonb DEFAULT NULL,
		OUT live_model regclass, OUT documents float8, OUT classes integer)
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	key text;
	tokenizer jsonb := options -> 'tokenizer';
	fold_after integer := 256;
	state regclass;
	tg text;
	info jsonb;
BEGIN
	IF name IS NULL OR source IS NULL OR label IS NULL OR features IS NULL THEN
		RAISE EXCEPTION 'a live model needs a name, a source table, a label column and a features column'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'nb_live_create must run in a READ COMMITTED transaction'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = 'An older snapshot could miss rows written before the live model''s triggers existed.';
	END IF;
	FOR key IN SELECT jsonb_object_keys(options) LOOP
		IF key NOT IN ('tokenizer', 'fold_after') THEN
			RAISE EXCEPTION 'unrecognized live model option "%"', key
				USING ERRCODE = 'invalid_parameter_value', HINT = 'The options are tokenizer and fold_after.';
		END IF;
	END LOOP;
	IF options ? 'fold_after' THEN
		IF jsonb_typeof(options -> 'fold_after') <> 'number'
		   OR (options ->> 'fold_after')::numeric NOT BETWEEN 1 AND 10000
		   OR (options ->> 'fold_after')::numeric <> trunc((options ->> 'fold_after')::numeric) THEN
			RAISE EXCEPTION 'fold_after must be an integer from 1 to 10000'
				USING ERRCODE = 'numeric_value_out_of_range';
		END IF;
		fold_after := (options ->> 'fold_after')::integer;
	END IF;
	IF jsonb_typeof(tokenizer) = 'null' THEN
		tokenizer := NULL;
	END IF;
	EXECUTE format('SELECT %s.nbc_live_check($1, $2, $3, $4, $5)', s) USING source, label, features, weight, tokenizer;
	IF tokenizer IS NOT NULL THEN
		-- the tokenizer's options are checked as nb_tokens checks them
		EXECUTE format('SELECT %s.nb_tokens('''', $1)', s) USING tokenizer;
	END IF;
	-- no writer may commit between the base and the triggers
	EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', source);
	EXECUTE format('SELECT %s.nbc_live_table($1, $2)', s) INTO state USING name, source;
	EXECUTE format('SELECT %s.nbc_live_attach($1, $2, $3, $4, $5)', s) INTO tg USING state, source, label, features, weight;
	EXECUTE format('INSERT INTO %s (id, source, tokenizer, fold_after, folded_through, based_through, triggers) '
				   'VALUES (0, $1, $2, $3, 0, 0, $4)', state) USING source, tokenizer, fold_after, tg;
	EXECUTE format('UPDATE %1$s SET added = %2$s.nbc_live_train($1) WHERE id = 0 RETURNING %2$s.nb_info(added)', state, s)
		INTO info USING state;
	live_model := state;
	documents := coalesce((info ->> 'documents')::float8, 0);
	classes := coalesce((info ->> 'classes')::integer, 0);
END
$$;
COMMENT ON FUNCTION nb_live_create(text, regclass, name, name, name, jsonb) IS 'create a live model: a table of that name holding nb_train over the table''s label and features (and weight) columns, kept exact by triggers as rows change (options: tokenizer, fold_after); its name, and the documents and classes it counted';

-- ---------------------------------------------------------------------------
-- EM-CM (#43 item 2): nb_train_em's option "components", several mixture
-- components per class, and nb_cross_validate_em's grid of them beside
-- lambda (argument component_counts, result column components).  The
-- functions whose arguments or result change are dropped and created
-- again; the others replaced.
DROP FUNCTION nbc_em_options(jsonb);
DROP FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz);
DROP FUNCTION nb_cross_validate_em(regclass, text, text, integer, float8[], text, jsonb);
DROP FUNCTION nbc_em_cv_fold(bigint, float8[], jsonb);
DROP FUNCTION nbc_em_cv_summary(float8[], jsonb[]);
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
	-- the grid: every pair of lambda and components, lambda 0 and 1 component first
	SELECT array_agg(l ORDER BY k, l), array_agg(k ORDER BY k, l) INTO lambdas, component_counts
	FROM (SELECT DISTINCT l FROM unnest(lambdas || 0::float8) AS l) ls,
		 (SELECT DISTINCT k FROM unnest(component_counts || 1) AS k) ks;
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

CREATE OR REPLACE FUNCTION nbc_em_choose(rel regclass, label_column text, features_column text, options jsonb)
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
