--
-- merge: nb_merge(a, b) is the model of the union of the rows of a and b;
-- NULL is the empty model.  Counts are integers (or binary fractions), so
-- merged models must equal the directly trained ones byte for byte.
--
CREATE TABLE merge_docs AS
SELECT i AS id, CASE WHEN i % 3 = 0 THEN 'ham' WHEN i % 3 = 1 THEN 'spam' ELSE 'eggs' END AS label,
       ARRAY(SELECT 'w' || ((i * j) % 23) FROM generate_series(1, i % 5) AS j) AS tokens
FROM generate_series(1, 200) AS i;

CREATE TABLE merge_models (name text PRIMARY KEY, m nb_model);
INSERT INTO merge_models
SELECT 'all', nb_train(label, tokens) FROM merge_docs UNION ALL
SELECT 'low', nb_train(label, tokens) FROM merge_docs WHERE id <= 100 UNION ALL
SELECT 'high', nb_train(label, tokens) FROM merge_docs WHERE id > 100 UNION ALL
SELECT 'third1', nb_train(label, tokens) FROM merge_docs WHERE id % 3 = 0 UNION ALL
SELECT 'third2', nb_train(label, tokens) FROM merge_docs WHERE id % 3 = 1 UNION ALL
SELECT 'third3', nb_train(label, tokens) FROM merge_docs WHERE id % 3 = 2 UNION ALL
SELECT 'twice', nb_train(label, tokens, 2) FROM merge_docs UNION ALL
SELECT 'none', NULL;
CREATE FUNCTION mm(text) RETURNS nb_model LANGUAGE sql STABLE AS
  $$ SELECT m FROM merge_models WHERE name = $1 $$;

-- halves: the union of two halves is the whole
SELECT nb_merge(mm('low'), mm('high'))::text = mm('all')::text AS halves;
-- the thirds hold disjoint classes (id % 3 decides both the class and the third)
SELECT (SELECT count(*) FROM nb_classes(mm('third1'))) AS classes_in_third,
       nb_merge(nb_merge(mm('third1'), mm('third2')), mm('third3'))::text = mm('all')::text AS thirds;
-- commutative and associative
SELECT nb_merge(mm('low'), mm('high'))::text = nb_merge(mm('high'), mm('low'))::text AS commutative,
       nb_merge(nb_merge(mm('third1'), mm('third2')), mm('third3'))::text
         = nb_merge(mm('third1'), nb_merge(mm('third2'), mm('third3')))::text AS associative,
       nb_merge(mm('third3'), nb_merge(mm('third1'), mm('third2')))::text = mm('all')::text AS any_order;
-- a model merged with itself counts every row twice: weight 2
SELECT nb_merge(mm('all'), mm('all'))::text = mm('twice')::text AS self_merge;
-- counts add: the class documents of the merge are the sums
SELECT c.label, l.documents AS low, h.documents AS high, c.documents AS merged
FROM nb_classes(nb_merge(mm('low'), mm('high'))) AS c
JOIN nb_classes(mm('low')) AS l USING (label) JOIN nb_classes(mm('high')) AS h USING (label)
ORDER BY c.label COLLATE "C";

-- NULL is the empty model
SELECT nb_merge(mm('all'), NULL)::text = mm('all')::text AS m_null,
       nb_merge(NULL, mm('all'))::text = mm('all')::text AS null_m,
       nb_merge(NULL::nb_model, NULL) IS NULL AS null_null,
       nb_merge(mm('none'), mm('none')) IS NULL AS none_none;

-- models with nothing in common: disjoint classes and vocabularies
SELECT nb_merge(a, b)::jsonb
FROM (SELECT nb_train('a', '{x,x}'::text[]) AS a) s1, (SELECT nb_train('b', '{y}'::text[]) AS b) s2;
-- a class without tokens merged with the same class with tokens
SELECT nb_merge(a, b)::jsonb
FROM (SELECT nb_train('a', '{}'::text[]) AS a) s1, (SELECT nb_train('a', '{y}'::text[]) AS b) s2;
-- fractional weights: 0.5 + 0.25 documents, 2 * 0.5 + 0.25 tokens
SELECT nb_merge(a, b)::jsonb
FROM (SELECT nb_train('a', '{x,x}'::text[], 0.5) AS a) s1,
     (SELECT nb_train('a', '{x}'::text[], 0.25) AS b) s2;

-- merging leaves its inputs unchanged
CREATE TABLE merge_before AS SELECT name, m::text AS t FROM merge_models;
-- every pair of the 8 models (one NULL): 64 merges, 63 non-NULL
SELECT count(nb_merge(a.m, b.m)) AS merged FROM merge_models a, merge_models b;
SELECT nb_merge(m, m) IS NOT NULL AS merged, nb_merge(m, m)::text <> m::text AS differs,
       m::text = (SELECT t FROM merge_before WHERE name = 'all') AS input_unchanged
