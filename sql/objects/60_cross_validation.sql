-- nbc's objects, 60: grids of prediction options and cross-validation:
-- nb_grid_default, nb_grid_options, the aggregate nb_grid_metrics and
-- nb_cross_validate with the rows and folds it shares with nb_calibrate.

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
COMMENT ON FUNCTION nb_grid_default(nb_model) IS 'the grid of prediction options that matter for the model''s types of features';

-- nb_grid_options(grid): the option sets of a grid (an object of arrays of
-- values, or an array of such objects), each combination made as it is
-- returned rather than all of them first (#26 item 5).
CREATE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
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
COMMENT ON FUNCTION nb_grid_options(jsonb) IS 'the option sets of a grid: an object gives every combination of its values, an array the option sets of each element';

-- Called in the training's statement (nb_cross_validate), above its
-- aggregates: PARALLEL RESTRICTED, so that the training below it may still
-- run in parallel workers (a parallel-unsafe function anywhere in a query
-- keeps all of it in one process).
CREATE FUNCTION nbc_cross_validate_checks(rel regclass, folds integer, fold_column text,
										  trained_folds anyarray, fold_rows bigint[],
										  all_rows numeric, whole nb_model)
RETURNS void
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
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
	IF n_classes < 2 THEN
		RAISE EXCEPTION 'relation "%" has one class', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Cross-validation needs rows of at least two classes: a model of one class predicts it with probability 1.';
	END IF;
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

-- nbc.progress and nbc.progress_interval as the PL/pgSQL workflows use them:
-- the interval between two progress NOTICEs, NULL if they are off
CREATE FUNCTION nbc_progress_every() RETURNS interval
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION nbc_progress_every() IS 'the interval between two progress NOTICEs of nb_cross_validate, nb_cross_validate_em and nb_calibrate: nbc.progress_interval, NULL when nbc.progress is off';

CREATE FUNCTION nbc_cross_validate_score(scored_sql text, option_sets jsonb[], whole nb_model,
										 folds anyarray, models nb_model[],
										 every interval, started timestamptz, reported timestamptz)
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
		-- past the last fold, fold_order[i] and so the model are NULL,
		-- unused.  The comment says in an error's CONTEXT which pass failed
		-- (see nb_cross_validate).
		EXECUTE format('/* nb_cross_validate: scoring folds %s to %s of %s */ '
					   'SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
					   b * 8 + 1, least(b * 8 + 8, n), n, per_fold, scored_sql)
			INTO batch
			USING option_sets, whole,
				  models[fold_order[b * 8 + 1]], models[fold_order[b * 8 + 2]],
				  models[fold_order[b * 8 + 3]], models[fold_order[b * 8 + 4]],
				  models[fold_order[b * 8 + 5]], models[fold_order[b * 8 + 6]],
				  models[fold_order[b * 8 + 7]], models[fold_order[b * 8 + 8]];
		fold_metrics := fold_metrics || batch;
		IF clock_timestamp() - reported >= every THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %', b * 8 + 1, least(b * 8 + 8, n), n
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 1));
			reported := clock_timestamp();
		END IF;
	END LOOP;
	RETURN fold_metrics;
END
$$;
COMMENT ON FUNCTION nbc_cross_validate_score(text, jsonb[], nb_model, anyarray, nb_model[], interval, timestamptz, timestamptz) IS 'the scoring passes of nb_cross_validate: nb_grid_metrics of every fold''s rows under its out-of-fold model, at most 8 folds per pass, as [fold][option set] in fold order, a progress NOTICE after a pass when every has passed since reported';

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

