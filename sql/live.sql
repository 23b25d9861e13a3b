--
-- live: live models (nb_live_create, nb_live, nb_live_fold, nb_live_drop,
-- nb_lives).  In every snapshot a live model must equal nb_train over its
-- source as that snapshot sees it: byte for byte (=) for unweighted rows and
-- integer weights, within 1e-12 relative for fractional weights and
-- Gaussian statistics (compared number by number through the jsonb form).
-- The roles are not superusers: the table's owner, a member of the owning
-- role, a writer who may not read the table, a reader.  A live model is a
-- table of its own: its privileges, name, persistence and lifetime are a
-- table's.
--

-- the SQLSTATE and message of a statement, or 'ok'
CREATE FUNCTION live_error(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- every number of two models' jsonb forms within rel relative, and the same keys
CREATE FUNCTION live_near(x nb_model, y nb_model, rel float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	WITH RECURSIVE p(model, path, v) AS (
		SELECT 'x', '', x::jsonb UNION ALL SELECT 'y', '', y::jsonb
		UNION ALL
		SELECT p.model, p.path || '/' || e.key, e.value
		FROM p, jsonb_each(CASE WHEN jsonb_typeof(p.v) = 'object' THEN p.v ELSE '{}' END) AS e),
	leaves AS (SELECT * FROM p WHERE jsonb_typeof(v) <> 'object')
	SELECT (x IS NULL) = (y IS NULL) AND coalesce(bool_and(CASE
		WHEN jsonb_typeof(a.v) = 'number' AND jsonb_typeof(b.v) = 'number'
		THEN abs(a.v::float8 - b.v::float8) <= rel * greatest(abs(a.v::float8), abs(b.v::float8))
		ELSE a.v IS NOT DISTINCT FROM b.v END), true)
	FROM (SELECT * FROM leaves WHERE model = 'x') a
	FULL JOIN (SELECT * FROM leaves WHERE model = 'y') b USING (path) $$;

CREATE ROLE regress_live_owner;
CREATE ROLE regress_live_member IN ROLE regress_live_owner;
CREATE ROLE regress_live_writer;
CREATE ROLE regress_live_reader;
-- a live model is made beside its source: in a schema of the owner's (the
-- extension's own schema must be writable by its owner alone)
CREATE SCHEMA regress_live AUTHORIZATION regress_live_owner;
GRANT USAGE ON SCHEMA regress_live TO regress_live_writer, regress_live_reader;
SET search_path = regress_live, public;

CREATE TABLE live_docs (id serial PRIMARY KEY, label text, tokens text[], body text, attrs jsonb,
	vec float8[], stars integer, weight float8, note text);
ALTER TABLE live_docs OWNER TO regress_live_owner;
GRANT INSERT, UPDATE, DELETE, TRUNCATE ON live_docs TO regress_live_writer;
GRANT SELECT (id) ON live_docs TO regress_live_writer;
GRANT USAGE ON SEQUENCE live_docs_id_seq TO regress_live_writer;
GRANT SELECT ON live_docs TO regress_live_reader;

-- rows with NULL labels and NULL features among them, as nb_train skips them
INSERT INTO live_docs (label, tokens, body, attrs, vec, stars, weight)
SELECT CASE WHEN i % 17 = 0 THEN NULL ELSE (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3] END,
	CASE WHEN i % 13 = 0 THEN NULL ELSE ARRAY(SELECT 'w' || ((i * j) % 19) FROM generate_series(1, 1 + i % 4) j) END,
	'The ' || (ARRAY['quick', 'lazy', 'brown'])[1 + i % 3] || ' fox number ' || (i % 7),
	jsonb_build_object('colour', 'c' || (i % 4), 'big', i % 2 = 0),
	ARRAY[(i % 9) * 1.37, (i % 5) * 0.1 + 2],
	1 + i % 5,
	1.0 / (1 + i % 7)
FROM generate_series(1, 120) i;

SET ROLE regress_live_owner;
SELECT live_model FROM nb_live_create('live_tokens', 'live_docs', 'label', 'tokens');
SELECT live_model FROM nb_live_create('live_text', 'live_docs', 'label', 'body',
	options => '{"tokenizer": {"ngram_range": [1, 2]}, "fold_after": 4}');
SELECT live_model FROM nb_live_create('live_attrs', 'live_docs', 'label', 'attrs');
SELECT live_model FROM nb_live_create('live_stars', 'live_docs', 'stars', 'tokens');
SELECT live_model FROM nb_live_create('live_weighted', 'live_docs', 'label', 'tokens', 'weight');
SELECT live_model FROM nb_live_create('live_vec', 'live_docs', 'label', 'vec', 'weight');
SELECT name, source, label, features, weight, tokenizer, fold_after, pending_deltas
FROM nb_lives ORDER BY name::text;
-- reading a live model is SELECT on its table
GRANT SELECT ON live_tokens, live_text, live_attrs, live_stars, live_weighted, live_vec TO regress_live_reader;
RESET ROLE;

-- each live model against nb_train over the table, in one snapshot
CREATE VIEW live_exact AS
SELECT nb_live('live_tokens') = (SELECT nb_train(label, tokens) FROM live_docs) AS tokens,
	nb_live('live_text') = (SELECT nb_train(label, body, '{"ngram_range": [1, 2]}') FROM live_docs) AS text,
	nb_live('live_attrs') = (SELECT nb_train(label, attrs) FROM live_docs) AS attrs,
	nb_live('live_stars') = (SELECT nb_train(stars, tokens) FROM live_docs) AS stars,
	live_near(nb_live('live_weighted'), (SELECT nb_train(label, tokens, weight) FROM live_docs), 1e-12) AS weighted,
	live_near(nb_live('live_vec'), (SELECT nb_train(label, vec, weight) FROM live_docs), 1e-12) AS vec;
SELECT * FROM live_exact;

-- every kind of write, as the writer (who cannot read the table)
SET ROLE regress_live_writer;
INSERT INTO live_docs (label, tokens, body, attrs, vec, stars, weight)
VALUES ('spam', '{w1,new}', 'A new fox', '{"colour": "c9"}', '{1.5, 2.5}', 5, 0.3);
INSERT INTO live_docs (label, tokens, body, attrs, vec, stars, weight)
SELECT 'toast', ARRAY['t' || i], 'toast ' || i, jsonb_build_object('n', i), ARRAY[i * 0.7, 1], i, 0.1 * i
FROM generate_series(1, 5) i;
UPDATE live_docs SET label = 'ham' WHERE id % 10 = 1;
UPDATE live_docs SET tokens = '{extra,w1}', body = 'extra words' WHERE id % 10 = 2;
UPDATE live_docs SET weight = 2.5, vec = '{0, 0}' WHERE id % 10 = 3;
UPDATE live_docs SET label = NULL WHERE id = 4;
DELETE FROM live_docs WHERE id % 10 = 5;
RESET ROLE;
SELECT * FROM live_exact;
-- INSERT ... ON CONFLICT and MERGE, as the owner
SET ROLE regress_live_owner;
INSERT INTO live_docs (id, label, tokens) VALUES (6, 'eggs', '{upserted}'), (999, 'ham', '{inserted}')
	ON CONFLICT (id) DO UPDATE SET label = excluded.label, tokens = excluded.tokens;
MERGE INTO live_docs d USING (VALUES (7, 'spam'), (8, NULL), (1000, 'ham')) s(id, label) ON d.id = s.id
	WHEN MATCHED AND s.label IS NULL THEN DELETE
	WHEN MATCHED THEN UPDATE SET label = s.label
	WHEN NOT MATCHED THEN INSERT (id, label, tokens, body) VALUES (s.id, s.label, '{merged}', 'merged');
RESET ROLE;
SELECT * FROM live_exact;

-- a statement that changes no counted value records nothing: rows with a
-- NULL label, an update of a column the models do not read
SELECT sum(pending_deltas) AS pending FROM nb_lives \gset
INSERT INTO live_docs (label, tokens, body, attrs, vec) VALUES (NULL, NULL, NULL, NULL, NULL);
UPDATE live_docs SET note = 'seen';
SELECT sum(pending_deltas) - :pending AS new_deltas FROM nb_lives;
SELECT * FROM live_exact;

-- a rolled-back transaction changes nothing; inside it, the live model sees its writes
SELECT nb_live('live_tokens') AS before \gset
BEGIN;
DELETE FROM live_docs WHERE id < 60;
INSERT INTO live_docs (label, tokens) VALUES ('spam', '{rolled,back}');
SELECT * FROM live_exact;
ROLLBACK;
SELECT nb_live('live_tokens') = :'before' AS unchanged;
BEGIN;
INSERT INTO live_docs (label, tokens) VALUES ('ham', '{kept}');
SAVEPOINT s;
DELETE FROM live_docs WHERE label = 'spam';
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT * FROM live_exact;

-- folding: automatically past fold_after pending deltas (live_text: 4),
-- explicitly by its owner (UPDATE and DELETE on its table); the value never
-- changes, and a fold with nothing pending writes nothing
SELECT pending_deltas <= 4 AS bounded FROM nb_lives WHERE name = 'live_text'::regclass;
SELECT nb_live('live_weighted') AS before \gset
SELECT nb_live_fold(name::text) FROM nb_lives;
SELECT name, pending_deltas FROM nb_lives ORDER BY name::text;
SELECT nb_live('live_weighted') = :'before' AS same_after_fold;
SELECT * FROM live_exact;
SELECT ctid AS base_ctid, xmin AS base_xmin FROM live_tokens WHERE id = 0 \gset
SELECT nb_live_fold('live_tokens');
SELECT ctid = :'base_ctid' AND xmin::text = :'base_xmin' AS nothing_written FROM live_tokens WHERE id = 0;

-- the automatic fold is tiered: the pending deltas are merged into one
-- delta, and the base is rewritten only past LIVE_MERGED_MAX (16) merged
-- deltas or a quarter of its size (pg_live.c, fold_auto).  With fold_after 2
-- every other statement folds; after each statement the live models are
-- exact, the deltas past the last fold are at most fold_after, the merged
-- ones at most 16, and both kinds of fold happened.
CREATE TABLE live_tiers (id serial PRIMARY KEY, label text, tokens text[], weight float8);
INSERT INTO live_tiers (label, tokens, weight)
SELECT (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3], ARRAY(SELECT 'w' || ((i * j) % 301) FROM generate_series(1, 2 + i % 5) j),
	1.0 / (1 + i % 7)
FROM generate_series(1, 400) i;
SELECT live_model FROM nb_live_create('live_tiers_m', 'live_tiers', 'label', 'tokens', options => '{"fold_after": 2}');
SELECT live_model FROM nb_live_create('live_tiers_w', 'live_tiers', 'label', 'tokens', 'weight', options => '{"fold_after": 2}');
CREATE TABLE live_tier_log (step integer, exact boolean, near boolean, pending bigint, merged bigint, base_rewritten boolean);
DO $$
DECLARE
	base0 nb_model := (SELECT added FROM live_tiers_m WHERE id = 0);
BEGIN
	FOR i IN 1..120 LOOP
		CASE i % 4
		WHEN 0 THEN INSERT INTO live_tiers (label, tokens, weight) VALUES ('ham', ARRAY['n' || i, 'w1'], 0.1 * i);
		WHEN 1 THEN UPDATE live_tiers SET label = 'eggs' WHERE id = i;
		WHEN 2 THEN DELETE FROM live_tiers WHERE id = 400 - i;
		ELSE INSERT INTO live_tiers (label, tokens, weight) SELECT 'spam', ARRAY['m' || i, 'm' || j], 1.5 FROM generate_series(1, 3) j;
		END CASE;
		INSERT INTO live_tier_log
		SELECT i, nb_live('live_tiers_m') = (SELECT nb_train(label, tokens) FROM live_tiers),
			live_near(nb_live('live_tiers_w'), (SELECT nb_train(label, tokens, weight) FROM live_tiers), 1e-12),
			count(*) FILTER (WHERE d.id > l.folded_through), count(*) FILTER (WHERE d.id <= l.folded_through),
			l.added IS DISTINCT FROM base0
		FROM live_tiers_m l LEFT JOIN live_tiers_m d ON d.id > 0
		WHERE l.id = 0 GROUP BY l.id;
	END LOOP;
END $$;
SELECT bool_and(exact) AS exact, bool_and(near) AS near, max(pending) <= 2 AS pending_bounded,
	max(merged) > 1 AS merged_deltas, max(merged) <= 16 AS merged_bounded, bool_or(base_rewritten) AS base_rewritten
FROM live_tier_log;
TRUNCATE live_tiers;
INSERT INTO live_tiers (label, tokens, weight) VALUES ('ham', '{after}', 1), ('spam', '{after,truncate}', 2);
SELECT nb_live('live_tiers_m') = (SELECT nb_train(label, tokens) FROM live_tiers) AS exact_after_truncate,
	(SELECT count(*) FROM live_tiers_m WHERE id > 0) AS deltas;
SELECT nb_live_drop('live_tiers_m'), nb_live_drop('live_tiers_w');
DROP TABLE live_tiers, live_tier_log;

-- TRUNCATE: in a transaction that rolls back, then for good
BEGIN;
TRUNCATE live_docs;
SELECT nb_live('live_tokens') IS NULL AS empty;
ROLLBACK;
SELECT * FROM live_exact;
SET ROLE regress_live_writer;
TRUNCATE live_docs;
INSERT INTO live_docs (label, tokens, body, attrs, vec, stars, weight)
VALUES ('ham', '{after}', 'after truncate', '{"a": 1}', '{1, 1}', 3, 1), (NULL, '{skipped}', NULL, NULL, NULL, NULL, NULL);
RESET ROLE;
SELECT * FROM live_exact;
-- deleting every row: the model of no rows is NULL, as nb_train's
DELETE FROM live_docs;
SELECT nb_live('live_tokens') IS NULL AS null_model, (SELECT nb_train(label, tokens) FROM live_docs) IS NULL AS null_train;
INSERT INTO live_docs (label, tokens, body, attrs, vec, stars, weight)
SELECT (ARRAY['spam', 'ham'])[1 + i % 2], ARRAY['r' || i % 3], 'again ' || i, jsonb_build_object('k', i % 2),
	ARRAY[i * 0.5, 1], i % 3, 0.25 * i
FROM generate_series(1, 30) i;
SELECT * FROM live_exact;

-- a view of predicted labels that stays exact while rows change
CREATE VIEW live_predicted AS
SELECT d.id, d.label, nb_predict((SELECT nb_live('live_tokens')), d.tokens) AS predicted
FROM live_docs d;
SELECT count(*) AS rows, count(*) FILTER (WHERE predicted = label) AS correct FROM live_predicted;
INSERT INTO live_docs (label, tokens) SELECT 'eggs', '{r1}' FROM generate_series(1, 40);
SELECT (SELECT array_agg(predicted ORDER BY id) FROM live_predicted)
	= (SELECT array_agg(nb_predict(m, d.tokens) ORDER BY d.id)
	   FROM live_docs d, (SELECT nb_train(label, tokens) AS m FROM live_docs) t) AS same_predictions;

-- errors
SET ROLE regress_live_owner;
SELECT live_error($$SELECT nb_live('live_nope')$$);
SELECT live_error($$SELECT nb_live_drop('live_nope')$$);
SELECT live_error($$SELECT nb_live_fold('live_nope')$$);
SELECT live_error($$SELECT nb_live_create('live_tokens', 'live_docs', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'nope')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'stars')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'tokens', 'body')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens', 'note')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens', options => '{"tokenizer": {}}')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'body', options => '{"tokenizer": {"lowercase": 3}}')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens', options => '{"fold": 3}')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens', options => '{"fold_after": 0}')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens', options => '{"fold_after": 2.5}')$$);
-- the tokenizer in the wrong place, by position in the weight column's or
-- beside the options: the hint gives the form above (live_text) takes
\set SHOW_CONTEXT never
SELECT nb_live_create('live_x', 'live_docs', 'label', 'body', '{"ngram_range": [1, 2]}');
SELECT nb_live_create('live_x', 'live_docs', 'label', 'body', options => '{"ngram_range": [1, 2]}');
\set SHOW_CONTEXT errors
SELECT live_error($$SELECT nb_live_create(NULL, 'live_docs', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', NULL, 'label', 'tokens')$$);
SELECT nb_live(NULL) IS NULL AS strict;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens')$$);
ROLLBACK;
RESET ROLE;
CREATE VIEW live_docs_view AS SELECT * FROM live_docs;
CREATE TABLE live_parted (label text, tokens text[]) PARTITION BY LIST (label);
CREATE TABLE live_part_a PARTITION OF live_parted FOR VALUES IN ('a');
CREATE TABLE live_parent (label text, tokens text[]);
CREATE TABLE live_child () INHERITS (live_parent);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs_view', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_parted', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_part_a', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_parent', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_child', 'label', 'tokens')$$);
DROP VIEW live_docs_view;
DROP TABLE live_parted, live_parent, live_child;

-- security: who can create, read, drop and fold
SET ROLE regress_live_writer;
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens')$$);
SELECT live_error($$SELECT nb_live('live_tokens')$$);
SELECT live_error($$SELECT nb_live_drop('live_tokens')$$);
SELECT live_error($$SELECT nb_live_fold('live_tokens')$$);
SELECT count(*) AS listed FROM nb_lives;
-- the table behind it: nothing to read, nothing to write
SELECT live_error($$SELECT count(*) FROM live_tokens$$);
SELECT live_error($$INSERT INTO live_tokens (reset) VALUES (true)$$);
SELECT live_error($$UPDATE live_tokens SET added = NULL$$);
SELECT live_error($$SELECT nbc_live_train('live_tokens')$$);
-- a trigger of the writer's own table cannot feed someone's live model
CREATE TEMP TABLE live_mine (label text, tokens text[]);
CREATE TRIGGER nbc_live_1_insert AFTER INSERT ON live_mine REFERENCING NEW TABLE AS nbc_new
	FOR EACH STATEMENT WHEN ('live_tokens'::regclass IS NOT NULL) EXECUTE FUNCTION nbc_live_capture();
SELECT live_error($$INSERT INTO live_mine VALUES ('spam', '{forged}')$$);
DROP TRIGGER nbc_live_1_insert ON live_mine;
CREATE TRIGGER r AFTER INSERT ON live_mine FOR EACH ROW EXECUTE FUNCTION nbc_live_capture();
SELECT live_error($$INSERT INTO live_mine VALUES ('spam', '{forged}')$$);
DROP TABLE live_mine;
RESET ROLE;
-- nor a second trigger on the source (its owner's) count the rows twice
SET ROLE regress_live_owner;
CREATE TRIGGER again AFTER INSERT ON live_docs REFERENCING NEW TABLE AS nbc_new
	FOR EACH STATEMENT WHEN ('live_tokens'::regclass IS NOT NULL) EXECUTE FUNCTION nbc_live_capture();
SELECT live_error($$INSERT INTO live_docs (label, tokens) VALUES ('spam', '{twice}')$$);
DROP TRIGGER again ON live_docs;
RESET ROLE;
SELECT * FROM live_exact;

-- a hostile search_path: look-alike functions ahead of the extension's
-- (an nb_train of integer labels among them) are never called
CREATE SCHEMA regress_live_evil AUTHORIZATION regress_live_writer;
SET ROLE regress_live_writer;
CREATE FUNCTION regress_live_evil.nb_merge(a nb_model, b nb_model) RETURNS nb_model
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'look-alike nb_merge called'; END $$;
CREATE FUNCTION regress_live_evil.nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'look-alike nb_subtract called'; END $$;
CREATE FUNCTION regress_live_evil.max(bigint) RETURNS bigint
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'look-alike max called'; END $$;
CREATE FUNCTION regress_live_evil.evil_sfunc(nb_model, text, text[]) RETURNS nb_model
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'look-alike nb_train called'; END $$;
CREATE AGGREGATE regress_live_evil.nb_train(text, text[]) (SFUNC = regress_live_evil.evil_sfunc, STYPE = nb_model);
CREATE FUNCTION regress_live_evil.evil_int_sfunc(nb_model, integer, text[]) RETURNS nb_model
	LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'look-alike nb_train(integer) called'; END $$;
CREATE AGGREGATE regress_live_evil.nb_train(integer, text[]) (SFUNC = regress_live_evil.evil_int_sfunc, STYPE = nb_model);
SET search_path = regress_live_evil, regress_live, public, pg_catalog;
INSERT INTO live_docs (label, tokens, stars) SELECT 'spam', ARRAY['hostile' || i], i FROM generate_series(1, 40) i;
DELETE FROM live_docs WHERE id % 3 = 0;
SET search_path = regress_live, public;
RESET ROLE;
SELECT * FROM live_exact;
DROP SCHEMA regress_live_evil CASCADE;
-- where others may create functions beside the extension's, no live model is made
GRANT CREATE ON SCHEMA public TO regress_live_writer;
SET ROLE regress_live_owner;
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens')$$);
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_live_writer;

-- a reader (SELECT on the live model's table) reads it, cannot fold or drop it;
-- SELECT on the source alone reads nothing
SET ROLE regress_live_reader;
SELECT count(*) AS listed FROM nb_lives;
SELECT nb_live('live_tokens') = (SELECT nb_train(label, tokens) FROM live_docs) AS reader_exact;
SELECT live_error($$SELECT nb_live_fold('live_tokens')$$);
SELECT live_error($$SELECT nb_live_drop('live_tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_docs', 'label', 'tokens')$$);
RESET ROLE;
SET ROLE regress_live_owner;
REVOKE SELECT ON live_stars FROM regress_live_reader;
RESET ROLE;
SET ROLE regress_live_reader;
SELECT live_error($$SELECT nb_live('live_stars')$$);
RESET ROLE;
-- a member of the owning role creates and drops
SET ROLE regress_live_member;
SELECT live_model FROM nb_live_create('live_member', 'live_docs', 'label', 'tokens');
SELECT nb_live('live_member') = nb_live('live_tokens') AS member_exact;
SELECT nb_live_drop('live_member');
SELECT count(*) AS member_triggers FROM pg_trigger WHERE tgname LIKE 'nbc\_live\_%' AND tgrelid = 'live_docs'::regclass;
RESET ROLE;

-- names are a table's: per schema, through search_path, qualified
CREATE SCHEMA regress_live_other AUTHORIZATION regress_live_owner;
SET ROLE regress_live_owner;
SELECT live_model FROM nb_live_create('regress_live_other.live_tokens', 'live_docs', 'label', 'tokens');
SELECT nb_live('regress_live_other.live_tokens') = nb_live('live_tokens') AS same_name_other_schema;
SELECT nb_live_drop('regress_live_other.live_tokens');
RESET ROLE;
DROP SCHEMA regress_live_other;
-- a live model over a TEMP table is TEMP: it ends with the session
CREATE TEMP TABLE live_temp (label text, tokens text[]);
SELECT live_model FROM nb_live_create('live_temp_m', 'live_temp', 'label', 'tokens');
INSERT INTO live_temp VALUES ('ham', '{temp}');
SELECT c.relpersistence, nb_live('live_temp_m') = (SELECT nb_train(label, tokens) FROM live_temp) AS exact
FROM pg_class c WHERE c.oid = 'live_temp_m'::regclass;
DROP TABLE live_temp;
-- and only then: a TEMP live model of a table that others write would fail their writes
SELECT live_error($$SELECT nb_live_create('pg_temp.live_x', 'live_docs', 'label', 'tokens')$$);

-- labels: a type whose text form a session setting changes is refused; the
-- others give one class per value whatever the writer's settings
CREATE TABLE live_labels (ts timestamptz, f float8, d date, n numeric, tokens text[]);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_labels', 'ts', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_labels', 'f', 'tokens')$$);
SELECT live_error($$SELECT nb_live_create('live_x', 'live_labels', 'd', 'tokens')$$);
SELECT live_model FROM nb_live_create('live_numeric', 'live_labels', 'n', 'tokens');
SET extra_float_digits = -15;
SET TimeZone = 'Pacific/Chatham';
SET DateStyle = 'German';
INSERT INTO live_labels (n, tokens) VALUES (1.50, '{a}'), (2, '{b}');
RESET extra_float_digits;
RESET DateStyle;
RESET TimeZone;
INSERT INTO live_labels (n, tokens) VALUES (1.50, '{c}');
SELECT nb_live('live_numeric') = (SELECT nb_train(n, tokens) FROM live_labels) AS numeric_exact,
	(SELECT count(*) FROM jsonb_object_keys(nb_live('live_numeric')::jsonb -> 'classes')) AS classes;
SELECT nb_live_drop('live_numeric');
DROP TABLE live_labels;

-- row-level security: refused on the source; enabled later, a role under
-- it reads nothing
CREATE TABLE live_tenants (tenant name DEFAULT current_user, label text, tokens text[]);
ALTER TABLE live_tenants ENABLE ROW LEVEL SECURITY;
SELECT live_error($$SELECT nb_live_create('live_x', 'live_tenants', 'label', 'tokens')$$);
ALTER TABLE live_tenants DISABLE ROW LEVEL SECURITY;
SELECT live_model FROM nb_live_create('live_tenants_m', 'live_tenants', 'label', 'tokens');
INSERT INTO live_tenants (tenant, label, tokens) VALUES ('regress_live_reader', 'ham', '{mine}'), ('someone', 'spam', '{theirs}');
CREATE POLICY own ON live_tenants USING (tenant = current_user);
ALTER TABLE live_tenants ENABLE ROW LEVEL SECURITY;
GRANT SELECT ON live_tenants, live_tenants_m TO regress_live_reader;
SET ROLE regress_live_reader;
SELECT count(*) AS rows_seen FROM live_tenants;
SELECT live_error($$SELECT nb_live('live_tenants_m')$$);
RESET ROLE;
SELECT nb_live('live_tenants_m') = (SELECT nb_train(label, tokens) FROM live_tenants) AS owner_exact;
SELECT nb_live_drop('live_tenants_m');
DROP TABLE live_tenants;
-- under FORCE ROW LEVEL SECURITY its owner sees some rows only: a fold that
-- would train from the source then waits (two rows of 1e308 make the merge
-- overflow), rather than write a base of the rows the owner sees
SET ROLE regress_live_owner;
CREATE TABLE live_forced (id serial PRIMARY KEY, label text, tokens text[], weight float8);
SELECT live_model FROM nb_live_create('live_forced_m', 'live_forced', 'label', 'tokens', 'weight', '{"fold_after": 1}');
INSERT INTO live_forced (label, tokens, weight) VALUES ('ham', '{y}', 1);
CREATE POLICY only_spam ON live_forced USING (label = 'spam');
ALTER TABLE live_forced ENABLE ROW LEVEL SECURITY;
ALTER TABLE live_forced FORCE ROW LEVEL SECURITY;
INSERT INTO live_forced (label, tokens, weight) VALUES ('spam', '{x}', 1e308);
INSERT INTO live_forced (label, tokens, weight) VALUES ('spam', '{x}', 1e308);
DELETE FROM live_forced WHERE id = 2;
SELECT live_error($$SELECT nb_live('live_forced_m')$$);
ALTER TABLE live_forced NO FORCE ROW LEVEL SECURITY;
SELECT nb_live('live_forced_m') = (SELECT nb_train(label, tokens, weight) FROM live_forced) AS exact,
	(SELECT count(*) FROM jsonb_object_keys(nb_live('live_forced_m')::jsonb -> 'classes')) AS classes;
SELECT nb_live_drop('live_forced_m');
DROP TABLE live_forced;
RESET ROLE;

-- no write fails for a fold: two rows of weight 1e308 overflow the live
-- model as they overflow nb_train, and deleting one of them mends it
CREATE TABLE live_huge (id serial PRIMARY KEY, label text, tokens text[], weight float8);
SELECT live_model FROM nb_live_create('live_huge_m', 'live_huge', 'label', 'tokens', 'weight', '{"fold_after": 1}');
INSERT INTO live_huge (label, tokens, weight) VALUES ('ham', '{big}', 1e308);
INSERT INTO live_huge (label, tokens, weight) VALUES ('ham', '{big}', 1e308);
INSERT INTO live_huge (label, tokens, weight) VALUES ('spam', '{small}', 1);
SELECT live_error($$SELECT nb_live('live_huge_m')$$);
SELECT live_error($$SELECT nb_train(label, tokens, weight) FROM live_huge$$);
DELETE FROM live_huge WHERE id = 1;
SELECT nb_live('live_huge_m') = (SELECT nb_train(label, tokens, weight) FROM live_huge) AS mended;
INSERT INTO live_huge (label, tokens, weight) VALUES ('spam', '{after}', 2);
SELECT nb_live('live_huge_m') = (SELECT nb_train(label, tokens, weight) FROM live_huge) AS exact_after;
SELECT nb_live_drop('live_huge_m');
DROP TABLE live_huge;
-- fractional weights of very different sizes: merging 1e15 and 0.001 from
-- two statements rounds the smaller away, which deleting the first would
-- bring back; the live model sees it and trains from the table
CREATE TABLE live_tiny (id serial PRIMARY KEY, label text, tokens text[], weight float8);
SELECT live_model FROM nb_live_create('live_tiny_m', 'live_tiny', 'label', 'tokens', 'weight');
INSERT INTO live_tiny (label, tokens, weight) VALUES ('ham', '{big}', 1e15);
INSERT INTO live_tiny (label, tokens, weight) VALUES ('ham', '{small}', 0.001), ('spam', '{other}', 0.5);
DELETE FROM live_tiny WHERE id = 1;
SELECT nb_live('live_tiny_m') = (SELECT nb_train(label, tokens, weight) FROM live_tiny) AS exact_read;
SELECT nb_live_fold('live_tiny_m');
SELECT nb_live('live_tiny_m') = (SELECT nb_train(label, tokens, weight) FROM live_tiny) AS exact_after_fold,
	(SELECT count(*) FROM live_tiny_m WHERE id > 0) AS deltas_left;
SELECT nb_live_drop('live_tiny_m');
DROP TABLE live_tiny;
-- progress: nb_live_create trains its base with nb_train over the source,
-- which reports every 4096 rows read at nbc.progress_interval 0 (the
-- DETAIL, the elapsed time, left out) and not at the default 5 s
CREATE TABLE live_big AS
SELECT CASE WHEN i % 3 = 0 THEN 'ham' ELSE 'spam' END AS label, ARRAY['t' || (i % 7)] AS tokens
FROM generate_series(1, 10000) AS i;
SET nbc.progress = on;
SET nbc.progress_interval = 0;
\set VERBOSITY terse
SELECT live_model, documents = (SELECT count(*) FROM live_big) AS all_documents, classes
FROM nb_live_create('live_big_m', 'live_big', 'label', 'tokens');
\set VERBOSITY default
RESET nbc.progress_interval;
SELECT nb_live_drop('live_big_m');
SELECT live_model FROM nb_live_create('live_big_m', 'live_big', 'label', 'tokens');
RESET nbc.progress;
SELECT nb_live_drop('live_big_m');
DROP TABLE live_big;

-- lifecycle: renames, unrelated columns, the columns a live model reads
ALTER TABLE live_docs RENAME TO live_rows;
ALTER TABLE live_rows RENAME COLUMN label TO class;
ALTER TABLE live_rows ADD COLUMN extra integer DEFAULT 7;
ALTER TABLE live_text RENAME TO live_text_renamed;
INSERT INTO live_rows (class, tokens, body, attrs, vec, stars, weight, extra)
VALUES ('ham', '{renamed}', 'renamed', '{"r": true}', '{3, 4}', 2, 0.5, 1);
ALTER TABLE live_rows DROP COLUMN extra;
ALTER TABLE live_rows DROP COLUMN note;
UPDATE live_rows SET class = 'spam' WHERE id % 4 = 0;
SELECT name, source, label, features, weight FROM nb_lives ORDER BY name::text;
SELECT nb_live('live_tokens') = (SELECT nb_train(class, tokens) FROM live_rows) AS tokens,
	nb_live('live_text_renamed') = (SELECT nb_train(class, body, '{"ngram_range": [1, 2]}') FROM live_rows) AS text,
	live_near(nb_live('live_vec'), (SELECT nb_train(class, vec, weight) FROM live_rows), 1e-12) AS vec;
ALTER TABLE live_text_renamed RENAME TO live_text;
-- (the views above read stars and weight too, and PostgreSQL names whichever
-- dependent object it finds first: without them, only the trigger is left)
BEGIN;
DROP VIEW live_exact, live_predicted;
SELECT live_error($$ALTER TABLE live_rows DROP COLUMN class$$);
SELECT live_error($$ALTER TABLE live_rows ALTER COLUMN stars TYPE bigint$$);
SELECT live_error($$ALTER TABLE live_rows ALTER COLUMN weight TYPE numeric$$);
-- nor is a live model's table dropped without its triggers
SELECT live_error($$DROP TABLE live_tokens$$);
ROLLBACK;
-- a column dropped with CASCADE takes the live model's columns: writes then fail loudly
BEGIN;
ALTER TABLE live_rows DROP COLUMN attrs CASCADE;
SELECT live_error($$INSERT INTO live_rows (class, tokens) VALUES ('ham', '{x}')$$);
ROLLBACK;
ALTER TABLE live_rows RENAME TO live_docs;
ALTER TABLE live_docs RENAME COLUMN class TO label;
-- a source may not become a partition, get inheritance children or parents,
-- or turn unlogged: its triggers would not see every row (or a crash would
-- empty it and not its live model), so the DDL is refused
SELECT live_error($$CREATE TABLE live_child () INHERITS (live_docs)$$);
CREATE TABLE live_base (label text);
SELECT live_error($$ALTER TABLE live_docs INHERIT live_base$$);
SELECT live_error($$ALTER TABLE live_docs SET UNLOGGED$$);
BEGIN;
ALTER TABLE live_docs DROP CONSTRAINT live_docs_pkey CASCADE;
CREATE TABLE live_all (LIKE live_docs) PARTITION BY LIST (label);
SELECT live_error($$ALTER TABLE live_all ATTACH PARTITION live_docs DEFAULT$$);
ROLLBACK;
DROP TABLE live_base;
-- with the guard disabled (a superuser can), reading refuses rather than drift
BEGIN;
ALTER EVENT TRIGGER nbc_live_guard DISABLE;
CREATE TABLE live_child () INHERITS (live_docs);
SELECT live_error($$SELECT nb_live('live_tokens')$$);
ROLLBACK;

-- the extension moved to another schema (it is relocatable): the triggers
-- and functions find their tables there
BEGIN;
CREATE SCHEMA regress_live_moved;
ALTER EXTENSION nbc SET SCHEMA regress_live_moved;
GRANT USAGE ON SCHEMA regress_live_moved TO PUBLIC;
SET LOCAL search_path = regress_live;
INSERT INTO live_docs (label, tokens) VALUES ('ham', '{moved}');
DELETE FROM live_docs WHERE id % 5 = 0;
SELECT regress_live_moved.nb_live('live_tokens') OPERATOR(regress_live_moved.=)
	(SELECT regress_live_moved.nb_train(label, tokens) FROM live_docs) AS exact_after_move;
ROLLBACK;

-- DROP EXTENSION refuses while live models exist; CASCADE takes their triggers
SELECT live_error('DROP EXTENSION nbc');
BEGIN;
-- (the list of what it drops depends on the earlier tests' tables)
SET LOCAL client_min_messages = warning;
DROP EXTENSION nbc CASCADE;
SELECT count(*) AS triggers_left FROM pg_trigger WHERE tgname LIKE 'nbc\_live\_%';
ROLLBACK;

-- dropping a live model removes its triggers and table
INSERT INTO live_docs (label, attrs) VALUES ('ham', '{"pending": 1}');
SELECT (SELECT t.tgname FROM pg_trigger t WHERE t.tgrelid = 'live_docs'::regclass AND t.tgname LIKE 'nbc\_live\_%\_columns'
		AND pg_get_triggerdef(t.oid) LIKE '%live_attrs%') AS attrs_columns_trigger \gset
SET ROLE regress_live_owner;
SELECT nb_live_drop('live_attrs');
RESET ROLE;
SELECT count(*) AS attrs_triggers FROM pg_trigger WHERE tgname = :'attrs_columns_trigger';
SELECT to_regclass('live_attrs') IS NULL AS attrs_table_gone;
-- the triggers are the machinery: writes that skip triggers (replication
-- role replica, as logical replication applies rows) are not seen
SET session_replication_role = replica;
INSERT INTO live_docs (label, tokens) VALUES ('ham', '{unseen}');
RESET session_replication_role;
SELECT tokens AS exact_after_replica FROM live_exact;
-- DROP TABLE of the source leaves the live models' tables, which refuse to be read
DROP VIEW live_exact, live_predicted;
DROP TABLE live_docs;
SELECT live_error($$SELECT nb_live('live_tokens')$$);
SELECT name, source FROM nb_lives ORDER BY name::text;
DROP TABLE live_tokens, live_text, live_stars, live_weighted, live_vec;
RESET search_path;
DROP SCHEMA regress_live;

DROP FUNCTION live_error(text);
DROP FUNCTION live_near(nb_model, nb_model, float8);
DROP ROLE regress_live_member, regress_live_owner, regress_live_writer, regress_live_reader;
