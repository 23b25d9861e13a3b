-- nbc 0.13.0 -> 0.14.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.14.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- nb_train's final function: a WARNING when the classes are almost as many
-- as the documents (label and features swapped).  CREATE OR REPLACE
-- AGGREGATE adds it in place, so that views and materialized views over
-- nb_train (where models are often kept) keep working through the update.

CREATE FUNCTION nbc_train_final(nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nbc_train_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION nbc_train_final(nb_model) IS 'final function of nb_train: the model, after a WARNING when most classes have a single document';

CREATE OR REPLACE AGGREGATE nb_train(label text, features text[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features text[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features tsvector) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features tsvector, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features jsonb, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features double precision[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features double precision[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text, weight double precision, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features text[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features text[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features tsvector) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features tsvector, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features jsonb, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features double precision[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features double precision[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text, weight double precision, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);

-- ---------------------------------------------------------------------------
-- nb_probability's label and nb_explain's against of any type, as nb_train
-- and nb_metrics take a label (label::text, the form nb_train stores).  STABLE
-- as the cast to text of some types is (timestamptz).  A text literal or
-- column still chooses the text form.  nb_explain's form has no default for
-- options and against (a polymorphic argument's type cannot come from a
-- default): nb_explain(model, features) keeps choosing the text form.

CREATE FUNCTION nb_probability(model nb_model, features text[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features tsvector, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features jsonb, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features float8[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, body text, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_probability(nb_model, text[], anynonarray, jsonb) IS 'posterior probability of one class of a bag of tokens, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, anynonarray, jsonb) IS 'posterior probability of one class of a tsvector, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, anynonarray, jsonb) IS 'posterior probability of one class of a row of named features, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, float8[], anynonarray, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, text, anynonarray, jsonb) IS 'posterior probability of one class of a document of text, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, anynonarray, integer) IS 'nb_explain of a bag of tokens against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, anynonarray, integer) IS 'nb_explain of a tsvector against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, anynonarray, integer) IS 'nb_explain of a row of named features against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, anynonarray, integer) IS 'nb_explain of a vector of Gaussian features against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, anynonarray, integer) IS 'nb_explain of a document of text against a class given as a label of any type (against::text)';

-- ---------------------------------------------------------------------------
-- Calibration without the array shuttle (#41, item 4).  The out-of-fold
-- scores travelled as one float8[rows][1 + classes] per pass of 8 folds,
-- concatenated in PL/pgSQL and handed to nbc_calibration_fit.  One
-- aggregate now scores every fold's rows and fits in its final function
-- (src/workflows/pg_calibrate.c): nbc_calibration(fold, features, actual,
-- whole, fold_models, folds, classes, options, method), each row scored by
-- whole minus the model of its fold, made when the fold changes (the rows
-- come fold by fold: one out-of-fold model at a time).
DROP FUNCTION nbc_calibration_fit(text, float8[], text[], jsonb);
DROP AGGREGATE nbc_calibration_scores(nb_model, text[], text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, tsvector, text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, jsonb, text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, float8[], text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, text, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text[], text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, tsvector, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, jsonb, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, float8[], text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_final(internal);

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

-- nb_calibrate: the rows and folds of nb_cross_validate (the same checks,
-- the same assignment of rows to folds), one training pass (a model per
-- fold and their merge), the limit of the scores' memory checked, then
-- one pass of nbc_calibration over every fold's rows in fold order.
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
	classes text[];
	fitted jsonb;
	doing text;
	-- the error of an internal statement, raised again
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
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_cross_validate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_calibrate_rows';
	rows_sql := setup.rows_sql;
	-- An error in an internal statement is raised again with a sentence
	-- saying what calibration was doing, not the generated statement.
	doing := format('Calibration on "%s" was training a model per fold.', rel);
	BEGIN
		-- on Citus the rows come to the coordinator first (see nb_cross_validate)
		IF setup.rows_copied THEN
			EXECUTE format('CREATE TEMPORARY TABLE nbc_calibrate_rows ON COMMIT DROP AS %s', rows_sql);
			rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_calibrate_rows';
		END IF;
		EXECUTE format(
			'SELECT array_agg(fold ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
			'       array_agg(model ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS models, '
			'       array_agg(n ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS fold_rows, sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
			'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
			'      FROM (%2$s) r GROUP BY fold) f',
			ext, rows_sql, CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
			INTO trained;
		IF trained.folds IS NULL THEN
			RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'A row needs a label, features and a fold.';
		END IF;
		IF fold_column IS NULL AND array_length(trained.folds, 1) < coalesce(folds, 5) THEN
			RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('%s rows to calibrate on in %s folds.', array_length(trained.folds, 1), coalesce(folds, 5));
		END IF;
		IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
			RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Each fold is scored by a model of the rows outside it.';
		END IF;
		EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
			INTO classes USING trained.whole;
		IF array_length(classes, 1) < 2 THEN
			RAISE EXCEPTION 'relation "%" has one class', rel
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Calibration needs rows of at least two classes.';
		END IF;
		-- the scores' limit (NB_CALIBRATION_MAX_BYTES in pg_calibrate.c), checked before any row is scored
		doing := format('Calibration on "%s" was counting its rows and classes.', rel);
		IF trained.all_rows * (array_length(classes, 1) + 1) * 8 > 268435456 THEN
			RAISE EXCEPTION 'too many rows to calibrate'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = format('The log posteriors of %s rows of %s classes would take %s bytes, more than the limit of 268435456.',
									  trained.all_rows, array_length(classes, 1), trained.all_rows * (array_length(classes, 1) + 1) * 8);
		END IF;
		-- the options are checked against the model before any fold is scored
		doing := format('Calibration on "%s" was checking the options.', rel);
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;
		-- every fold's rows, fold by fold, scored and fitted by one aggregate
		doing := format('Calibration on "%s" was scoring its %s folds and fitting.', rel, array_length(trained.folds, 1));
		IF setup.on_citus AND NOT setup.rows_copied THEN
			rows_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', rows_sql);
		END IF;
		EXECUTE format('SELECT %1$s.nbc_calibration(r.fold, r.features, r.actual, $1, $2, $3, $4, $5, $6) '
					   'FROM (SELECT * FROM (%2$s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r', ext, rows_sql)
			INTO fitted USING trained.whole, trained.models, trained.folds, classes, options, method;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_calibrate_rows;
	END IF;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8, (fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;

-- ---------------------------------------------------------------------------
-- EM's aggregate driver removed (#41 item 5): nb_train_em runs its
-- iterations in C (nbc_em_iterate, src/workflows/pg_em_run.c) since 0.12.0;
-- the aggregate nbc_em_step that it ran once per iteration before, an
-- internal object with nothing left calling it, goes with its functions
-- and its result type.
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, tsvector, float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, tsvector, float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_final(internal);
DROP TYPE nbc_em_step;

-- ---------------------------------------------------------------------------
-- nb_cross_validate in parts of at most 100 lines (#41 item 3): the checks of
-- the trained folds (nbc_cross_validate_checks), the scoring passes
-- (nbc_cross_validate_score) and the means and spreads over the folds
-- (nbc_cross_validate_summary) are functions of their own; what each does
-- and the statements it runs are as before, so the results are the same to
-- the last bit.  With more classes than cross-validation supports and more
-- classes than half the rows, the hint asks whether the label and features
-- columns are swapped (#42).

CREATE FUNCTION nbc_cross_validate_checks(rel regclass, folds integer, fold_column text,
										  trained_folds anyarray, fold_rows bigint[],
										  all_rows numeric, whole nb_model)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	n_classes bigint;
BEGIN
	IF trained_folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained_folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained_folds, 1), folds);
	END IF;
	IF array_position(fold_rows, all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained_folds[array_position(fold_rows, all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;
	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = CASE WHEN n_classes > all_rows / 2
							  THEN format('A class has fewer than two rows on average (%s classes from %s rows): are the label and features columns swapped? The order is nb_cross_validate(rel, label_column, features_column).',
										  n_classes, all_rows)
							  ELSE 'Group rare labels together, or cross-validate a subset of the classes.' END;
	END IF;
END
$$;

COMMENT ON FUNCTION nbc_cross_validate_checks(regclass, integer, text, anyarray, bigint[], numeric, nb_model) IS 'the checks of nb_cross_validate''s folds once trained: rows in a fold, at least as many rows as folds, no fold of every row, at most 2048 classes';

-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
-- nb_subtract(whole, fold's model) of two parameters, so that the planner
-- computes it once as a constant of the plan: the model is prepared once
-- with a scorer per option set, and each row is looked up once and scored
-- under every option set.  (Parameters of their own: one array of all the
-- models, subscripted in the query, made the planner copy the whole array
-- for each fold.)  The rows come in fold order, so that one model's
-- tables are in use at a time (interleaved, the models' tables together
-- fall out of the CPU's caches: a third slower).  At most 8 folds per
-- pass over the rows: each fold's prepared model stays in memory until
-- its query ends, and a query has at most 1664 columns, so that
-- leave-one-out (a fold per row) works too.  The result is [fold][option
-- set], the folds in their order.
CREATE FUNCTION nbc_cross_validate_score(rel regclass, scored_sql text, option_sets jsonb[],
										 whole nb_model, folds anyarray, models nb_model[],
										 progress boolean, started timestamptz)
RETURNS jsonb[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	n integer := array_length(folds, 1);
	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order integer[] := ARRAY(SELECT i FROM generate_subscripts(folds, 1) AS i ORDER BY folds[i]);
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	SELECT quote_ident(ns.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	FOR b IN 0 .. (n - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, n) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		doing := format('Cross-validation of "%s" was scoring folds %s to %s of %s.',
						rel, b * 8 + 1, least(b * 8 + 8, n), n);
		BEGIN
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
					   per_fold, scored_sql)
			INTO batch
			USING option_sets, whole,
				  models[fold_order[b * 8 + 1]], models[fold_order[b * 8 + 2]],
				  models[fold_order[b * 8 + 3]], models[fold_order[b * 8 + 4]],
				  models[fold_order[b * 8 + 5]], models[fold_order[b * 8 + 6]],
				  models[fold_order[b * 8 + 7]], models[fold_order[b * 8 + 8]];
		EXCEPTION WHEN query_canceled OR others THEN
			-- raised again with what cross-validation was doing (see nb_cross_validate)
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
									e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
			IF e_hint = '' THEN
				RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
			END IF;
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
		END;
		fold_metrics := fold_metrics || batch;
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %', b * 8 + 1, least(b * 8 + 8, n), n
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	RETURN fold_metrics;
END
$$;

COMMENT ON FUNCTION nbc_cross_validate_score(regclass, text, jsonb[], nb_model, anyarray, nb_model[], boolean, timestamptz) IS 'the scoring passes of nb_cross_validate: nb_grid_metrics of every fold''s rows under its out-of-fold model, at most 8 folds per pass, as [fold][option set] in fold order';

-- The means and spreads add the folds in their order, whatever the plan,
-- so that the results do not depend on it to the last bit.
CREATE FUNCTION nbc_cross_validate_summary(option_sets jsonb[], fold_metrics jsonb[])
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH s AS (SELECT k, n, (m[k][n] ->> 'accuracy')::float8 AS accuracy,
				  (m[k][n] -> 'macro' ->> 'f1')::float8 AS macro_f1, (m[k][n] ->> 'log_loss')::float8 AS log_loss
		   FROM (SELECT fold_metrics AS m) a, generate_subscripts(fold_metrics, 1) AS k,
				generate_subscripts(fold_metrics, 2) AS n)
SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k),
	   avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k),
	   avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k)
FROM unnest(option_sets) WITH ORDINALITY AS g(options, n) JOIN s USING (n)
GROUP BY g.n, g.options
ORDER BY 2 DESC, 4 DESC, 6, g.n
$$;

COMMENT ON FUNCTION nbc_cross_validate_summary(jsonb[], jsonb[]) IS 'nb_cross_validate''s result from every fold''s metrics ([fold][option set]): per option set the mean and standard deviation of accuracy, macro F1 and log loss over the folds, best first';

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
	-- nbc.progress: a NOTICE per pass, its elapsed time in the DETAIL
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
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
	IF progress THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_score($1, $2, $3, $4, $5, $6, $7, $8)', ext)
		INTO fold_metrics
		USING rel, scored_sql, option_sets, trained.whole, trained.folds, trained.models, progress, started;
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

-- ---------------------------------------------------------------------------
-- nbc_em_run in parts under 100 lines (#41 item 3): the checks of its
-- options (nbc_em_options) and of its columns (nbc_em_features_type) are
-- functions of their own, with the same checks and errors as before; an
-- option that is neither EM's nor the model's gets a hint naming EM's own
-- options first (#42).

CREATE FUNCTION nbc_em_options(options jsonb, OUT lambda float8, OUT iterations integer,
							   OUT tolerance float8, OUT tokenizer jsonb, OUT train_options jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	lambda := 1;
	iterations := 20;
	tolerance := 1e-6;
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
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer', '{}');
END
$$;

COMMENT ON FUNCTION nbc_em_options(jsonb) IS 'nb_train_em''s options checked and taken apart: lambda, iterations, tolerance, tokenizer and the rest, the model''s options (NULL: none)';

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
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', ext)
		USING model, rel, label_column, features_column, ftype, opts.lambda, opts.train_options, opts.tokenizer,
			  opts.iterations, opts.tolerance, first.unlabelled, trace, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		IF e_message LIKE 'unrecognized naive Bayes option%' THEN
			e_hint := 'nb_train_em''s own options are lambda, iterations, tolerance, tokenizer, folds and fold_column; the others are the model''s. ' || e_hint;
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

-- ---------------------------------------------------------------------------
-- nbc_cross_validation_rows under 100 lines (#41 item 6): whether the
-- relation is or reads a Citus table is a function of its own.

-- Whether a relation is a Citus table (distributed or reference) or a view
-- that reads one, through the rules of views.  Then cross-validation's rows
-- come to the coordinator once, into a temporary table that both passes
-- then read locally.  Read directly, Citus would evaluate each fold's
-- nb_subtract on the workers, its two models constants of the worker query,
-- and ship a whole model with every row.  Where no table can be made (a
-- read-only transaction, no right to make temporary tables, or the name
-- taken) the scoring passes read the rows through a MATERIALIZED CTE, which
-- Citus runs first as a subplan: slower, since the training is then
-- combined from every shard's partial models, and the query that scores
-- carries the folds' models in its text.  Dynamic SQL, since
-- pg_dist_partition exists only where Citus is installed.
CREATE FUNCTION nbc_reads_citus(rel regclass) RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	reads_citus boolean := false;
BEGIN
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		EXECUTE 'WITH RECURSIVE reads(relid) AS ('
				'    SELECT $1::oid'
				'    UNION'
				'    SELECT d.refobjid FROM reads'
				'    JOIN pg_catalog.pg_rewrite w ON w.ev_class = reads.relid'
				'    JOIN pg_catalog.pg_depend d ON d.classid = ''pg_catalog.pg_rewrite''::regclass'
				'                               AND d.objid = w.oid'
				'                               AND d.refclassid = ''pg_catalog.pg_class''::regclass)'
				'SELECT EXISTS (SELECT FROM reads JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid = reads.relid)'
			INTO reads_citus USING rel;
	END IF;
	RETURN reads_citus;
END
$$;
COMMENT ON FUNCTION nbc_reads_citus(regclass) IS 'whether a relation is a Citus table (distributed or reference) or a view that reads one (cross-validation then copies its rows to the coordinator once)';

CREATE OR REPLACE FUNCTION nbc_cross_validation_rows(rel regclass, label_column text, features_column text,
										  folds integer, fold_column text, tokenizer jsonb,
										  rows_table text,
										  OUT ftype regtype, OUT rows_sql text,
										  OUT on_citus boolean, OUT rows_copied boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	fold_type regtype;
	hash text;
	fold_sql text;
	cols record;
	ext text;
BEGIN
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	-- the columns: each must exist; features must be of a type nbc trains on
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	-- a domain counts as its base type
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	-- documents in a varchar column are text
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	END IF;
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
		WHEN 'text'::regtype THEN format('hashtextextended(%I::text COLLATE "C", 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text, text[], tsvector, jsonb or float8[].';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	-- the rows: label as text, features as they are, fold (NULL: training only)
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- On Citus the rows come to the coordinator once (nbc_reads_citus says why)
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc';
	EXECUTE format('SELECT %s.nbc_reads_citus($1)', ext) INTO on_citus USING rel;
	rows_copied := on_citus AND NOT current_setting('transaction_read_only')::boolean
				   AND has_database_privilege(current_database(), 'TEMPORARY')
				   AND to_regclass('pg_temp.' || quote_ident(rows_table)) IS NULL;
END
$$;
