--
-- parallel: partial aggregation in parallel workers, combined with nb_merge,
-- gives exactly the serial model.  All counts are integers, so every sum is
-- exact in any order and the models must be byte-identical (::text equality).
--
CREATE TABLE par_docs AS
SELECT i AS id, 'c' || (i % 3) AS label,
       ARRAY['t' || (i % 7), 't' || (i % 11), 't' || ((i * i) % 13), 'u' || (i % 101)] AS tokens,
       to_tsvector('simple', 'w' || (i % 5) || ' w' || (i % 9) || ' w' || (i % 5)) AS tsv,
       jsonb_build_object('c', 'v' || (i % 4), 'b', i % 5 = 0, 'g', (i % 17) + (i % 3) * 0.25,
                          'bag', jsonb_build_array('t' || (i % 7), 't' || (i % 11))) AS f,
       ARRAY[(i % 13)::float8, ((i * i) % 29)::float8 / 3] AS v
FROM generate_series(1, 20000) AS i;
ANALYZE par_docs;

--
-- Serial
--
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT nb_train(label, tokens) FROM par_docs;
CREATE TABLE par_serial AS
SELECT nb_train(label, tokens) AS arr, nb_train(label, tsv) AS tsv,
       nb_train(label, tokens, (1 + id % 3)::float8) AS weighted,
       nb_train(label, f - 'g') AS counts, nb_train(label, f) AS mixed, nb_train(label, v) AS vec
FROM par_docs;
CREATE TABLE par_serial_groups AS
SELECT label, nb_train(label, tokens) AS m FROM par_docs GROUP BY label;
CREATE TABLE par_pred_serial AS
SELECT id, nb_predict(s.arr, d.tokens) AS label,
       nb_predict_proba(s.arr, d.tokens, '{"kind": "bernoulli"}') AS proba
FROM par_docs d, par_serial s;
ANALYZE par_serial;
ANALYZE par_serial_groups;
ANALYZE par_pred_serial;

-- the serial model against plain SQL: 20000 documents, 80000 tokens
SELECT nb_info(arr) - 'bytes' AS info,
       (SELECT count(DISTINCT t) FROM par_docs, unnest(tokens) t) AS sql_vocabulary,
       (SELECT count(DISTINCT (t, label)) FROM par_docs, unnest(tokens) t) AS sql_entries
FROM par_serial;
-- tsvector: 'wA wB wA' counts wA twice (two positions), 3 * 20000 tokens in all
SELECT nb_info(tsv) ->> 'tokens' AS tokens, nb_info(tsv) ->> 'vocabulary' AS vocabulary FROM par_serial;
-- weights 1, 2, 3 in turn: 20000 / 3 rows of each, documents 6666*1 + 6667*2 + 6667*3 = 40001
SELECT nb_info(weighted) ->> 'documents' AS documents, nb_info(weighted) ->> 'tokens' AS tokens FROM par_serial;

--
-- Parallel: forced, partial aggregates in the workers only
--
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

EXPLAIN (COSTS OFF) SELECT nb_train(label, tokens) FROM par_docs;
SELECT nb_train(label, tokens)::text = (SELECT arr::text FROM par_serial) AS same_array_model,
       nb_train(label, tsv)::text = (SELECT tsv::text FROM par_serial) AS same_tsvector_model,
       nb_train(label, tokens, (1 + id % 3)::float8)::text
         = (SELECT weighted::text FROM par_serial) AS same_weighted_model
FROM par_docs;
-- progress: a worker's rows are a share of the count, so only the leader
-- reports, and here it reads none: no NOTICE even at interval 0
SET nbc.progress = on;
SET nbc.progress_interval = 0;
SELECT nb_train(label, tokens) IS NOT NULL AS trained FROM par_docs;
RESET nbc.progress_interval;
RESET nbc.progress;
-- jsonb features: counts are exact in any order; Gaussian moments are merged
-- by Chan's formula, which rounds differently, so compare probabilities
SELECT nb_train(label, f - 'g')::text = (SELECT counts::text FROM par_serial) AS same_count_model
FROM par_docs;
CREATE TABLE par_parallel_mixed AS SELECT nb_train(label, f) AS mixed, nb_train(label, v) AS vec FROM par_docs;
SELECT max(abs((nb_predict_proba(p.mixed, d.f) ->> 'c1')::float8 - (nb_predict_proba(s.mixed, d.f) ->> 'c1')::float8)) < 1e-12 AS same_mixed,
       max(abs((nb_predict_proba(p.vec, d.v) ->> 'c1')::float8 - (nb_predict_proba(s.vec, d.v) ->> 'c1')::float8)) < 1e-12 AS same_vector
