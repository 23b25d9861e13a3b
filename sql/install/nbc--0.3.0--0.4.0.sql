-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- The casts to and from text: the same conversions as the type's output
-- and input functions, written straight into (and read in slices from) the
-- text value, so that a big model's text form is made and read with checks
-- for a cancel throughout.  Assignment and explicit, as the I/O conversion
-- casts they replace.
CREATE FUNCTION nb_model_text(nb_model) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_model_to_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model(text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_model_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (nb_model AS text) WITH FUNCTION nb_model_text(nb_model) AS ASSIGNMENT;
CREATE CAST (text AS nb_model) WITH FUNCTION nb_model(text);

-- Unlearning: nb_subtract.
-- The model of the rows of a without those of b (which must be among them),
-- the inverse of nb_merge.  Not STRICT: NULL b gives a (and NULL a, NULL).
CREATE FUNCTION nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_subtract(nb_model, nb_model) IS 'model of the rows of the first model without those of the second (the inverse of nb_merge; NULL when nothing is left)';


-- Evaluation: nb_metrics.
-- Classification metrics of any query's predictions as jsonb (pg_metrics.c):
-- from labels, or from nb_predict_proba's probabilities (adding log loss,
-- Brier score, ROC AUC and average precision).  Internal state, so
-- parallel aggregation serializes partial states.
CREATE FUNCTION nb_metrics_label_transfn(internal, text, text) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_label_transfn(internal, text, text, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION nb_metrics_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION nb_metrics_final(internal) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_metrics(actual text, predicted text) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, predicted text, weight float8) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

-- A metrics value as rows for psql: one per class (kind 'class'), the
-- macro and weighted averages, then the confusion matrix (kind
-- 'confusion': class is the actual label, predicted the predicted one).
CREATE FUNCTION nb_metrics_rows(metrics jsonb)
	RETURNS TABLE (kind text, class text, predicted text, "precision" float8, recall float8,
				   f1 float8, support float8, roc_auc float8, average_precision float8,
				   count float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$
	SELECT kind, class, predicted, precision, recall, f1, support, roc_auc,
		   average_precision, count
	FROM (
		SELECT 1 AS part, 'class' AS kind, c.key AS class, NULL::text AS predicted,
			   (c.value ->> 'precision')::float8 AS precision,
			   (c.value ->> 'recall')::float8 AS recall,
			   (c.value ->> 'f1')::float8 AS f1,
			   (c.value ->> 'support')::float8 AS support,
			   (metrics -> 'roc_auc' -> 'classes' ->> c.key)::float8 AS roc_auc,
			   (metrics -> 'average_precision' -> 'classes' ->> c.key)::float8 AS average_precision,
			   NULL::float8 AS count
		FROM jsonb_each(metrics -> 'classes') AS c
		UNION ALL
		SELECT 2, a.kind, NULL, NULL, (a.value ->> 'precision')::float8,
			   (a.value ->> 'recall')::float8, (a.value ->> 'f1')::float8,
			   (SELECT sum((c.value ->> 'support')::float8)
				FROM jsonb_each(metrics -> 'classes') AS c),
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'roc_auc' ->> 'macro')::float8 END,
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'average_precision' ->> 'macro')::float8 END,
			   NULL
		FROM (VALUES ('macro', metrics -> 'macro'), ('weighted', metrics -> 'weighted'))
			AS a (kind, value)
		UNION ALL
		SELECT 3, 'confusion', a.key, p.key, NULL, NULL, NULL, NULL, NULL, NULL,
			   p.value::text::float8
		FROM jsonb_each(metrics -> 'confusion') AS a, jsonb_each(a.value) AS p
	) AS r
	ORDER BY part, kind, class COLLATE "C", predicted COLLATE "C"
	$$;



-- Cross-validation and tuning.

-- The grid as a list of option sets: an object {key: value or [values]} is
-- every combination of its values (scikit-learn's param_grid), an array is
-- the concatenation of its elements' lists.
CREATE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 20
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	part jsonb;
	combos jsonb;
	k text;
	vals jsonb;
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
		combos := '[{}]';
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) <> 'array' THEN
				vals := jsonb_build_array(vals);
			ELSIF jsonb_array_length(vals) = 0 THEN
				RAISE EXCEPTION 'grid key "%" has no values', k
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			SELECT jsonb_agg(c || jsonb_build_object(k, v) ORDER BY ci, vi) INTO combos
			FROM jsonb_array_elements(combos) WITH ORDINALITY AS a(c, ci),
				 jsonb_array_elements(vals) WITH ORDINALITY AS b(v, vi);
		END LOOP;
		RETURN QUERY SELECT c FROM jsonb_array_elements(combos) AS c;
	END LOOP;
END
$$;

-- The default grid for a model: the options that matter for its types of
-- features.
CREATE FUNCTION nb_grid_default(model nb_model) RETURNS jsonb
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text := (SELECT quote_ident(n.nspname)
				 FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
				 WHERE e.extname = 'nbc');
	info jsonb;
	types text[];
	grid jsonb := '{"fit_prior": [true, false]}';
