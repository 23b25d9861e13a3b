--
-- train: what nb_train counts.  Counts are read back through the jsonb cast,
-- nb_classes and nb_info; the expected numbers are in the comments.
--

-- the README example: spam has 7 tokens (money 3 times in 2 documents), ham 6
SELECT nb_train(label, tokens)::jsonb FROM docs;
SELECT * FROM nb_classes((SELECT nb_train(label, tokens) FROM docs));
-- bytes = 4 (varlena) + 32 (header) + 2 classes * 12 + 9 tokens * 8 + 10 entries * 20
--         + 7 label bytes + 47 token bytes = 386
SELECT nb_info(nb_train(label, tokens)) FROM docs;

--
-- text[]: a token repeated in the array counts each time, NULL elements are
-- ignored, every element of a multidimensional array counts
--
-- x: count 3 in 2 documents; y: 1 in 1; a: 2 documents, 4 tokens
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', '{x,x,NULL,y}'::text[]), ('a', '{x}')) AS v(l, t);
-- the same document twice: count 4, documents 2
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', '{x,x}'::text[]), ('a', '{x,x}')) AS v(l, t);
-- a 2x3 array is no bag of its six elements (see below)
SELECT nb_train('a', '{{x,y,z},{z,y,x}}'::text[])::jsonb;
-- an empty string is a token (and a label) like any other
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('', '{"",""}'::text[]), ('b', '{""}')) AS v(l, t);

--
-- a document with no tokens still counts for its class: {}, {NULL}, ''::tsvector
--
-- a: 2 documents (1 token), b: 2 documents (0 tokens), c: 1 document
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', '{}'::text[]), ('a', '{x}'), ('b', '{}'), ('b', '{NULL,NULL}'), ('c', '{}')) AS v(l, t);
SELECT * FROM nb_classes((SELECT nb_train(l, t)
  FROM (VALUES ('a', '{}'::text[]), ('a', '{x}'), ('b', '{}'), ('b', '{NULL,NULL}'), ('c', '{}')) AS v(l, t)));
SELECT nb_info(nb_train(l, t))
FROM (VALUES ('a', '{}'::text[]), ('a', '{x}'), ('b', '{}'), ('b', '{NULL,NULL}'), ('c', '{}')) AS v(l, t);
SELECT nb_train('a', ''::tsvector)::jsonb;

--
-- tsvector: a lexeme counts once per position, once without positions
-- (stripped), whatever the position weights
--
-- a: x 3 (positions 1,2,3), y 1 (no position), z 1; b: x 1, w 1 (stripped)
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', 'x:1,2,3 y z:4'::tsvector), ('b', strip('x:1,2 w:3'::tsvector))) AS v(l, t);
-- weights A-D do not matter: x 4
SELECT nb_train('a', 'x:1A,2B,3C,4D'::tsvector)::jsonb;
-- to_tsvector: "the" at positions 1 and 4 counts 2
SELECT nb_train('a', to_tsvector('simple', 'the cat and the hat'))::jsonb;
-- the same document as text[] and as tsvector gives the same model
SELECT (SELECT nb_train(l, t)::text FROM (VALUES ('a', '{x,x,y}'::text[]), ('b', '{y}')) v(l, t))
     = (SELECT nb_train(l, t)::text FROM (VALUES ('a', 'x:1,2 y:3'::tsvector), ('b', 'y'::tsvector)) v(l, t))
       AS same_model;

--
-- NULLs and empty input
--
-- a row with a NULL label, NULL features or (3-argument form) NULL weight is skipped: only a remains
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', '{x}'::text[]), (NULL, '{y}'), ('b', NULL)) AS v(l, t);
SELECT nb_train(l, t, w)::jsonb
FROM (VALUES ('a', '{x}'::text[], 1.0::float8), (NULL, '{y}', 1), ('b', NULL, 1), ('c', '{z}', NULL)) AS v(l, t, w);
SELECT nb_train(l, t)::jsonb
FROM (VALUES ('a', 'x'::tsvector), (NULL, 'y'), ('b', NULL)) AS v(l, t);
-- no rows, or only skipped rows: NULL
SELECT nb_train(label, tokens) IS NULL AS is_null FROM docs WHERE false;
SELECT nb_train(label, tokens, 1.0) IS NULL AS is_null FROM docs WHERE false;
SELECT nb_train(label, to_tsvector('simple', 'x')) IS NULL AS is_null FROM docs WHERE false;
SELECT nb_train(l, t) IS NULL AS is_null
FROM (VALUES (NULL, '{y}'::text[]), ('b', NULL), (NULL, NULL)) AS v(l, t);
SELECT nb_train(l, t, w) IS NULL AS is_null
FROM (VALUES ('a', '{y}'::text[], NULL::float8), ('b', '{z}', 0)) AS v(l, t, w);