FROM par_docs d, par_serial s, par_parallel_mixed p WHERE d.id % 50 = 0;

-- GROUP BY in parallel: Partial HashAggregate, then Finalize
EXPLAIN (COSTS OFF) SELECT label, nb_train(label, tokens) FROM par_docs GROUP BY label;
SELECT label COLLATE "C", m::text = (SELECT m::text FROM par_serial_groups g WHERE g.label = p.label) AS same
FROM (SELECT label, nb_train(label, tokens) AS m FROM par_docs GROUP BY label) p
ORDER BY 1;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT label, nb_train(label, tokens) FROM par_docs GROUP BY label;
SELECT label COLLATE "C", m::text = (SELECT m::text FROM par_serial_groups g WHERE g.label = p.label) AS same
FROM (SELECT label, nb_train(label, tokens) AS m FROM par_docs GROUP BY label) p
ORDER BY 1;
RESET enable_hashagg;

-- The leader taking part, short documents in 20 classes: a token's entries
-- in the classes kept in the pair table are sorted as the model is written,
-- inline when there are at most 16 of them, else by the library sort: both
-- happen here (tokens in 9 to 20 classes).  Still exactly the serial model.
CREATE TABLE par_short AS
SELECT i AS id, 'k' || lpad((i % 20)::text, 2, '0') AS label,
       ARRAY['s' || (i % 23), 's' || ((i * 7) % 97), 's' || ((i * i) % 389), 'r' || (i % 3001)] AS tokens
FROM generate_series(1, 30000) AS i;
ANALYZE par_short;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE par_short_serial AS SELECT nb_train(label, tokens) AS m FROM par_short;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
EXPLAIN (COSTS OFF) SELECT nb_train(label, tokens) FROM par_short;
SELECT nb_train(label, tokens)::text = (SELECT m::text FROM par_short_serial) AS same_model
FROM par_short;
-- the data as meant, by SQL: the model's entries, and the fewest and most classes of a token
SELECT (SELECT count(DISTINCT (t, label)) FROM par_short, unnest(tokens) t)
         = (SELECT (nb_info(m) ->> 'entries')::bigint FROM par_short_serial) AS same_entries,
       min(n) AS fewest_classes, max(n) AS most_classes
FROM (SELECT count(DISTINCT label) AS n FROM par_short, unnest(tokens) t GROUP BY t) c;
SET parallel_leader_participation = off;

-- nb_merge(nb_model) in parallel over a table of 500 partial models (with NULLs)
SET max_parallel_workers_per_gather = 0;
CREATE TABLE par_models AS
SELECT id % 500 AS g, nb_train(label, tokens) AS m FROM par_docs GROUP BY 1;
INSERT INTO par_models SELECT 1000 + g, NULL FROM generate_series(1, 50) AS g;
ANALYZE par_models;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT nb_merge(m) FROM par_models;
SELECT nb_merge(m)::text = (SELECT arr::text FROM par_serial) AS same_model FROM par_models;

-- prediction in parallel workers (the model is an InitPlan parameter passed to
-- the workers): the same labels and probabilities as serially, for all 20000.
-- The plan with each reference to an InitPlan's result written <initplan>:
-- PostgreSQL 17 changed how EXPLAIN prints them ($0 before, (InitPlan 1).col1
-- since, and no "Params Evaluated" line)
CREATE FUNCTION par_plan(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    CONTINUE WHEN line ~ '^\s*Params Evaluated:';
    line := regexp_replace(line, '(InitPlan \d+) \(returns \$\d+\)', '\1');
    RETURN NEXT regexp_replace(line, '\$\d+|\(InitPlan \d+\)\.col\d+', '<initplan>', 'g');
  END LOOP;
END $$;
SELECT par_plan($$
SELECT count(*) AS same FROM par_docs d JOIN par_pred_serial s USING (id)
WHERE nb_predict((SELECT arr FROM par_serial), d.tokens) = s.label
  AND nb_predict_proba((SELECT arr FROM par_serial), d.tokens, '{"kind": "bernoulli"}') = s.proba$$);
SELECT count(*) AS same FROM par_docs d JOIN par_pred_serial s USING (id)
WHERE nb_predict((SELECT arr FROM par_serial), d.tokens) = s.label
  AND nb_predict_proba((SELECT arr FROM par_serial), d.tokens, '{"kind": "bernoulli"}') = s.proba;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
