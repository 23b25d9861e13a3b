-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- Unlearning: nb_subtract.



-- Evaluation: nb_metrics.



-- Cross-validation and tuning.

-- The grid as a list of option sets: an object {key: value or [values]} is
-- every combination of its values (scikit-learn's param_grid), an array is
-- the concatenation of its elements' lists.
CREATE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
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

CREATE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE plpgsql STABLE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
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
				  DETAIL = format('folds is %s.', folds);
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
		'       array_agg((SELECT %1$s.nb_merge(o.model) FROM f o WHERE o.fold IS DISTINCT FROM f.fold) ORDER BY f.fold) AS models, '
		'       (SELECT model FROM w) AS whole '
		'FROM f WHERE f.fold IS NOT NULL',
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



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.



-- Smaller models: nb_prune.



