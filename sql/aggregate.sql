--
-- aggregate: nb_train with GROUP BY (hashed and sorted plans), grouping sets,
-- empty groups, window frames, ORDER BY / DISTINCT / FILTER in the call.
--
SET max_parallel_workers_per_gather = 0;

-- 120 documents in 3 segments and 2 classes, and a segment with only NULL labels
CREATE TABLE agg_docs (id int PRIMARY KEY, segment text, label text, tokens text[]);
INSERT INTO agg_docs
SELECT i, 's' || (i % 3), CASE WHEN i % 5 < 2 THEN 'pos' ELSE 'neg' END,
       ARRAY(SELECT 'w' || ((i + j * 7) % 11) FROM generate_series(1, 1 + i % 4) AS j)
FROM generate_series(1, 120) AS i;
INSERT INTO agg_docs SELECT 1000 + i, 'empty', NULL, '{x}' FROM generate_series(1, 3) AS i;
ANALYZE agg_docs;

-- hashed
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT segment, nb_train(label, tokens) FROM agg_docs GROUP BY segment;
CREATE TABLE agg_hashed AS
SELECT segment, nb_train(label, tokens)::text AS m FROM agg_docs GROUP BY segment;
RESET enable_sort;

-- sorted
SET enable_hashagg = off;
EXPLAIN (COSTS OFF)
SELECT segment, nb_train(label, tokens) FROM agg_docs GROUP BY segment;
CREATE TABLE agg_sorted AS
SELECT segment, nb_train(label, tokens)::text AS m FROM agg_docs GROUP BY segment;
RESET enable_hashagg;

-- both plans give the same models, each equal to the model of its segment
-- trained alone; the segment without a usable row gets NULL
SELECT segment COLLATE "C",
       h.m = s.m AS same_plans,
       h.m = (SELECT nb_train(label, tokens)::text FROM agg_docs d WHERE d.segment = h.segment) AS same_alone,
       h.m IS NULL AS is_null
FROM agg_hashed h FULL JOIN agg_sorted s USING (segment) ORDER BY 1;

-- a Sort above the aggregate copies each model out of the aggregate's state
-- into the sort's memory, since PostgreSQL 17 a bump context where nbc must
-- neither pfree nor repalloc (writing the flat form once did): the sorted
-- models are still those of each segment trained alone
EXPLAIN (COSTS OFF)
SELECT segment, m, nb_info(m) ->> 'documents' AS documents
FROM (SELECT segment, nb_train(label, tokens) AS m FROM agg_docs GROUP BY segment) g
ORDER BY documents, segment COLLATE "C" OFFSET 0;
SELECT segment COLLATE "C", documents,
       m::text = (SELECT nb_train(label, tokens)::text FROM agg_docs d WHERE d.segment = s.segment) AS same_alone
FROM (SELECT segment, m, nb_info(m) ->> 'documents' AS documents
      FROM (SELECT segment, nb_train(label, tokens) AS m FROM agg_docs GROUP BY segment) g
      ORDER BY documents, segment COLLATE "C" OFFSET 0) s;

-- the counts of each segment's model against plain SQL
SELECT segment COLLATE "C", nb_info(m::nb_model) ->> 'documents' AS documents,
       nb_info(m::nb_model) ->> 'tokens' AS tokens,
       (SELECT count(label) FROM agg_docs d WHERE d.segment = h.segment) AS sql_documents,
       (SELECT sum(cardinality(tokens)) FILTER (WHERE label IS NOT NULL)
          FROM agg_docs d WHERE d.segment = h.segment) AS sql_tokens
FROM agg_hashed h ORDER BY 1;

-- GROUP BY the label: one class per model
SELECT c.label COLLATE "C", c.documents, c.prior
FROM (SELECT nb_train(label, tokens) AS m FROM agg_docs GROUP BY label) s, nb_classes(m) AS c
ORDER BY 1;

