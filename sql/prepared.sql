--
-- prepared: models stay prepared for scoring between queries
-- (nbc.prepared_model_cache, bounded by nbc.prepared_model_cache_limit),
-- found by their bytes, so that a changed model is never scored with what
-- was prepared for the old one (see also collision).
--
-- The prepared models are visible as memory contexts named
-- 'nb prepared model'.  Parallel workers keep their own: the queries below
-- run in this backend.
--
SET max_parallel_workers_per_gather = 0;

CREATE TABLE prep_docs (label text, tokens text[]);
INSERT INTO prep_docs VALUES ('a', '{x,x,y}'), ('a', '{x,z}'), ('b', '{y,w,w}');
CREATE TABLE prep_model AS SELECT nb_train(label, tokens) AS m FROM prep_docs;
CREATE VIEW prep_cached AS
  SELECT count(*) AS models FROM pg_backend_memory_contexts WHERE name = 'nb prepared model';

-- the model is prepared by the first query and found by the next
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;
-- (the setting exists once a query has loaded the library, like pg_trgm's)
SHOW nbc.prepared_model_cache;
SELECT nb_predict(m, '{x}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;

-- a changed model (new bytes) is prepared again: {w,w} now goes to a
UPDATE prep_model SET m = (SELECT nb_train(label, tokens) FROM
  (VALUES ('a', '{w,w,w}'::text[]), ('b', '{y}')) AS t(label, tokens));
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;

-- several option sets at once on one model (more than the scorers one
-- prepared model keeps) give what each gives alone
CREATE TABLE prep_options (id int, options jsonb);
INSERT INTO prep_options VALUES
  (1, NULL), (2, '{"alpha": 0.5}'), (3, '{"kind": "bernoulli"}'), (4, '{"kind": "complement"}'),
  (5, '{"alpha": 2}'), (6, '{"kind": "bernoulli", "alpha": 0.25}'), (7, '{"fit_prior": false}'),
  (8, '{"alpha": 3}'), (9, '{"kind": "complement", "alpha": 0.5}'), (10, '{}');
CREATE TABLE prep_alone AS
  SELECT o.id, nb_predict_proba(p.m, '{w,y}'::text[], o.options) AS proba
  FROM prep_model p, prep_options o WHERE o.id = 1;
INSERT INTO prep_alone SELECT 2, nb_predict_proba(m, '{w,y}'::text[], '{"alpha": 0.5}') FROM prep_model;
INSERT INTO prep_alone SELECT 3, nb_predict_proba(m, '{w,y}'::text[], '{"kind": "bernoulli"}') FROM prep_model;
INSERT INTO prep_alone SELECT 4, nb_predict_proba(m, '{w,y}'::text[], '{"kind": "complement"}') FROM prep_model;
INSERT INTO prep_alone SELECT 5, nb_predict_proba(m, '{w,y}'::text[], '{"alpha": 2}') FROM prep_model;
INSERT INTO prep_alone SELECT 6, nb_predict_proba(m, '{w,y}'::text[], '{"kind": "bernoulli", "alpha": 0.25}') FROM prep_model;
INSERT INTO prep_alone SELECT 7, nb_predict_proba(m, '{w,y}'::text[], '{"fit_prior": false}') FROM prep_model;
INSERT INTO prep_alone SELECT 8, nb_predict_proba(m, '{w,y}'::text[], '{"alpha": 3}') FROM prep_model;
INSERT INTO prep_alone SELECT 9, nb_predict_proba(m, '{w,y}'::text[], '{"kind": "complement", "alpha": 0.5}') FROM prep_model;
INSERT INTO prep_alone SELECT 10, nb_predict_proba(m, '{w,y}'::text[], '{}') FROM prep_model;
-- every option set twice, interleaved, in one query
SELECT count(*) AS rows, count(*) FILTER (WHERE a.proba = together.proba) AS same
FROM prep_alone a JOIN (
  SELECT o.id, nb_predict_proba(p.m, '{w,y}'::text[], o.options) AS proba
  FROM prep_model p, prep_options o, generate_series(1, 2) g
) together ON together.id = a.id;

-- a row that fails halfway (a value of the wrong type after a known one)
-- leaves nothing behind for the next query
CREATE TABLE prep_mixed AS SELECT nb_train(label, f) AS m FROM (VALUES
  ('p', '{"hue": "red", "size": "big"}'::jsonb), ('q', '{"hue": "blue", "size": "small"}')) AS t(label, f);
SELECT nb_predict_proba(m, '{"hue": "red", "size": 3}'::jsonb) FROM prep_mixed;
SELECT nb_predict_proba(m, '{"size": "small"}'::jsonb) FROM prep_mixed;
SET nbc.prepared_model_cache = 0;
SELECT nb_predict_proba(m, '{"size": "small"}'::jsonb) FROM prep_mixed;

-- with no memory for them, models are prepared once per query only
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;
RESET nbc.prepared_model_cache;
-- only the SQLSTATE: the range message gained units in PostgreSQL 17
\set VERBOSITY sqlstate
SET nbc.prepared_model_cache = -1;
\set VERBOSITY default

-- the administrator's ceiling: the backend keeps at most
-- min(nbc.prepared_model_cache, nbc.prepared_model_cache_limit)
SHOW nbc.prepared_model_cache_limit;
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;
SET nbc.prepared_model_cache_limit = 0;
SET nbc.prepared_model_cache = '1GB';
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;
RESET nbc.prepared_model_cache_limit;
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SELECT * FROM prep_cached;
RESET nbc.prepared_model_cache;

-- a user who is no superuser sets the cache, not the ceiling
CREATE ROLE regress_nbc_cache_user;
GRANT SELECT ON prep_model TO regress_nbc_cache_user;
SET nbc.prepared_model_cache_limit = 0;
SET ROLE regress_nbc_cache_user;
SET nbc.prepared_model_cache = '1TB';
SET nbc.prepared_model_cache_limit = '1TB';
SELECT set_config('nbc.prepared_model_cache_limit', '1TB', false);
ALTER ROLE regress_nbc_cache_user SET nbc.prepared_model_cache_limit = '1TB';
SHOW nbc.prepared_model_cache_limit;
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
RESET ROLE;
SELECT * FROM prep_cached;
RESET nbc.prepared_model_cache;
RESET nbc.prepared_model_cache_limit;

-- nor before the library is loaded (a placeholder): loading it refuses that value
\c
SET max_parallel_workers_per_gather = 0;
SET ROLE regress_nbc_cache_user;
SET nbc.prepared_model_cache_limit = '1TB';
SELECT nb_predict(m, '{w,w}'::text[]) FROM prep_model;
SHOW nbc.prepared_model_cache_limit;
RESET ROLE;
REVOKE SELECT ON prep_model FROM regress_nbc_cache_user;
DROP ROLE regress_nbc_cache_user;

DROP VIEW prep_cached;
DROP TABLE prep_docs, prep_model, prep_options, prep_alone, prep_mixed;
RESET max_parallel_workers_per_gather;