BEGIN
	EXECUTE format('SELECT %s.nb_info($1)', ext) INTO info USING model;
	-- models of text[] or tsvector rows list no features: one bag
	types := coalesce(ARRAY(SELECT DISTINCT value FROM jsonb_each_text(info -> 'features')), '{}');
	IF NOT info ? 'features' THEN
		types := '{bag}';
	END IF;
	IF types && '{bag,categorical,boolean}' THEN
		grid := grid || '{"alpha": [0.01, 0.1, 0.5, 1]}';
	END IF;
	IF 'gaussian' = ANY (types) THEN
		grid := grid || '{"var_smoothing": [1e-9, 1e-6, 1e-3]}';
	END IF;
	IF 'bag' = ANY (types) THEN
		grid := grid || '{"kind": ["multinomial", "bernoulli"]}';
		-- complement applies to bags only, and ignores the prior
		IF types = '{bag}' THEN
			grid := jsonb_build_array(grid, '{"kind": "complement", "alpha": [0.01, 0.1, 0.5, 1]}'::jsonb);
		END IF;
	END IF;
	RETURN grid;
END
$$;

-- k-fold cross-validation of every option set of a grid: one training pass
-- (a model per fold), each fold's out-of-fold model by nb_subtract from the
-- whole, every held-out row scored under every option set, nb_metrics per
-- option set and fold.  Folds: the integers of fold_column, or by the rows'
-- contents (numbered by label, then by a hash of the features, mod folds),
-- so that they do not depend on where the rows are stored.
CREATE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE plpgsql STABLE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	fold_type regtype;
	hash text;
	rows_sql text;
	fold_sql text;
	scores text := '';
	trained record;
	cols record;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
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
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

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
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text[], tsvector, jsonb or float8[].';
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

	-- one pass: a model per fold; the whole by nb_merge, each fold's
	-- out-of-fold model by nb_subtract
	EXECUTE format(
		'WITH f AS (SELECT fold, %1$s.nb_train(actual, features) AS model FROM (%2$s) r GROUP BY fold), '
		'     w AS (SELECT %1$s.nb_merge(model) AS model FROM f) '
		'SELECT array_agg(f.fold ORDER BY f.fold) AS folds, '
		'       array_agg(%1$s.nb_subtract(w.model, f.model) ORDER BY f.fold) AS models, '
		'       (SELECT model FROM w) AS whole '
		'FROM f, w WHERE f.fold IS NOT NULL',
		ext, rows_sql) INTO trained;
	IF trained.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained.folds, 1), folds);
	END IF;
	IF array_position(trained.models, NULL) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.models, NULL)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	IF grid IS NULL THEN
		EXECUTE format('SELECT %s.nb_grid_default($1)', ext) INTO grid USING trained.whole;
	END IF;

	-- the fold's out-of-fold model for each held-out row.  Each model is
	-- a constant of the plan ($2[i] folds into one), so that every call
	-- site prepares its model once, however many rows it scores.
	FOR i IN 1 .. array_length(trained.folds, 1) LOOP
		scores := scores || format(' WHEN %s THEN %s.nb_predict_proba(($2)[%s], d.features, g.options)',
								   trained.folds[i], ext, i);
	END LOOP;
	-- the grid outside (one option set at a time, so each model builds
	-- one scorer per option set), one nb_metrics per fold inside
	RETURN QUERY EXECUTE format(
		'WITH d AS MATERIALIZED (SELECT fold, actual, features FROM (%1$s) r WHERE fold IS NOT NULL) '
		'SELECT g.options, avg(s.accuracy), stddev_pop(s.accuracy), '
		'       avg(s.macro_f1), stddev_pop(s.macro_f1), avg(s.log_loss), stddev_pop(s.log_loss) '
		'FROM %2$s.nb_grid_options($1) WITH ORDINALITY AS g(options, n) '
		'CROSS JOIN LATERAL ( '
		'    SELECT (m ->> ''accuracy'')::float8 AS accuracy, (m -> ''macro'' ->> ''f1'')::float8 AS macro_f1, '
		'           (m ->> ''log_loss'')::float8 AS log_loss '
		'    FROM (SELECT %2$s.nb_metrics(d.actual, CASE d.fold%3$s END) AS m '
		'          FROM d GROUP BY d.fold) per_fold) s '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n',
		rows_sql, ext, scores) USING grid, trained.models;
END
$$;
COMMENT ON FUNCTION nb_grid_options(jsonb) IS 'the option sets of a grid: an object gives every combination of its values, an array the option sets of each element';
COMMENT ON FUNCTION nb_grid_default(nb_model) IS 'the grid of prediction options that matter for the model''s types of features';
COMMENT ON FUNCTION nb_cross_validate(regclass, text, text, integer, jsonb, text) IS 'k-fold cross-validation of every option set of a grid: mean and standard deviation over the folds of accuracy, macro F1 and log loss, best first';



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.
-- Not STRICT, as the scoring functions: NULL options mean the defaults, NULL
-- against the runner-up, NULL top_k every row; a NULL model or NULL features
-- give no rows.
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_feature_log_prob(model nb_model, options jsonb DEFAULT NULL)
	RETURNS TABLE(feature text, value text, label text, log_prob float8)
	AS 'MODULE_PATHNAME', 'nb_feature_log_prob' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;

COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) IS 'contribution of each token and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) IS 'contribution of each lexeme and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) IS 'contribution of each feature and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) IS 'contribution of each element and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_feature_log_prob(nb_model, jsonb) IS 'smoothed log probability of every token or value per class (Gaussian: mean and variance) as the scorer uses it';



-- Smaller models: nb_prune.
CREATE FUNCTION nb_prune(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_prune' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_prune(nb_model, jsonb) IS 'the model trained on the same rows without the tokens and features that options top_k, min_documents and max_document_fraction leave out';