FROM merge_models WHERE name = 'all';
SELECT count(*) AS models, count(*) FILTER (WHERE m::text IS NOT DISTINCT FROM b.t) AS unchanged
FROM merge_models JOIN merge_before b USING (name);

--
-- The aggregate nb_merge(nb_model): NULLs skipped, NULL over no rows
--
SELECT nb_merge(m)::text = mm('all')::text AS halves
FROM merge_models WHERE name IN ('low', 'high', 'none');
SELECT nb_merge(m ORDER BY name DESC)::text = mm('all')::text AS thirds
FROM merge_models WHERE name LIKE 'third%' OR name = 'none';
SELECT nb_merge(m) IS NULL AS is_null FROM merge_models WHERE name = 'none';
SELECT nb_merge(m) IS NULL AS is_null FROM merge_models WHERE false;
-- one model per row, merged: the whole
SELECT nb_merge(one)::text = mm('all')::text AS per_row
FROM (SELECT nb_train(label, tokens) AS one FROM merge_docs GROUP BY id) s;
-- grouped: per-class models of the halves merged per class
SELECT label COLLATE "C", nb_merge(m)::text = (SELECT nb_train(label, tokens)::text FROM merge_docs d
                                      WHERE d.label = s.label) AS same
FROM (SELECT label, id <= 100 AS half, nb_train(label, tokens) AS m FROM merge_docs GROUP BY 1, 2) s
GROUP BY label ORDER BY 1;

--
-- Incremental training: UPDATE with the model of a new batch
--
CREATE TABLE merge_store (name text PRIMARY KEY, model nb_model);
INSERT INTO merge_store SELECT 'm', nb_train(label, tokens) FROM merge_docs WHERE id <= 100;
-- an empty batch (the subquery is NULL) keeps the model
UPDATE merge_store
SET model = nb_merge(model, (SELECT nb_train(label, tokens) FROM merge_docs WHERE id > 1000))
WHERE name = 'm';
SELECT model::text = mm('low')::text AS unchanged FROM merge_store;
-- two batches
UPDATE merge_store
SET model = nb_merge(model, (SELECT nb_train(label, tokens) FROM merge_docs WHERE id BETWEEN 101 AND 150))
WHERE name = 'm';
UPDATE merge_store
SET model = nb_merge(model, (SELECT nb_train(label, tokens) FROM merge_docs WHERE id BETWEEN 151 AND 200))
WHERE name = 'm';
SELECT model::text = mm('all')::text AS same_as_all FROM merge_store;
-- starting from NULL (no model yet)
INSERT INTO merge_store VALUES ('n', NULL);
UPDATE merge_store SET model = nb_merge(model, (SELECT nb_train(label, tokens) FROM merge_docs))
WHERE name = 'n';
SELECT model::text = mm('all')::text AS same_as_all FROM merge_store WHERE name = 'n';

-- one row at a time in PL/pgSQL
DO $$
DECLARE
  m nb_model;
  r record;
BEGIN
  FOR r IN SELECT * FROM merge_docs ORDER BY id LOOP
    m := nb_merge(m, (SELECT nb_train(r.label, r.tokens)));
  END LOOP;
  RAISE NOTICE 'row by row equals all: %', m::text = mm('all')::text;
END $$;

--
-- Many inputs, every feature type, fractional weights.  The aggregate keeps
-- up to 16 models flat and merges them at once, then goes on from their
-- merge; a chain of scalar merges adds one model at a time.  Both add every
-- count in input order, so even sums that do not add up exactly in binary
-- (weights of thirds, Gaussian moments) come out the same bytes.
--
CREATE TABLE merge_mixed AS
SELECT i AS id, 'c' || (i % 4) AS label, (i % 7 + 1) / 3.0 AS w,
       jsonb_build_object('words', jsonb_build_array('w' || (i % 11), 'w' || (i * i % 13)),
                          'colour', 'v' || (i % 5), 'height', (i * 37 % 101) / 7.0,
                          'flag', i % 3 = 0) AS f
FROM generate_series(1, 100) AS i;
CREATE TABLE merge_parts AS
SELECT id, nb_train(label, f, w) AS m FROM merge_mixed GROUP BY id;
DO $$
DECLARE
  chained nb_model;
  agg nb_model;
  r record;
BEGIN
  FOR r IN SELECT m FROM merge_parts ORDER BY id LOOP
    chained := nb_merge(chained, r.m);
  END LOOP;
  SELECT nb_merge(m ORDER BY id) INTO agg FROM merge_parts;
  RAISE NOTICE 'aggregate of 100 equals the chain of scalar merges: %', agg::text = chained::text;
  -- what the aggregate does after 16 inputs: go on from their merge
  SELECT nb_merge(m ORDER BY k) INTO agg
  FROM (SELECT 0 AS k, nb_merge(m ORDER BY id) AS m FROM merge_parts WHERE id <= 16
        UNION ALL SELECT id, m FROM merge_parts WHERE id > 16) s;
  RAISE NOTICE 'merged in two steps equals the chain: %', agg::text = chained::text;
