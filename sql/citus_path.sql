--
-- citus_path: the way Citus runs a distributed aggregate, emulated on one node.
-- Each shard computes a partial state (the aggregate's transition value, an
-- nb_model), which travels to the coordinator in its text form and is parsed
-- back there (::text::nb_model), then the coordinator combines the states
-- with the combine function, nb_merge.  The result must be exactly the model
-- trained on the whole table, with the same predictions.
--

-- What Citus needs from the catalog: a combine function, and a transition
-- type that is not internal (so no serial/deserial functions are needed and
-- the state has a text form); the aggregates of models only (nb_metrics's
-- state is internal, with serial/deserial functions for parallel workers;
-- nb_grid_metrics's is internal and not partial)
SELECT aggfnoid::regprocedure::text COLLATE "C" AS aggregate, aggcombinefn, aggtranstype::regtype,
       aggserialfn, aggdeserialfn, aggfinalfn, agginitval IS NULL AS no_initval
FROM pg_aggregate WHERE aggfnoid::regprocedure::text LIKE 'nb\_%' AND aggfnoid::regproc::text NOT LIKE '%nb\_metrics'
  AND aggfnoid::regproc::text NOT LIKE '%nb\_grid\_metrics'
ORDER BY 1;
-- (aggfnoid::text LIKE 'nb_%' finds nothing: regproc prints an overloaded name
-- qualified, as public.nb_train)

-- a "distributed" table: 4 shards by id % 4
CREATE TABLE citus_docs AS
SELECT i AS id, CASE WHEN i % 7 < 3 THEN 'sports' WHEN i % 7 < 5 THEN 'politics' ELSE 'tech' END AS label,
       ARRAY(SELECT 'w' || ((i * j * 3 + j) % 41) FROM generate_series(1, 2 + i % 5) AS j) AS tokens,
       to_tsvector('simple', 'v' || (i % 13) || ' v' || (i % 17) || ' v' || (i % 13)) AS tsv
FROM generate_series(1, 1000) AS i;
CREATE TABLE citus_whole AS
SELECT nb_train(label, tokens) AS arr, nb_train(label, tsv) AS tsv,
       nb_train(label, tokens, (id % 3)::float8) AS weighted
FROM citus_docs;

-- the partial states of the shards, shipped as text
CREATE TABLE citus_partials AS
SELECT shard, nb_train(label, tokens)::text AS arr, nb_train(label, tsv)::text AS tsv,
       nb_train(label, tokens, (id % 3)::float8)::text AS weighted
FROM citus_docs, LATERAL (SELECT id % 4 AS shard) s
GROUP BY shard;
-- a shard with no rows sends NULL
INSERT INTO citus_partials VALUES (4, NULL, NULL, NULL);
SELECT shard, nb_info(arr::nb_model) ->> 'documents' AS documents FROM citus_partials ORDER BY shard;

-- the coordinator: parse, combine with the aggregate nb_merge
SELECT nb_merge(arr::nb_model)::text = (SELECT arr::text FROM citus_whole) AS same_array_model,
       nb_merge(tsv::nb_model)::text = (SELECT tsv::text FROM citus_whole) AS same_tsvector_model,
       nb_merge(weighted::nb_model)::text = (SELECT weighted::text FROM citus_whole) AS same_weighted_model
FROM citus_partials;
-- in any order of the shards
SELECT nb_merge(arr::nb_model ORDER BY shard DESC)::text = (SELECT arr::text FROM citus_whole) AS same_reversed
FROM citus_partials;
-- or pairwise with the combine function itself
SELECT nb_merge(nb_merge(p0, p1), nb_merge(nb_merge(p2, p3), p4))::text
         = (SELECT arr::text FROM citus_whole) AS same_pairwise
FROM (SELECT max(arr) FILTER (WHERE shard = 0)::nb_model AS p0, max(arr) FILTER (WHERE shard = 1)::nb_model AS p1,
             max(arr) FILTER (WHERE shard = 2)::nb_model AS p2, max(arr) FILTER (WHERE shard = 3)::nb_model AS p3,
             max(arr) FILTER (WHERE shard = 4)::nb_model AS p4
      FROM citus_partials) s;
-- the text a shard sends is exactly what the shard's model prints
SELECT count(*) AS shards,
       count(*) FILTER (WHERE p.arr = (SELECT nb_train(label, tokens)::text FROM citus_docs d
                                       WHERE d.id % 4 = p.shard)) AS same_text
FROM citus_partials p WHERE shard < 4;

-- identical predictions from the combined model and from the whole one
SELECT count(*) AS documents,
       count(*) FILTER (WHERE nb_predict_proba(c.m, d.tokens) = nb_predict_proba(w.arr, d.tokens)
                          AND nb_predict_log_proba(c.m, d.tokens, '{"kind": "complement"}')
                              = nb_predict_log_proba(w.arr, d.tokens, '{"kind": "complement"}')
                          AND nb_predict(c.m, d.tokens, '{"kind": "bernoulli", "alpha": 0.5}')
                              = nb_predict(w.arr, d.tokens, '{"kind": "bernoulli", "alpha": 0.5}')) AS same
FROM citus_docs d, citus_whole w, (SELECT nb_merge(arr::nb_model) AS m FROM citus_partials) c;

-- a two-level tree (shards -> per-node partials -> coordinator) is the same too
SELECT nb_merge(node_state::nb_model)::text = (SELECT arr::text FROM citus_whole) AS same_two_level
FROM (SELECT shard % 2 AS node, nb_merge(arr::nb_model)::text AS node_state
      FROM citus_partials GROUP BY shard % 2) s;

