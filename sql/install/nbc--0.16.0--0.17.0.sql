-- nbc 0.16.0 -> 0.17.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.17.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- nb_live_create's hints for the tokenizer in the wrong place (issue #42):
-- given by position in the weight column's place, the error named a column
-- "{...}" and nothing else; given beside tokenizer and fold_after instead of
-- inside "tokenizer", the hint listed the two options without saying where
-- a tokenizer's own options go.

CREATE OR REPLACE FUNCTION nbc_live_check(source regclass, label name, features name, weight name, tokenizer jsonb)
	RETURNS void
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rel record;
	col name;
	ty oid;
	distributed boolean;
BEGIN
	SELECT c.relkind, c.relowner, c.relispartition, c.relrowsecurity, c.relpersistence INTO rel
	FROM pg_class c WHERE c.oid = source;
	IF rel.relkind = 'p' OR rel.relispartition
	   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = source OR i.inhparent = source) THEN
		RAISE EXCEPTION 'live models over partitioned or inheritance tables are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has partitions or inheritance children or parents, whose rows statement triggers on it do not all see.', source);
	END IF;
	IF rel.relkind <> 'r' THEN
		RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
	END IF;
	-- Citus: a distributed (or reference) table's rows are written on the
	-- workers, where the source's triggers do not run
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = $1)'
			INTO distributed USING source;
		IF distributed THEN
			RAISE EXCEPTION 'live models over distributed tables are not supported'
				USING ERRCODE = 'feature_not_supported',
				DETAIL = format('Table %s is a Citus distributed or reference table, whose rows are written on the workers.', source),
				HINT = 'Train with the aggregate instead: SELECT nb_train(...) FROM the table, which Citus runs on the workers.';
		END IF;
	END IF;
	IF rel.relpersistence = 'u' THEN
		RAISE EXCEPTION 'live models over unlogged tables are not supported' USING ERRCODE = 'feature_not_supported',
			DETAIL = format('A crash empties table %s but not its live model.', source);
	END IF;
	IF rel.relrowsecurity THEN
		RAISE EXCEPTION 'live models over tables with row-level security are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has row-level security enabled: a live model holds the model of every row, which its policies hide from some roles.', source);
	END IF;
	IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a table (or a member of the owning role) can create a live model over it.';
	END IF;
	-- the triggers call the extension's functions by name: nobody but the
	-- schema's owner may be able to put a look-alike beside them
	IF EXISTS (SELECT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace,
			   aclexplode(COALESCE(n.nspacl, acldefault('n', n.nspowner))) a
			   WHERE e.extname = 'nbc' AND a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner) THEN
		RAISE EXCEPTION 'cannot create a live model while the schema of extension nbc is writable by others'
			USING ERRCODE = 'insufficient_privilege',
			DETAIL = 'A role with CREATE on that schema could define functions that every writer to the source would run.',
			HINT = 'REVOKE CREATE on that schema from every role but its owner, or move the extension (ALTER EXTENSION nbc SET SCHEMA).';
	END IF;

	FOREACH col IN ARRAY ARRAY[label, features, weight] LOOP
		CONTINUE WHEN col IS NULL;
		ty := (SELECT a.atttypid FROM pg_attribute a
			   WHERE a.attrelid = source AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped);
		IF ty IS NULL AND col = weight AND col LIKE '{%' THEN
			-- the options given by position, in the weight column's place
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, source
				USING ERRCODE = 'undefined_column',
				HINT = 'The fifth argument is the weight column: give the options by name, nb_live_create(name, source, label, features, options => ''{"tokenizer": {...}}'').';
		ELSIF ty IS NULL THEN
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, source
				USING ERRCODE = 'undefined_column';
		END IF;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) = 'd' LOOP
			ty := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ty);
		END LOOP;
		IF col = label AND (SELECT t.typcategory FROM pg_type t WHERE t.oid = ty) = 'A' THEN
			RAISE EXCEPTION 'label column "%" is an array', col USING ERRCODE = 'datatype_mismatch';
		ELSIF col = label AND ty NOT IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype,
										  '"char"'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype,
										  'oid'::regtype, 'numeric'::regtype, 'bool'::regtype, 'uuid'::regtype)
			  AND (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) <> 'e' THEN
			-- the label types whose text form no session setting changes
			RAISE EXCEPTION 'label column "%" is of type %, whose text form depends on session settings', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch',
				DETAIL = 'A live model names its classes by the labels'' text, which must be the same in every writer''s session.',
				HINT = 'Use a label column of a text, integer, numeric, boolean, uuid or enum type (a generated column can convert one).';
		ELSIF col = features AND ty NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype,
											 'jsonb'::regtype, 'float8[]'::regtype) THEN
			RAISE EXCEPTION 'features column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch',
				HINT = 'nb_train takes features of type text, text[], tsvector, jsonb or float8[].';
		ELSIF col = features AND tokenizer IS NOT NULL AND ty <> 'text'::regtype THEN
			RAISE EXCEPTION 'a tokenizer applies only to features of type text' USING ERRCODE = 'invalid_parameter_value';
		ELSIF col = weight AND ty NOT IN ('float8'::regtype, 'float4'::regtype, 'int2'::regtype,
										   'int4'::regtype, 'int8'::regtype, 'numeric'::regtype) THEN
			RAISE EXCEPTION 'weight column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch', HINT = 'A weight is a number.';
		END IF;
	END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION nb_live_create(name text, source regclass, label name, features name,
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
				USING ERRCODE = 'invalid_parameter_value', HINT = 'The options are tokenizer and fold_after; the tokenizer''s own options go inside it: {"tokenizer": {"ngram_range": [1, 2]}}.';
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

-- ---------------------------------------------------------------------------
-- A cancel of nb_cross_validate reaches the client before the memory of its
-- training and scoring is freed (issue #40 item 2): both run outside any
-- exception block, whose rollback freed all that the statement took first.
-- What cross-validation was doing is no longer added to an error's DETAIL:
-- the CONTEXT quotes the statement, which begins by saying it (training, or
-- scoring folds a to b of n).  nbc_cross_validate_checks runs in the
-- training's statement, PARALLEL RESTRICTED so that the training may still
-- run in parallel workers; nbc_cross_validate_score loses its argument rel,
-- which only that DETAIL used (dropped and made again).  Also (issue #42):
-- a relation of one class is refused, and the grid key "tokenizer" compares
-- tokenizers, a cross-validation per tokenizer.

-- Called in the training's statement (nb_cross_validate), above its
-- aggregates: PARALLEL RESTRICTED, so that the training below it may still
-- run in parallel workers (a parallel-unsafe function anywhere in a query
-- keeps all of it in one process).
CREATE OR REPLACE FUNCTION nbc_cross_validate_checks(rel regclass, folds integer, fold_column text,
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

DROP FUNCTION nbc_cross_validate_score(regclass, text, jsonb[], nb_model, anyarray, nb_model[], interval, timestamptz, timestamptz);
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

-- ---------------------------------------------------------------------------
-- nb_calibrate's training in parallel workers again: nbc_calibrate_checks,
-- called in the training's statement since 0.16.0, is PARALLEL RESTRICTED
-- (a parallel-unsafe function kept the whole statement in one process).

-- nbc_calibrate_checks: nb_calibrate's checks of its folds once trained
-- (a row in a fold, at least as many rows as folds, no fold of every row,
-- at least two classes, the scores' limit), each error's DETAIL saying
-- what calibration was doing; the labels of the whole model, in its order.
-- PARALLEL RESTRICTED: it is called in the training's statement, which a
-- parallel-unsafe function would keep out of parallel workers.
CREATE OR REPLACE FUNCTION nbc_calibrate_checks(rel regclass, folds integer, fold_column text, fold_ids bigint[],
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

-- ---------------------------------------------------------------------------
-- Rows skipped for a NULL label (issue #42 item 3): nb_info's
-- rows_null_label (format version 4, flag 4) in its comment; a live
-- model's trigger keeps the count of a statement whose rows all have a
-- NULL label through nbc_live_delta, since nb_train gives NULL over them.

COMMENT ON FUNCTION nb_info(nb_model) IS 'summary of a model: classes, vocabulary, documents, tokens, rows skipped for a NULL label, features, format version, bytes';

-- nbc_live_delta(model, null_labels): the model of rows of a live model's
-- source from nb_train over them (NULL when they all have a NULL label)
-- and the count of those nb_train skips for a NULL label: the model, else
-- a model of no class holding the count, else NULL (src/pg_live_check.c)
CREATE FUNCTION nbc_live_delta(model nb_model, null_labels bigint)
	RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---------------------------------------------------------------------------
-- nb_train_em_history: nb_train_em_trace without the models.
-- nbc_em_iterate's one signature (components, trace, models, started): the
-- 0.16.0 declaration is dropped, and the C function refuses any other
-- number of arguments with a hint to update; nbc_em_run takes models
-- (DEFAULT true: its other callers are unchanged).
DROP FUNCTION nbc_em_run(regclass, text, text, jsonb, boolean);
DROP FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz, integer);

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   components integer, trace boolean, models boolean, started timestamptz)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;
COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, integer, boolean, boolean, timestamptz) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): components per class (EM-CM) if more than 1; every iteration (trace true) or the last, with its model (models true) or NULL';

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

-- ---------------------------------------------------------------------------
-- nb_cross_validate_em's grid (issue #43): lambda 0 only with 1 component.
-- Components of the labelled rows alone use no unlabelled row; on short
-- texts their flatter posteriors won on log loss while losing accuracy, so
-- that "lambda" and "components" "auto" lost 3.5 to 4.4 points to the
-- labelled rows alone on the Russian fortunes.

CREATE OR REPLACE FUNCTION nb_cross_validate_em(rel regclass, label_column text, features_column text,
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
