-- nbc 0.7.0 -> 0.8.0: a model the query computes once scores as fast as a
-- stored one.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.8.0'" to load this file. \quit

-- nb_query_constant(model) is the mark the planner puts on a scoring call's
-- model argument when it proved that argument the same value for the whole
-- query (an uncorrelated scalar subquery, a one-row CTE that is not
-- inlined): the call then prepares the model on its first row and skips
-- comparing the model's bytes on the others.  Calls a user writes are
-- removed by the planner (its support function), so the mark cannot be
-- forged.
CREATE FUNCTION nb_query_constant_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_query_constant(model nb_model, serial boolean) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_query_constant_support;

-- the planner support function of every function that scores rows
CREATE FUNCTION nb_scoring_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER FUNCTION nb_predict(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) SUPPORT nb_scoring_support;

-- nb_cross_validate: the same signature and results; a relation with more
-- classes than its metrics can count is refused right after training,
-- instead of after every fold's model was made and prepared.
CREATE OR REPLACE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
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
	option_sets jsonb[];
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	fold_order integer[];
	trained record;
	cols record;
	n_classes bigint;
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

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring query below, so that
	-- only a batch of them is ever in memory (a leave-one-out model is nearly
	-- the whole).  A fold holds every row when its rows are all the rows.
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql) INTO trained USING grid;
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
	IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING trained.whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;

	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
	grid := trained.grid;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING grid;

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
	-- leave-one-out (a fold per row) works too.  The means and spreads add
	-- the folds in their order, whatever the plan, so that the results do
	-- not depend on it to the last bit.
	FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   trained.folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r',
					   per_fold, rows_sql)
			INTO batch
			USING option_sets, trained.whole,
				  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
				  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
				  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
				  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
		-- [fold][option set]
		fold_metrics := fold_metrics || batch;
	END LOOP;
	RETURN QUERY EXECUTE
		'WITH s AS (SELECT k, n, (m[k][n] ->> ''accuracy'')::float8 AS accuracy, '
		'                  (m[k][n] -> ''macro'' ->> ''f1'')::float8 AS macro_f1, (m[k][n] ->> ''log_loss'')::float8 AS log_loss '
		'           FROM (SELECT $2 AS m) a, generate_subscripts($2, 1) AS k, generate_subscripts($2, 2) AS n) '
		'SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k), '
		'       avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k), '
		'       avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k) '
		'FROM unnest($1) WITH ORDINALITY AS g(options, n) JOIN s USING (n) '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n'
		USING option_sets, fold_metrics;
END
$$;

-- nb_grid_options: the same option sets, and a grid of more than 10,000 of
-- them is refused before any is made (a few lists of values multiply: 300
-- numbers made 950 MB of option sets).
CREATE OR REPLACE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 20
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	part jsonb;
	combos jsonb;
	k text;
	vals jsonb;
	sets bigint := 0;
	part_sets bigint;
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