-- grouping sets: the total row is the model of every row
SELECT segment COLLATE "C", nb_info(nb_train(label, tokens)) ->> 'documents' AS documents
FROM agg_docs GROUP BY ROLLUP (segment) ORDER BY 1 NULLS LAST;
SELECT (SELECT nb_train(label, tokens)::text FROM agg_docs GROUP BY ROLLUP (segment) HAVING segment IS NULL
          OFFSET 0) IS NOT DISTINCT FROM (SELECT nb_train(label, tokens)::text FROM agg_docs) AS same_total;

-- no rows: no groups; without GROUP BY one NULL
SELECT segment, nb_train(label, tokens) FROM agg_docs WHERE false GROUP BY segment;
SELECT nb_train(label, tokens) IS NULL AS is_null FROM agg_docs WHERE false;
SELECT nb_train(label, tokens) IS NULL AS is_null FROM agg_docs WHERE false GROUP BY ();

-- the same aggregate twice in one query (the executor shares one state)
SELECT nb_train(label, tokens)::text = nb_train(label, tokens)::text AS same,
       nb_train(label, tokens)::text = (SELECT nb_train(label, tokens)::text FROM agg_docs) AS same_as_alone
FROM agg_docs;
SELECT count(*) FILTER (WHERE a IS NOT DISTINCT FROM b) AS equal, count(*) AS groups
FROM (SELECT nb_train(label, tokens)::text AS a, nb_train(label, tokens)::text AS b
      FROM agg_docs GROUP BY segment) s;

-- ORDER BY, DISTINCT and FILTER inside the call
SELECT (SELECT nb_train(label, tokens ORDER BY id DESC)::text FROM agg_docs)
     = (SELECT nb_train(label, tokens)::text FROM agg_docs) AS same_ordered,
       (SELECT nb_train(DISTINCT label, tokens)::text FROM agg_docs)
     = (SELECT nb_train(label, tokens)::text FROM (SELECT DISTINCT label, tokens FROM agg_docs) d) AS same_distinct,
       (SELECT nb_train(label, tokens) FILTER (WHERE id % 2 = 0)::text FROM agg_docs)
     = (SELECT nb_train(label, tokens)::text FROM agg_docs WHERE id % 2 = 0) AS same_filter;
-- DISTINCT removes duplicate documents: fewer documents than rows
SELECT nb_info(nb_train(DISTINCT label, tokens)) ->> 'documents' AS distinct_documents,
       (SELECT count(*) FROM (SELECT DISTINCT label, tokens FROM agg_docs WHERE label IS NOT NULL) d) AS sql_count
FROM agg_docs;

--
-- Many groups with little memory: the hash table spills to disk; the result
-- still equals the sorted plan's.  (Each model state is an expanded object of
-- its own memory context.)
--
SET work_mem = '64kB';
SET enable_sort = off;
EXPLAIN (COSTS OFF)
SELECT id % 40 AS g, nb_train(label, tokens) FROM agg_docs GROUP BY 1;
-- it did spill: more than one batch
CREATE FUNCTION agg_hash_batches(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'HashAgg Batches')::int;
END $$;
SELECT agg_hash_batches('SELECT id % 40 AS g, nb_train(label, tokens) FROM agg_docs GROUP BY 1') > 1 AS spilled;
CREATE TABLE agg_spill_h AS SELECT id % 40 AS g, nb_train(label, tokens)::text AS m FROM agg_docs GROUP BY 1;
RESET enable_sort;
SET enable_hashagg = off;
CREATE TABLE agg_spill_s AS SELECT id % 40 AS g, nb_train(label, tokens)::text AS m FROM agg_docs GROUP BY 1;
RESET enable_hashagg;
RESET work_mem;
SELECT count(*) AS groups, count(*) FILTER (WHERE h.m IS NOT DISTINCT FROM s.m) AS equal
FROM agg_spill_h h FULL JOIN agg_spill_s s USING (g);

--
-- Window aggregates
--
-- the running model of row n is the model of rows 1..n
SELECT id, nb_info(m) ->> 'documents' AS documents, nb_info(m) ->> 'tokens' AS tokens
FROM (SELECT id, nb_train(label, tokens) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
      FROM agg_docs WHERE id <= 5) s
