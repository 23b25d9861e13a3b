-- nbc's objects, 80: calibrated probabilities: nb_calibrate and the
-- aggregate and fit it runs.

-- Calibrated probabilities (issue #31, part 2; nb_calibrate.h, src/workflows/pg_calibrate.c).
-- Two prediction options map a row's posteriors after scoring, in every
-- function that scores: "temperature" T (log posteriors divided by T and
-- normalized again) and "sigmoid" (Platt's sigmoid per class, as
-- scikit-learn's CalibratedClassifierCV(method="sigmoid")).  nb_calibrate
-- fits either on out-of-fold posteriors, folds as nb_cross_validate makes
-- them (no refitting: each fold's model is nb_subtract(whole, fold)), and
-- returns the options that apply it, for nb_with_options.

-- nbc_calibration(fold, features, actual, whole, fold_models, folds,
-- classes, options, method): one pass over every fold's rows in fold order
-- (src/workflows/pg_calibrate.c), each row scored by whole minus the model
-- of its fold, made when the fold changes (one out-of-fold model at a
-- time); the final function fits, and returns the fit as jsonb.
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, text[], text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_array' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, tsvector, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_tsvector' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, jsonb, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_jsonb' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, float8[], text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_float8' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, text, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_text' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_final(internal) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nbc_calibration(fold bigint, features text[], actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features tsvector, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features jsonb, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features float8[], actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, body text, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);

-- nbc_calibrate_checks: nb_calibrate's checks of its folds once trained
-- (a row in a fold, at least as many rows as folds, no fold of every row,
-- at least two classes, the scores' limit), each error's DETAIL saying
-- what calibration was doing; the labels of the whole model, in its order.
-- PARALLEL RESTRICTED: it is called in the training's statement, which a
-- parallel-unsafe function would keep out of parallel workers.
CREATE FUNCTION nbc_calibrate_checks(rel regclass, folds integer, fold_column text, fold_ids bigint[],
									 fold_rows bigint[], all_rows numeric, whole nb_model)
RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
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
CREATE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
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
COMMENT ON FUNCTION nb_calibrate(regclass, text, text, integer, jsonb, text, jsonb, text) IS 'fit calibrated probabilities (method auto, temperature or sigmoid) on the out-of-fold posteriors of k-fold cross-validation: the options that apply them, and the out-of-fold log loss and Brier score before and after';
