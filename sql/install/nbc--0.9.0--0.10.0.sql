-- nbc 0.9.0 -> 0.10.0: live models, learning from unlabelled rows,
-- calibrated probabilities, evaluation that distributes.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.10.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Live models (issue #30): a model that is always nb_train over a table, kept
-- current by statement-level triggers on the table (src/pg_live.c explains
-- the design: a base model plus one delta row per writing statement, folded
-- into the base past a bound; README "Live models" the use).
--
-- The extension is relocatable, so no script can name its schema: every
-- function runs with search_path pg_catalog, pg_temp and finds the
-- extension's schema at run time (the C functions: the schema of their own
-- declaration; the PL/pgSQL ones: pg_extension).  The tables belong to the
-- extension's owner; row-level security shows a live model and its deltas
-- to the roles that can SELECT its source table, and lets only the source's
-- owner (or a member of the owning role) create, rebase or drop one.
-- Writers to the source need no privilege on these tables: the trigger
-- writes their deltas as the tables' owner (pg_live.c).

CREATE TABLE nbc_live (
	id serial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	source regclass NOT NULL,
	tokenizer jsonb,
	fold_after integer NOT NULL,
	folded_through bigint NOT NULL DEFAULT 0,
	base nb_model
);

CREATE TABLE nbc_live_delta (
	live_id integer NOT NULL,
	id bigserial,
	source regclass NOT NULL,
	reset boolean NOT NULL,
	added nb_model,
	removed nb_model,
	PRIMARY KEY (live_id, id)
);

