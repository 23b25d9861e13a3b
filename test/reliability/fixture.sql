-- Models every nbc version can make (token bags from text[] and tsvector),
-- for the dump/restore and update tests.  psql variables: scale (rows),
-- vocab (distinct tokens).  Deterministic: no random().
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rel_docs (id int PRIMARY KEY, label text NOT NULL, tokens text[] NOT NULL, weight float8 NOT NULL);
-- labels and tokens with commas, quotes, tabs, non-ASCII and the empty string
INSERT INTO rel_docs
SELECT i, (ARRAY['spam', 'ham', 'eggs', 'späm', 'a,b "quoted"'])[1 + i % 5],
	ARRAY(SELECT 'w' || ((i::bigint * 7919 + j * 104729) % :vocab) FROM generate_series(1, 1 + i % 13) j)
		|| CASE WHEN i % 17 = 0 THEN ARRAY['naïve', E'tab\there', 'quote''s', '{brace}', ''] ELSE '{}' END,
	1 + (i % 7) * 0.25
FROM generate_series(1, :scale) i;
CREATE TABLE rel_models (name text PRIMARY KEY, kind text NOT NULL, m nb_model);
INSERT INTO rel_models
SELECT 'tokens', 'tokens', nb_train(label, tokens) FROM rel_docs
UNION ALL
SELECT 'tokens_weighted', 'tokens', nb_train(label, tokens, weight ORDER BY id) FROM rel_docs
UNION ALL
SELECT 'tsvector', 'tsvector', nb_train(label, to_tsvector('simple', array_to_string(tokens, ' '))) FROM rel_docs
UNION ALL
SELECT 'merged', 'tokens', nb_merge(a, b)
FROM (SELECT nb_train(label, tokens) FILTER (WHERE id % 2 = 0) a,
	nb_train(label, tokens) FILTER (WHERE id % 2 = 1) b FROM rel_docs) s
UNION ALL
SELECT 'one_class', 'tokens', nb_train('only', ARRAY['x'])
UNION ALL
SELECT 'null', 'tokens', NULL;
-- an array of models, a materialized view and an index on a prediction:
-- restored through array_in/out, a REFRESH and an index build
CREATE TABLE rel_model_arrays (id int PRIMARY KEY, ms nb_model[]);
INSERT INTO rel_model_arrays SELECT 1, array_agg(m ORDER BY name) FROM rel_models;
CREATE MATERIALIZED VIEW rel_per_label AS
SELECT label, nb_train(label, tokens) AS m FROM rel_docs GROUP BY label;
CREATE INDEX rel_models_predicted ON rel_models (nb_predict(m, ARRAY['w1', 'w2', 'w3'])) WHERE kind = 'tokens';