END $$;
-- the merge is a model of the same rows: as trained on the union, up to rounding
WITH merged AS (SELECT nb_merge(m) AS m FROM merge_parts),
     whole AS (SELECT nb_train(label, f, w) AS m FROM merge_mixed)
SELECT max(abs((nb_predict_proba(merged.m, f) ->> 'c1')::float8
               - (nb_predict_proba(whole.m, f) ->> 'c1')::float8)) < 1e-12 AS same_predictions,
       abs((nb_info(min(merged.m::text)::nb_model) ->> 'documents')::float8
           - (nb_info(min(whole.m::text)::nb_model) ->> 'documents')::float8) < 1e-12 AS same_documents
FROM merge_mixed, merged, whole;
-- the running merge of a window: the state is flattened after every row
SELECT count(*) AS rows,
       count(*) FILTER (WHERE r::text = (SELECT nb_merge(p.m ORDER BY p.id) FROM merge_parts p
                                         WHERE p.id <= s.id)::text) AS same_as_prefix
FROM (SELECT id, nb_merge(m) OVER (ORDER BY id) AS r FROM merge_parts) s;

-- conflicts are found at the input that brings them, with the same errors as before
SELECT nb_merge(m ORDER BY k)
FROM (VALUES (1, (SELECT nb_train('a', '{"x": "s"}'::jsonb))),
             (2, (SELECT nb_train('b', '{"y": 1}'::jsonb))),
             (3, (SELECT nb_train('a', '{"x": 2}'::jsonb)))) v(k, m);
SELECT nb_merge(nb_train('a', '{"x": "s"}'::jsonb), nb_train('a', '{"x": true}'::jsonb));
SELECT nb_merge(m ORDER BY k)
FROM (VALUES (1, (SELECT nb_train('a', '{1, 2}'::float8[]))),
             (2, (SELECT nb_train('a', '{3, 4}'::float8[]))),
             (3, (SELECT nb_train('b', '{1, 2, 3}'::float8[])))) v(k, m);
-- models of different kinds of rows describe different features: refused
SELECT nb_merge(m ORDER BY k)
FROM (VALUES (1, (SELECT nb_train('a', '{1, 2}'::float8[]))),
             (2, (SELECT nb_train('a', '{"y": 1}'::jsonb)))) v(k, m);
SELECT nb_merge(nb_train('a', '{x}'::text[]), nb_train('b', '{"k": ["x"]}'::jsonb));
SELECT nb_merge(nb_train('a', 'x'::tsvector), nb_train('b', '{"k": "x"}'::jsonb));
-- a jsonb bag named "" is the bag of text[] rows: they share it
SELECT nb_info(nb_merge(nb_train('a', '{x}'::text[]), nb_train('b', '{"": ["x"], "k": "y"}'::jsonb))) -> 'features' AS shared_bag;
-- a model without features goes with any
SELECT nb_info(nb_merge(nb_train('a', '{}'::jsonb), nb_train('b', '{x}'::text[]))) -> 'classes' AS prior_only;
-- counts that overflow double precision when added
SELECT nb_merge(m)
FROM (VALUES ((SELECT nb_train('a', '{x}'::text[], 1e308))),
             ((SELECT nb_train('a', '{y}'::text[], 1e308)))) v(m);
SELECT nb_merge(nb_train('a', '{x}'::text[], 1e308), nb_train('a', '{y}'::text[], 1e308));
-- integer counts add up exactly in any order up to 2^53 = 9007199254740992;
-- past it float8 holds every other integer only: 2^53 + 1 + 1 is 2^53 large
-- one first, 2^53 + 2 small ones first (README, Live models: Exactness)
WITH w(k, weight) AS (VALUES (1, 4503599627370496::float8), (2, 1), (3, 1))
SELECT nb_train('a', '{x}'::text[], weight ORDER BY k) = nb_train('a', '{x}'::text[], weight ORDER BY k DESC) AS same_at_2_52,
       nb_info(nb_train('a', '{x}'::text[], weight ORDER BY k)) ->> 'documents' AS documents
FROM w;
WITH w(k, weight) AS (VALUES (1, 9007199254740992::float8), (2, 1), (3, 1))
SELECT nb_train('a', '{x}'::text[], weight ORDER BY k) = nb_train('a', '{x}'::text[], weight ORDER BY k DESC) AS same_at_2_53,
       nb_info(nb_train('a', '{x}'::text[], weight ORDER BY k)) ->> 'documents' AS large_first,
       nb_info(nb_train('a', '{x}'::text[], weight ORDER BY k DESC)) ->> 'documents' AS small_first
FROM w;