-- Folding rewrites the base every fold_after statements: stored out of line
-- but not compressed, it costs a copy, not a compression (pglz would take
-- most of a writer's time), and reading it no decompression.
ALTER TABLE nbc_live ALTER COLUMN base SET STORAGE EXTERNAL;

-- pg_dump dumps the live models' rows with the tables they follow
SELECT pg_catalog.pg_extension_config_dump('nbc_live', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_delta', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_delta_id_seq', '');

ALTER TABLE nbc_live ENABLE ROW LEVEL SECURITY;
ALTER TABLE nbc_live_delta ENABLE ROW LEVEL SECURITY;

CREATE POLICY nbc_live_read ON nbc_live FOR SELECT
	USING (pg_catalog.has_table_privilege(source, 'SELECT'));
CREATE POLICY nbc_live_create ON nbc_live FOR INSERT
	WITH CHECK (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_rebase ON nbc_live FOR UPDATE
	USING (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_drop ON nbc_live FOR DELETE
	USING (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_delta_read ON nbc_live_delta FOR SELECT
	USING (pg_catalog.has_table_privilege(source, 'SELECT'));

REVOKE ALL ON nbc_live, nbc_live_delta FROM PUBLIC;
GRANT SELECT, INSERT, DELETE ON nbc_live TO PUBLIC;
GRANT UPDATE (base) ON nbc_live TO PUBLIC;
GRANT USAGE ON SEQUENCE nbc_live_id_seq TO PUBLIC;
GRANT SELECT ON nbc_live_delta TO PUBLIC;

CREATE FUNCTION nbc_live_capture() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE FUNCTION nbc_live_train(live_id integer) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION nb_live(name text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nbc_live_read' LANGUAGE C STRICT STABLE PARALLEL RESTRICTED;

CREATE FUNCTION nb_live_fold(name text) RETURNS void
	AS 'MODULE_PATHNAME', 'nbc_live_fold' LANGUAGE C STRICT VOLATILE;

-- The live model's columns are those of its trigger nbc_live_<id>_columns
-- (UPDATE OF label, features [, weight], never fired: WHEN (false)), so that
-- they follow renames and dumps, and cannot be dropped or change type while
-- it exists.
CREATE FUNCTION nb_live_create(name text, source regclass, label name, features name,
		weight name DEFAULT NULL, options jsonb DEFAULT NULL) RETURNS void
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	rel record;
	col name;
	ty oid;
	key text;
	tokenizer jsonb := options -> 'tokenizer';
	fold_after integer := 256;
	id integer;
	tg text;
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
			RAISE EXCEPTION 'unknown live model option "%"', key
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

	SELECT c.relkind, c.relowner, c.relispartition INTO rel FROM pg_class c WHERE c.oid = source;
	IF rel.relkind = 'p' OR rel.relispartition
	   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = source OR i.inhparent = source) THEN
		RAISE EXCEPTION 'live models over partitioned or inheritance tables are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has partitions or inheritance children or parents, whose rows statement triggers on it do not all see.', source);
	END IF;
	IF rel.relkind <> 'r' THEN
		RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
	END IF;
	IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a table (or a member of the owning role) can create a live model over it.';
	END IF;
	-- no writer may commit between the base and the triggers
	EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', source);

	FOREACH col IN ARRAY ARRAY[label, features, weight] LOOP
		CONTINUE WHEN col IS NULL;
		ty := (SELECT a.atttypid FROM pg_attribute a
			   WHERE a.attrelid = source AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped);
		IF ty IS NULL THEN
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, source
				USING ERRCODE = 'undefined_column';
		END IF;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) = 'd' LOOP
			ty := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ty);
		END LOOP;
		IF col = label AND (SELECT t.typcategory FROM pg_type t WHERE t.oid = ty) = 'A' THEN
			RAISE EXCEPTION 'label column "%" is an array', col USING ERRCODE = 'datatype_mismatch';
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
	IF tokenizer IS NOT NULL THEN
		-- the tokenizer's options are checked as nb_tokens checks them
		EXECUTE format('SELECT %s.nb_tokens('''', $1)', s) USING tokenizer;
	END IF;

	BEGIN
		EXECUTE format('INSERT INTO %s.nbc_live (name, source, tokenizer, fold_after) VALUES ($1, $2, $3, $4) RETURNING id', s)
			INTO id USING name, source, tokenizer, fold_after;
	EXCEPTION WHEN unique_violation THEN
		RAISE EXCEPTION 'live model "%" already exists', name USING ERRCODE = 'duplicate_object';
	END;
	tg := 'nbc_live_' || id || '_';
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE OF %s ON %s FOR EACH STATEMENT WHEN (false) EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'columns', concat_ws(', ', quote_ident(label), quote_ident(features), quote_ident(weight)),
				   source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS nbc_new FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'insert', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS nbc_old NEW TABLE AS nbc_new FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'update', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS nbc_old FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'delete', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'truncate', source, s, id);
	EXECUTE format('UPDATE %1$s.nbc_live SET base = %1$s.nbc_live_train($1) WHERE id = $1', s) USING id;
END
$$;

-- the deltas of live models that no longer exist (run as the tables' owner;
-- harmless to anyone: nb_live_drop calls it as its caller)
CREATE FUNCTION nbc_live_forget() RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
BEGIN
	IF s IS NOT NULL AND to_regclass(s || '.nbc_live_delta') IS NOT NULL THEN
		EXECUTE format('DELETE FROM %1$s.nbc_live_delta d WHERE NOT EXISTS (SELECT FROM %1$s.nbc_live l WHERE l.id = d.live_id)', s);
	END IF;
END
$$;

CREATE FUNCTION nb_live_drop(name text) RETURNS void
	LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	id integer;
	source regclass;
	tg name;
BEGIN
	EXECUTE format('SELECT id, source FROM %s.nbc_live WHERE name = $1', s) INTO id, source USING name;
	IF id IS NULL THEN
		RAISE EXCEPTION 'live model "%" does not exist', name USING ERRCODE = 'undefined_object',
			HINT = 'nb_lives lists the live models you can read.';
	END IF;
	IF NOT pg_has_role((SELECT c.relowner FROM pg_class c WHERE c.oid = source), 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a live model''s source table (or a member of the owning role) can drop it.';
	END IF;
	FOR tg IN SELECT t.tgname FROM pg_trigger t
			  WHERE t.tgrelid = source AND t.tgname LIKE 'nbc\_live\_' || id || '\_%' LOOP
		EXECUTE format('DROP TRIGGER %I ON %s', tg, source);
	END LOOP;
	EXECUTE format('DELETE FROM %s.nbc_live WHERE id = $1', s) USING id;
	EXECUTE format('SELECT %s.nbc_live_forget()', s);
END
$$;

-- DROP TABLE drops the live models over the table (their triggers go with it).
CREATE FUNCTION nbc_live_dropped() RETURNS event_trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
BEGIN
	IF s IS NULL OR to_regclass(s || '.nbc_live') IS NULL
	   OR NOT EXISTS (SELECT FROM pg_event_trigger_dropped_objects() o
					  WHERE o.classid = 'pg_class'::regclass AND o.objsubid = 0 AND o.object_type = 'table') THEN
		RETURN;
	END IF;
	EXECUTE format('DELETE FROM %s.nbc_live WHERE source::oid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o WHERE o.classid = ''pg_class''::regclass AND o.objsubid = 0)', s);
	EXECUTE format('SELECT %s.nbc_live_forget()', s);
END
$$;
REVOKE ALL ON FUNCTION nbc_live_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER nbc_live_dropped ON sql_drop EXECUTE FUNCTION nbc_live_dropped();

-- The live models the current role can read, with their source and size.
CREATE VIEW nb_lives WITH (security_invoker = true) AS
SELECT l.name, l.source,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[0]) AS label,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[1]) AS features,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[2]) AS weight,
	l.tokenizer, l.fold_after,
	(SELECT count(*) FROM nbc_live_delta d WHERE d.live_id = l.id) AS pending_deltas,
	pg_catalog.pg_column_size(l.base) AS base_bytes,
	(SELECT COALESCE(sum(COALESCE(pg_catalog.pg_column_size(d.added), 0) + COALESCE(pg_catalog.pg_column_size(d.removed), 0)), 0)
	 FROM nbc_live_delta d WHERE d.live_id = l.id)::bigint AS delta_bytes
FROM nbc_live l
LEFT JOIN pg_catalog.pg_trigger t ON t.tgrelid = l.source AND t.tgname = 'nbc_live_' || l.id || '_columns';
GRANT SELECT ON nb_lives TO PUBLIC;

COMMENT ON FUNCTION nb_live_create(text, regclass, name, name, name, jsonb) IS 'create a live model: nb_train over the table''s label and features (and weight) columns, kept exact by triggers as rows change (options: tokenizer, fold_after)';
COMMENT ON FUNCTION nb_live(text) IS 'the live model of this name: nb_train over its source table as the current snapshot sees it';
COMMENT ON FUNCTION nb_live_drop(text) IS 'drop a live model and its triggers';
COMMENT ON FUNCTION nb_live_fold(text) IS 'fold a live model''s pending deltas into its base now (the result does not change)';
COMMENT ON VIEW nb_lives IS 'the live models the current role can read, with their source, columns, pending deltas and size';
