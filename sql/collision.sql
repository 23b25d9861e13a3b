--
-- collision: a model prepared for scoring serves no other model, not even
-- one of the same size and header checksum.
--
-- Each pair is a model A trained here and a model B made from it: A with its
-- bytes 49..64 (the document counts of classes a and b) replaced by what
--   python3 test/collision/make_pair.py "<A as text>" [ratio]
-- prints, which keeps A's size and checksum.  By hand (multinomial, alpha 1,
-- see the comments below) A predicts a and B predicts b.
--
SET max_parallel_workers_per_gather = 0;

-- small: a {x,x,y}, b {y,z}; for {x}, A: 1 * 3/6 against 1 * 1/5, so a;
-- B has 9 and 380.03 documents: 9 * 3/6 against 380.03 * 1/5, so b
CREATE TABLE coll_small (id int, m nb_model);
INSERT INTO coll_small SELECT 1, nb_train(l, t::text[])
  FROM (VALUES ('a', '{x,x,y}'), ('b', '{y,z}')) v(l, t);
INSERT INTO coll_small SELECT 2, translate(encode(overlay(decode(m::text, 'base64')
  PLACING '\x00000000000022403d3d74d084c07740' FROM 49), 'base64'), E'\n', '')::nb_model
  FROM coll_small WHERE id = 1;
-- two models of one size and checksum
SELECT count(DISTINCT m::text) AS models,
       count(DISTINCT octet_length(decode(m::text, 'base64'))) AS sizes,
       count(DISTINCT substr(decode(m::text, 'base64'), 25, 8)) AS checksums
FROM coll_small;

-- each alone, in its own query
SELECT nb_predict(m, ARRAY['x']) FROM coll_small WHERE id = 1;
SELECT nb_predict(m, ARRAY['x']) FROM coll_small WHERE id = 2;
CREATE TABLE coll_alone AS
  SELECT 1 AS id, nb_predict_proba(m, ARRAY['x']) AS p FROM coll_small WHERE id = 1;
INSERT INTO coll_alone SELECT 2, nb_predict_proba(m, ARRAY['x']) FROM coll_small WHERE id = 2;

-- both in one query, in either order: from the table, and as values
SELECT id, nb_predict(m, ARRAY['x']) FROM coll_small ORDER BY id;
SELECT id, nb_predict(m, ARRAY['x']) FROM coll_small ORDER BY id DESC;
SELECT v.i, nb_predict(v.m::nb_model, ARRAY['x'])
FROM (SELECT 1, m::text FROM coll_small WHERE id = 1
      UNION ALL SELECT 2, m::text FROM coll_small WHERE id = 2
      UNION ALL SELECT 3, m::text FROM coll_small WHERE id = 1) v(i, m);
SELECT s.id, nb_predict_proba(s.m, ARRAY['x']) = a.p AS same_as_alone
FROM coll_small s JOIN coll_alone a USING (id) ORDER BY s.id;

-- across queries: each query finds the model of exactly its bytes, also
-- where one call site lives on for the transaction (a PL/pgSQL expression)
SELECT nb_predict(m, ARRAY['x']) FROM coll_small WHERE id = 1;
SELECT nb_predict(m, ARRAY['x']) FROM coll_small WHERE id = 2;
CREATE FUNCTION coll_score(m nb_model) RETURNS text LANGUAGE plpgsql
  AS $$ BEGIN RETURN nb_predict(m, ARRAY['x']); END $$;
BEGIN;
SELECT coll_score(m) FROM coll_small WHERE id = 1;
SELECT coll_score(m) FROM coll_small WHERE id = 2;
SELECT coll_score(m) FROM coll_small WHERE id = 1;
COMMIT;

-- models given as constants of the plan (recognized by their address):
-- literals, and parameters of a custom plan; a generic plan's are compared
SELECT m::text AS a_text FROM coll_small WHERE id = 1 \gset
SELECT m::text AS b_text FROM coll_small WHERE id = 2 \gset
SELECT nb_predict(:'a_text'::nb_model, ARRAY['x']) AS a, nb_predict(:'b_text'::nb_model, ARRAY['x']) AS b
FROM generate_series(1, 2);
PREPARE coll_stmt(nb_model) AS SELECT g, nb_predict($1, ARRAY['x']) FROM generate_series(1, 2) g;
SET plan_cache_mode = force_custom_plan;
EXECUTE coll_stmt(:'a_text');
EXECUTE coll_stmt(:'b_text');
SET plan_cache_mode = force_generic_plan;
EXECUTE coll_stmt(:'b_text');
EXECUTE coll_stmt(:'a_text');
RESET plan_cache_mode;
DEALLOCATE coll_stmt;
BEGIN;
SELECT coll_score(:'a_text');
SELECT coll_score(:'b_text');
COMMIT;

-- large (16 kB): a a1..a300, b b1..b200 a1 a2; for {a5}, A: 1 * 2/800
-- against 1 * 1/702, so a; B (ratio 2) has 1291 and 47732.4 documents, so b.  Kept
-- out of line (by TOAST pointer), compressed inline, and in memory.
CREATE TABLE coll_large (id int, m nb_model);
ALTER TABLE coll_large ALTER m SET STORAGE EXTERNAL;
INSERT INTO coll_large SELECT 1, nb_train(l, t) FROM (
  SELECT 'a', array_agg('a' || g) FROM generate_series(1, 300) g
  UNION ALL
  SELECT 'b', array_agg('b' || g) || ARRAY['a1', 'a2'] FROM generate_series(1, 200) g) v(l, t);
INSERT INTO coll_large SELECT 2, translate(encode(overlay(decode(m::text, 'base64')
  PLACING '\x00000000002c9440621aca538c4ee740' FROM 49), 'base64'), E'\n', '')::nb_model
  FROM coll_large WHERE id = 1;
CREATE TABLE coll_large_main (id int, m nb_model);
ALTER TABLE coll_large_main ALTER m SET STORAGE MAIN;
INSERT INTO coll_large_main SELECT * FROM coll_large;
SELECT count(DISTINCT m::text) AS models,
       count(DISTINCT octet_length(decode(m::text, 'base64'))) AS sizes,
       count(DISTINCT substr(decode(m::text, 'base64'), 25, 8)) AS checksums
FROM coll_large;
CREATE FUNCTION coll_toasted(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                 (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
  RETURN n;
END $$;
SELECT coll_toasted('coll_large') AS out_of_line;
SELECT pg_column_compression(m) IS NULL AS plain FROM coll_large;
SELECT pg_column_compression(m) IS NOT NULL AS compressed, pg_column_size(m) < 8000 AS inline
FROM coll_large_main;
SELECT id, nb_predict(m, ARRAY['a5']) FROM coll_large ORDER BY id;
SELECT id, nb_predict(m, ARRAY['a5']) FROM coll_large_main ORDER BY id;
SELECT id, nb_predict(m::text::nb_model, ARRAY['a5']) FROM coll_large ORDER BY id;
SELECT id, nb_predict(m::text::nb_model, ARRAY['a5']) FROM coll_large ORDER BY id DESC;

DROP FUNCTION coll_score(nb_model), coll_toasted(regclass);
DROP TABLE coll_small, coll_alone, coll_large, coll_large_main;
RESET max_parallel_workers_per_gather;