--
-- Weights: a row counts weight times, in documents and in token counts
--
-- a: 1.5 documents; x count 2*0.5 + 1*1 = 2 in 1.5 documents, y 1 in 1
-- b: 0.25 documents; y count 0.25 in 0.25 documents
-- the weight-0 row adds nothing (no y in a); the NULL-weight row is skipped
SELECT nb_train(l, t, w)::jsonb
FROM (VALUES ('a', '{x,x}'::text[], 0.5::float8), ('a', '{x,y}', 1), ('a', '{y,z}', 0),
             ('b', '{y}', NULL), ('b', '{y}', 0.25)) AS v(l, t, w);
-- a class seen only with weight 0 does not exist, -0 is 0
SELECT nb_train(l, t, w)::jsonb
FROM (VALUES ('a', '{x}'::text[], 1::float8), ('b', '{y}', 0), ('c', '{z}', '-0')) AS v(l, t, w);
-- weight 2 equals the row twice
SELECT (SELECT nb_train(label, tokens, 2)::text FROM docs)
     = (SELECT nb_train(label, tokens)::text FROM docs, generate_series(1, 2)) AS same_model;
-- tsvector with weights: x 3 positions * 1.5 = 4.5 in 1.5 documents
SELECT nb_train(l, t, w)::jsonb
FROM (VALUES ('a', 'x:1,2,3'::tsvector, 1.5::float8), ('b', 'y', 0)) AS v(l, t, w);
-- weight 1 equals no weight
SELECT (SELECT nb_train(label, tokens, 1)::text FROM docs)
     = (SELECT nb_train(label, tokens)::text FROM docs) AS same_model;
-- invalid weights: negative, NaN, infinite (even on a row that would be skipped)
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], -1::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], -1e-300::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], 'NaN'::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], 'Infinity'::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], '-Infinity'::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', 'x'::tsvector, -2::float8)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES (NULL, '{x}'::text[], -1::float8)) AS v(l, t, w);
\set VERBOSITY sqlstate
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x}'::text[], -1::float8)) AS v(l, t, w);
\set VERBOSITY default
-- features are a one-dimensional array, or '{}': more dimensions are not flattened
SELECT nb_train('a', '{{x,y},{z,w}}'::text[]);
SELECT nb_train(l, t) FROM (VALUES ('a', '{x,y}'::text[]), ('b', '{{y}}')) AS v(l, t);
SELECT nb_train(l, t, 2) FROM (VALUES ('a', '{{{x}}}'::text[])) AS v(l, t);
\set VERBOSITY sqlstate
SELECT nb_train('a', '{{x,y},{z,w}}'::text[]);
\set VERBOSITY default
SELECT nb_train(l, t)::jsonb -> 'classes' AS classes
FROM (VALUES ('a', '{}'::text[]), ('a', ARRAY[]::text[]), ('b', '[3:4]={x,y}')) AS v(l, t);
-- sums that leave the range of float8
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{}'::text[], 1e308::float8), ('a', '{}', 1e308)) AS v(l, t, w);
SELECT nb_train(l, t, w) FROM (VALUES ('a', '{x,x}'::text[], 1e308::float8)) AS v(l, t, w);
-- just below: 1.5e308 documents and counts are fine
SELECT c.documents, (m::jsonb #>> '{tokens,x,a,count}')::float8 AS count_x
FROM (SELECT nb_train(l, t, w) AS m
      FROM (VALUES ('a', '{x}'::text[], 1e308::float8), ('a', '{x}', 5e307)) AS v(l, t, w)) s,
     nb_classes(m) AS c;

--
-- labels and tokens are bytes: classes are listed in byte order, not in the
-- collation's order ('Z' < 'a' < 'é' = c3 a9)
--
SELECT label, documents, prior FROM nb_classes((SELECT nb_train(l, '{}'::text[])
  FROM (VALUES ('é'), ('a'), ('Z'), ('a'), ('')) AS v(l)));
SELECT nb_train(l, t)::jsonb FROM (VALUES ('été', '{ÿ,ü,"x y"}'::text[])) AS v(l, t);

-- the transition functions only work inside an aggregate
SELECT nbc_train_transfn(NULL::nb_model, 'a', '{x}'::text[]);
SELECT nbc_train_transfn(NULL::nb_model, 'a', 'x'::tsvector, 1);

--
-- Independent check on generated data: every count of the model equals the
-- count computed with plain SQL (one row in six has no tokens)
--
CREATE TABLE train_gen AS
SELECT i AS id, 'c' || (i % 4) AS label,
       ARRAY(SELECT 't' || ((i * j) % 17) FROM generate_series(1, i % 6) AS j) AS tokens
FROM generate_series(1, 300) AS i;
CREATE TABLE train_gen_model AS SELECT nb_train(label, tokens)::jsonb AS j FROM train_gen;
WITH from_model AS (
  SELECT t.key AS token, c.key AS label,
         (c.value ->> 'count')::float8 AS count, (c.value ->> 'documents')::float8 AS docs
  FROM train_gen_model, jsonb_each(j -> 'tokens') AS t, jsonb_each(t.value) AS c),
from_sql AS (
  SELECT tok AS token, label, count(*)::float8 AS count, count(DISTINCT id)::float8 AS docs
  FROM train_gen, unnest(tokens) AS tok GROUP BY 1, 2)
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE m.count = s.count AND m.docs = s.docs) AS equal
FROM from_model m FULL JOIN from_sql s USING (token, label);
WITH from_model AS (
  SELECT c.key AS label, (c.value ->> 'documents')::float8 AS docs,
         (c.value ->> 'tokens')::float8 AS tokens
  FROM train_gen_model, jsonb_each(j -> 'classes') AS c),