CREATE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
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
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the grid key "tokenizer": a cross-validation per tokenizer (its other
	-- keys, or the default grid), the rows together, best first
	IF jsonb_path_exists(grid, 'lax $.tokenizer') THEN
		IF tokenizer IS NOT NULL THEN
			RAISE EXCEPTION 'tokenizer given both as an argument and in the grid' USING ERRCODE = 'invalid_parameter_value';
		END IF;
		RETURN QUERY EXECUTE format(
			'SELECT jsonb_build_object(''tokenizer'', g.tok) || r.options, r.accuracy, r.accuracy_std, r.macro_f1, '
			'r.macro_f1_std, r.log_loss, r.log_loss_std FROM (SELECT o -> ''tokenizer'' AS tok, '
			'nullif(jsonb_agg(o - ''tokenizer''), ''[{}]'') AS sub FROM %1$s.nb_grid_options($1) o GROUP BY 1) g, '
			'LATERAL %1$s.nb_cross_validate($2, $3, $4, $5, g.sub, $6, nullif(g.tok, ''null'')) r '
			'ORDER BY 2 DESC, 4 DESC, 6, g.tok, 1', ext) USING grid, rel, label_column, features_column, folds, fold_column;
		RETURN;
	END IF;
	EXECUTE format('SELECT %s.nbc_progress_every()', ext) INTO every;
	-- the checks of the folds and columns and the rows' query, nb_calibrate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_cross_validate_rows';
	rows_sql := setup.rows_sql;

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), the checks of them, and the default grid from
	-- the whole.  Each fold's out-of-fold model is made by the scoring
	-- passes, so that only a batch of them is ever in memory (a
	-- leave-one-out model is nearly the whole).  A fold holds every row
	-- when its rows are all the rows.
	--
	-- The training and the scoring run in no exception block: a block rolls
	-- its subtransaction back before an error goes on, even one no handler
	-- matches, freeing all that the statement took before a cancel reaches
	-- the client.  An error's CONTEXT quotes the statement, which begins by
	-- saying what cross-validation was doing.  The checks run in the
	-- training's statement, so that a refusal comes before its result (every
	-- fold's model) is copied out.
	IF setup.rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_cross_validate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_cross_validate_rows';
	END IF;
	EXECUTE format(
		'/* nb_cross_validate: training a model per fold */ '
		'SELECT t.*, %1$s.nbc_cross_validate_checks($2, $3, $4, t.folds, t.fold_rows, t.all_rows, t.whole) AS checked, '
		'coalesce($1, %1$s.nb_grid_default(t.whole)) AS grid '
		'FROM (SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'FROM (%2$s) r GROUP BY fold) f) t',
		ext, rows_sql,
		CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid, rel, coalesce(folds, 5), fold_column;
	-- the rows a scoring pass reads: those in a fold
	scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
	IF setup.on_citus AND NOT setup.rows_copied THEN
		scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
	END IF;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING trained.grid;
	IF clock_timestamp() - reported >= every THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 1));
		reported := clock_timestamp();
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_score($1, $2, $3, $4, $5, $6, $7, $8)', ext)
		INTO fold_metrics
		USING scored_sql, option_sets, trained.whole, trained.folds, trained.models, every, started, reported;
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_cross_validate_rows;
	END IF;
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_cross_validate_summary($1, $2)', ext)
		USING option_sets, fold_metrics;
END
$$;
COMMENT ON FUNCTION nb_cross_validate(regclass, text, text, integer, jsonb, text, jsonb) IS 'k-fold cross-validation of every option set of a grid: mean and standard deviation over the folds of accuracy, macro F1 and log loss, best first; a text column is tokenized with the tokenizer';

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, text[], text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_array' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, tsvector, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_tsvector' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, jsonb, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_jsonb' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, float8[], text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_float8' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, text, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_text' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_combine(nb_metrics_state, nb_metrics_state) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_combine' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_grid_metrics_final(nb_metrics_state) RETURNS jsonb[]
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_grid_metrics(model nb_model, features text[], actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

CREATE AGGREGATE nb_grid_metrics(model nb_model, features tsvector, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, tsvector, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

CREATE AGGREGATE nb_grid_metrics(model nb_model, features jsonb, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, jsonb, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

CREATE AGGREGATE nb_grid_metrics(model nb_model, features float8[], actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, float8[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

CREATE AGGREGATE nb_grid_metrics(model nb_model, body text, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text, text, jsonb[]) IS 'nb_metrics of the model''s predictions of documents of text under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

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

-- Cross-validation's rows, one definition (#31): nbc_cross_validation_rows
-- checks the arguments of nb_cross_validate and nb_calibrate and makes the
-- query of the rows and their folds for both, bringing a Citus table's rows
-- to the coordinator first (#32).  An error of the checks has this function
-- in its CONTEXT.
CREATE FUNCTION nbc_cross_validation_rows(rel regclass, label_column text, features_column text,
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
COMMENT ON FUNCTION nbc_cross_validation_rows(regclass, text, text, integer, text, jsonb, text) IS 'the checks of nb_cross_validate''s and nb_calibrate''s arguments and the query of their rows and folds: the features'' type, the query, whether the relation is or reads a Citus table, and whether its rows are to be copied into the temporary table rows_table';