ORDER BY id;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE m::text IS NOT DISTINCT FROM
                        (SELECT nb_train(label, tokens)::text FROM agg_docs d2 WHERE d2.id <= d.id)) AS equal
FROM (SELECT id, nb_train(label, tokens) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
      FROM agg_docs) d;
-- scoring with the running model itself: row n with the model of rows
-- 1..n, one object whose contents change from row to row
SELECT count(*) AS rows,
       count(*) FILTER (WHERE p = (SELECT nb_predict_proba(nb_train(label, tokens), d.tokens)
                                   FROM agg_docs d2 WHERE d2.id <= d.id)) AS equal
FROM (SELECT id, tokens,
             nb_predict_proba(nb_train(label, tokens) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
                              tokens) AS p
      FROM agg_docs) d;
-- a model passed on from a subquery to every row of a join, one segment's
-- model after another: as scored from a stored copy
CREATE TABLE agg_seg_models AS
SELECT segment, nb_train(label, tokens) AS m FROM agg_docs GROUP BY segment;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE p IS NOT DISTINCT FROM (SELECT nb_predict_proba(s.m, d.tokens) FROM agg_seg_models s
                                   WHERE s.segment = d.segment)) AS equal
FROM (SELECT d.id, d.segment, d.tokens, nb_predict_proba(t.m, d.tokens) AS p
      FROM (SELECT segment, nb_train(label, tokens) AS m FROM agg_docs GROUP BY segment) t
      JOIN agg_docs d USING (segment)) d;
DROP TABLE agg_seg_models;
-- a running model flattened after every row while its table of document
-- lengths grows (many distinct lengths per class): once a crash, the table
-- grown in the flattening's scratch memory and used after it was freed
CREATE TABLE agg_lengths AS
SELECT i AS id, 'c' || i % 7 AS label, array_fill(('t' || i % 5)::text, ARRAY[1 + i % 97]) AS tokens
FROM generate_series(1, 400) AS i;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE m::text = (SELECT nb_train(label, tokens)::text FROM agg_lengths l2
                                         WHERE l2.id <= l.id)) AS equal
FROM (SELECT id, nb_train(label, tokens) OVER (ORDER BY id) AS m FROM agg_lengths) AS l;
DROP TABLE agg_lengths;
-- a sliding frame (the aggregate restarts for each row: there is no inverse function)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE m::text IS NOT DISTINCT FROM
                        (SELECT nb_train(label, tokens)::text FROM agg_docs d2
                         WHERE d2.id BETWEEN d.id - 2 AND d.id)) AS equal
FROM (SELECT id, nb_train(label, tokens) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m
      FROM agg_docs WHERE id <= 120) d;
-- per partition, whole partition
SELECT count(*) AS rows,
       count(*) FILTER (WHERE m::text IS NOT DISTINCT FROM
                        (SELECT nb_train(label, tokens)::text FROM agg_docs d2 WHERE d2.segment = d.segment)) AS equal
FROM (SELECT id, segment, nb_train(label, tokens) OVER (PARTITION BY segment) AS m FROM agg_docs) d;
-- no row of the 'empty' segment has a label: no model at any row
SELECT id, m IS NULL AS is_null
FROM (SELECT id, nb_train(label, tokens) OVER (ORDER BY id) AS m FROM agg_docs WHERE segment = 'empty') s
ORDER BY id;
-- nb_merge as a window aggregate over per-row models (a row of NULL label has
-- none, NULL: the merge counts none of the 3 rows of the 'empty' segment)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE m::text IS NOT DISTINCT FROM
                        (SELECT nb_train(label, tokens)::text FROM agg_docs d2 WHERE d2.id <= d.id)) AS equal
FROM (SELECT id, nb_merge(one) OVER (ORDER BY id) AS m
      FROM (SELECT id, (SELECT nb_train(label, tokens) FROM agg_docs d1 WHERE d1.id = d0.id) AS one
            FROM agg_docs d0) s0) d;
