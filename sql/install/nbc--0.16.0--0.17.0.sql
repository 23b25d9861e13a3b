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