from_sql AS (
  SELECT label, count(*)::float8 AS docs, sum(cardinality(tokens))::float8 AS tokens
  FROM train_gen GROUP BY 1)
SELECT label COLLATE "C", m.docs, m.tokens, m.docs = s.docs AND m.tokens = s.tokens AS equal
FROM from_model m FULL JOIN from_sql s USING (label) ORDER BY 1;
SELECT nb_info(nb_train(label, tokens)) - 'bytes' AS info,
       (SELECT count(DISTINCT tok) FROM train_gen, unnest(tokens) tok) AS vocabulary,
       (SELECT count(DISTINCT (tok, label)) FROM train_gen, unnest(tokens) tok) AS entries,
       (SELECT sum(cardinality(tokens)) FROM train_gen) AS tokens
FROM train_gen;

-- every count finite, but their sum over the classes is not: the model could
-- not be scored (the prior divides by the total), so it is refused
SELECT nb_train(l, '{x}'::text[], 1e308) FROM (VALUES ('a'), ('b')) v(l);
SELECT nb_merge(nb_train('a', '{x}'::text[], 1e308), nb_train('b', '{y}'::text[], 1e308));

--
-- label and features swapped: nb_train(body, label) makes a class of every
-- document.  A model of at least 20 classes, more than half the documents'
-- count, is reported once (at the final function, not per row)
--
CREATE TABLE swap_docs AS
SELECT 'document number ' || i AS body, CASE WHEN i % 3 = 0 THEN 'spam' ELSE 'ham' END AS label
FROM generate_series(1, 40) i;
-- swapped: 40 classes from 40 documents, a WARNING with the argument order
SELECT nb_info(nb_train(body, label)) ->> 'classes' AS classes FROM swap_docs;
-- the same with a weight: documents are the sum of the weights, 40 * 0.5
SELECT nb_info(nb_train(body, ARRAY[label], 0.5)) ->> 'classes' AS classes FROM swap_docs;
-- the right order: 2 classes, quiet
SELECT nb_info(nb_train(label, body)) ->> 'classes' AS classes FROM swap_docs;
-- many classes with enough documents each (120 "languages" of 10 rows: 120
-- is not more than 1200 / 2), quiet
SELECT nb_info(nb_train('lang' || (i % 120), ARRAY['w' || i])) ->> 'classes' AS classes
FROM generate_series(1, 1200) i;
-- 19 classes of one document each: too few to tell, quiet
SELECT nb_info(nb_train('c' || i, ARRAY['w' || i])) ->> 'classes' AS classes
FROM generate_series(1, 19) i;
-- a model per group (GROUP BY, as cross-validation's folds) is not judged,
-- nor nb_train as a window aggregate (its final function runs per row)
SELECT g, nb_info(nb_train(body, label)) ->> 'classes' AS classes
FROM swap_docs, generate_series(1, 2) g GROUP BY g ORDER BY g;
SELECT count(DISTINCT nb_info(m) ->> 'classes') AS distinct_class_counts
FROM (SELECT nb_train(body, label) OVER (ORDER BY body) AS m FROM swap_docs) w;
-- in a parallel plan, the leader's final function judges the merged model
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE swap_docs SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT nb_train(body, label) FROM swap_docs;
SELECT nb_info(nb_train(body, label)) ->> 'classes' AS classes FROM swap_docs;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE swap_docs;
