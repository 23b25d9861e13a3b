--
-- predict: posteriors of the three event models, checked by hand and against
-- scikit-learn (MultinomialNB, BernoulliNB, ComplementNB(norm=False)) on the
-- same counts.  Probabilities are printed rounded to 12 digits.
--
-- The model:  class a: {x,x,y}, {x,z}     class b: {y,w,w}
--   D_a = 2, D_b = 1;  V = 4 (w, x, y, z)
--   N_xa = 3, N_ya = 1, N_za = 1, T_a = 5;  N_yb = 1, N_wb = 2, T_b = 3
--   d_xa = 2, d_ya = 1, d_za = 1;           d_yb = 1, d_wb = 1
--
CREATE TABLE pred_docs (label text, tokens text[]);
INSERT INTO pred_docs VALUES ('a', '{x,x,y}'), ('a', '{x,z}'), ('b', '{y,w,w}');
CREATE TABLE pred_model AS SELECT nb_train(label, tokens) AS m FROM pred_docs;
SELECT m::jsonb FROM pred_model;

CREATE TABLE pred_cases (id int PRIMARY KEY, doc text[], options jsonb);
INSERT INTO pred_cases VALUES
  -- multinomial, alpha 1 (the default):
  --   {x,y}: a ~ 2/3 * 4/9 * 2/9 = 16/243, b ~ 1/3 * 1/7 * 2/7 = 2/147 -> a = 392/473 = 0.828752642706
  --   {w,z,z}: a ~ 2/3 * 1/9 * (2/9)^2 = 8/2187, b ~ 1/3 * 3/7 * (1/7)^2 = 1/343 -> a = 2744/4931 = 0.556479415940
  --   {}: the prior, 2/3 and 1/3
  (1, '{x,y}', NULL), (2, '{w,z,z}', NULL), (3, '{}', NULL),
  -- multinomial, alpha 0.5:
  --   {x,y}: a ~ 2/3 * 3.5/7 * 1.5/7 = 1/14, b ~ 1/3 * 0.5/5 * 1.5/5 = 1/100 -> a = 50/57 = 0.877192982456
  (4, '{x,y}', '{"alpha": 0.5}'), (5, '{w,z,z}', '{"alpha": 0.5}'), (6, '{}', '{"alpha": 0.5}'),
  -- bernoulli, alpha 1: t_jc = (d_jc + 1) / (D_c + 2)
  --   a: t_w = 1/4, t_x = 3/4, t_y = 1/2, t_z = 1/2;  b: t_w = 2/3, t_x = 1/3, t_y = 2/3, t_z = 1/3
  --   {x,y}: a ~ 2/3 * 3/4 * 1/2 * (1 - 1/4) * (1 - 1/2) = 3/32, b ~ 1/3 * 1/3 * 2/3 * 1/3 * 2/3 = 4/243
  --          -> a = 729/857 = 0.850641773629
  --   {}: a ~ 2/3 * 3/4 * 1/4 * 1/2 * 1/2 = 1/32, b ~ 1/3 * 1/3 * 2/3 * 1/3 * 2/3 = 4/243 -> a = 243/371
  (7, '{x,y}', '{"kind": "bernoulli"}'), (8, '{w,z,z}', '{"kind": "bernoulli"}'), (9, '{}', '{"kind": "bernoulli"}'),
  (10, '{x,y}', '{"kind": "bernoulli", "alpha": 0.5}'), (11, '{w,z,z}', '{"kind": "bernoulli", "alpha": 0.5}'),
  (12, '{}', '{"kind": "bernoulli", "alpha": 0.5}'),
  -- complement, alpha 1: F_w = 2, F_x = 3, F_y = 2, F_z = 1, T = 8; no prior
  --   score_c = sum_j x_j log((T + 4 - T_c) / (F_j + 1 - N_jc))
  --   {x,y}: a: log(7/1) + log(7/2), b: log(9/4) + log(9/2) -> a = (49/2) / (49/2 + 81/8) = 196/277
  --   {}: every score 0 -> 1/2 each
  (13, '{x,y}', '{"kind": "complement"}'), (14, '{w,z,z}', '{"kind": "complement"}'), (15, '{}', '{"kind": "complement"}'),
  (16, '{x,y}', '{"kind": "complement", "alpha": 0.5}'), (17, '{w,z,z}', '{"kind": "complement", "alpha": 0.5}'),
  (18, '{}', '{"kind": "complement", "alpha": 0.5}'),
  -- uniform prior: {x,y} multinomial a ~ 1/2 * 8/81, b ~ 1/2 * 2/49 -> a = 196/277
  (19, '{x,y}', '{"fit_prior": false}'), (20, '{x,y}', '{"kind": "bernoulli", "fit_prior": false}'),
  -- class_prior {a: 1, b: 3} is normalized to 1/4, 3/4: a ~ 1/4 * 8/81, b ~ 3/4 * 2/49 -> a = 392/878 = 196/439
  (21, '{x,y}', '{"class_prior": {"a": 1, "b": 3}}'),
  (22, '{x,y}', '{"kind": "bernoulli", "class_prior": {"a": 1, "b": 3}}'),
  -- complement ignores the prior: same as 13
  (23, '{x,y}', '{"kind": "complement", "class_prior": {"a": 1, "b": 3}}'),
  (24, '{x,y}', '{"kind": "complement", "fit_prior": false}'),
  -- class_prior takes precedence over fit_prior: same as 21
  (25, '{x,y}', '{"class_prior": {"a": 0.25, "b": 0.75}, "fit_prior": true}'),
  (26, '{x,y}', '{"class_prior": {"a": 0.25, "b": 0.75}, "fit_prior": false}'),
  -- a class with prior 0 gets probability 0 whatever the evidence
  (27, '{x,x,x,x}', '{"class_prior": {"a": 0, "b": 1}}'),
  (28, '{}', '{"kind": "bernoulli", "class_prior": {"a": 5, "b": 0}}'),
  -- the defaults spelled out, and {}: same as 1
  (29, '{x,y}', '{"kind": "multinomial", "alpha": 1, "fit_prior": true}'),
  (30, '{x,y}', '{}'),
  -- unknown tokens are ignored: same as 1, 3, 7, 13
  (31, '{x,qq,y,NULL,rr}', NULL), (32, '{qq}', NULL),
  (33, '{qq,x,y}', '{"kind": "bernoulli"}'), (34, '{x,y,qq}', '{"kind": "complement"}'),
  -- order and repetition: a repeated token counts each time (multinomial, complement),
  -- once (bernoulli)
  (35, '{y,x}', NULL), (36, '{x,y,x,x}', NULL), (37, '{x,y,x,x}', '{"kind": "bernoulli"}');
SELECT id, options, nb_predict(m, doc, options) AS predict,
       nbt_round(nb_predict_proba(m, doc, options)) AS proba,
       nbt_round(nb_predict_log_proba(m, doc, options)) AS log_proba
FROM pred_model, pred_cases ORDER BY id;

-- the same cases one by one (a new call site for each, no cache)
SELECT count(*) AS cases,
       count(*) FILTER (WHERE nb_predict_proba((SELECT m FROM pred_model), doc, options)
                              = c.proba) AS same
FROM (SELECT id, doc, options, nb_predict_proba(m, doc, options) AS proba
      FROM pred_model, pred_cases) c;

-- log_proba is the log of proba, and each posterior sums to 1
SELECT count(*) AS cases,
       count(*) FILTER (WHERE ok_log) AS log_ok, count(*) FILTER (WHERE abs(total - 1) < 1e-12) AS sums_to_1
FROM (SELECT id, bool_and(abs(exp((l.value)::float8) - (p.value)::float8) < 1e-14) AS ok_log,
             sum((p.value)::float8) AS total
      FROM pred_model, pred_cases,
           jsonb_each_text(nb_predict_proba(m, doc, options)) AS p,
           jsonb_each_text(nb_predict_log_proba(m, doc, options)) AS l
      WHERE p.key = l.key GROUP BY id) s;

--
-- tsvector features count like text[]: once per position, once if stripped
--
SELECT nb_predict_proba(m, 'x:1,2 y:3'::tsvector) = nb_predict_proba(m, '{x,x,y}'::text[]) AS positions,
       nb_predict_proba(m, strip('x:1,2 y:3'::tsvector)) = nb_predict_proba(m, '{x,y}'::text[]) AS stripped,
       nb_predict_proba(m, 'x:1,2 y:3 qq:4'::tsvector, '{"kind": "complement"}')
         = nb_predict_proba(m, '{x,x,y}'::text[], '{"kind": "complement"}') AS complement,
       nb_predict_log_proba(m, 'x:1,2 y:3'::tsvector, '{"kind": "bernoulli"}')
         = nb_predict_log_proba(m, '{x,y}'::text[], '{"kind": "bernoulli"}') AS bernoulli,
       nb_predict(m, ''::tsvector) AS empty,
       nbt_round(nb_predict_proba(m, 'w:1,2 z'::tsvector)) AS proba
FROM pred_model;

--
-- NULLs: a NULL model or NULL features give NULL; NULL options are the defaults
--
SELECT nb_predict(NULL, '{x}'::text[]) IS NULL AS a,
       nb_predict_proba(NULL::nb_model, '{x}'::text[]) IS NULL AS b,
       nb_predict_log_proba(NULL::nb_model, 'x'::tsvector) IS NULL AS c,
       nb_predict(m, NULL::text[]) IS NULL AS d,
       nb_predict_proba(m, NULL::tsvector) IS NULL AS e,
       nb_predict_log_proba(m, NULL::text[], '{"kind": "bernoulli"}') IS NULL AS f,
       nb_predict_proba(m, '{x,y}'::text[], NULL) = nb_predict_proba(m, '{x,y}'::text[]) AS g
FROM pred_model;
-- with NULL features the options are not even looked at
SELECT nb_predict(m, NULL::text[], '{"kind": "nonsense"}') IS NULL AS is_null FROM pred_model;
-- the literal must be cast: text[] or tsvector
SELECT nb_predict(m, '{x}') FROM pred_model;

--
-- Ties: an exact tie goes to the first label in byte order ('B' < 'a')
--
CREATE TABLE pred_tie AS
SELECT nb_train(l, t) AS m FROM (VALUES ('a', '{p}'::text[]), ('B', '{q}')) AS v(l, t);
SELECT doc, k AS kind, nb_predict(m, doc, jsonb_build_object('kind', k)) AS predict,
       nbt_round(nb_predict_proba(m, doc, jsonb_build_object('kind', k))) AS proba
FROM pred_tie, (VALUES ('{p,q}'::text[]), ('{}'), ('{q}'), ('{p}')) AS d(doc),
     unnest(ARRAY['multinomial', 'bernoulli', 'complement']) AS k
ORDER BY k COLLATE "C", doc::text COLLATE "C";
-- three classes, all tied: the first of 'b', 'c', 'a' in byte order is 'a'
SELECT nb_predict(nb_train(l, t), '{}'::text[]) AS predict
FROM (VALUES ('b', '{p}'::text[]), ('c', '{q}'), ('a', '{r}')) AS v(l, t);
-- features are a one-dimensional array, or '{}': more dimensions are not flattened
SELECT nb_predict(m, '{{p,q}}'::text[]) FROM pred_tie;
SELECT nb_predict_proba(m, '{{p},{q}}'::text[]) FROM pred_tie;
SELECT nb_predict_log_proba(m, '{{{p}}}'::text[], '{"kind": "bernoulli"}') FROM pred_tie;
\set VERBOSITY sqlstate
SELECT nb_predict(m, '{{p,q}}'::text[]) FROM pred_tie;
\set VERBOSITY default
SELECT nb_predict_proba(m, '{}'::text[]) AS empty,
       nb_predict_proba(m, '[0:0]={p}'::text[]) = nb_predict_proba(m, '{p}'::text[]) AS lower_bound_0
FROM pred_tie;

--
-- alpha = 0: the limit of the smoothed posterior as alpha -> 0+.  A class
-- with a zero factor gets probability 0 (JSON null in log_proba); when every
-- class has zero factors, the classes with the fewest share the probability.
--
SELECT doc, k AS kind, nb_predict(m, doc, jsonb_build_object('kind', k, 'alpha', 0)) AS predict,
       nbt_round(nb_predict_proba(m, doc, jsonb_build_object('kind', k, 'alpha', 0))) AS proba,
       nbt_round(nb_predict_log_proba(m, doc, jsonb_build_object('kind', k, 'alpha', 0))) AS log_proba
FROM pred_model,
     (VALUES (1, '{x,y}'::text[]), (2, '{x,w}'), (3, '{x,w,w}'), (4, '{}'), (5, '{w}')) AS d(n, doc),
     unnest(ARRAY['multinomial', 'bernoulli', 'complement']) AS k
ORDER BY k COLLATE "C", n;
-- Hand checks of the rows above (theta = maximum likelihood, alpha = 0):
-- multinomial
--   {x,y}: theta_xb = 0, so b = 0; a = 1
--   {x,w}: both have one zero factor (theta_wa = alpha/(5 + 4 alpha), theta_xb = alpha/(3 + 4 alpha));
--          the rest: a ~ 2/3 * 3/5 * 1/5 = 2/25, b ~ 1/3 * 2/3 * 1/3 = 2/27 -> a = 27/52, b = 25/52
--   {x,w,w}: a has two zero factors, b one -> b = 1
--   {}: the prior 2/3, 1/3;  {w}: theta_wa = 0 -> b = 1
-- bernoulli (t_jc = d_jc / D_c; a: t_x = 1, t_y = t_z = 1/2, t_w = 0; b: t_y = t_w = 1, t_x = t_z = 0)
--   {x,y}: a ~ 2/3 * 1 * 1/2 * (1 - 1/2) * 1 = 1/6, no zero factor; b has two (t_x, 1 - t_w) -> a = 1
--   {x,w}: a has one zero factor (t_w), b two (t_x, 1 - t_y) -> a = 1
--   {}: a has one zero factor (1 - t_x), b two (1 - t_y, 1 - t_w) -> a = 1
--   {w}: a: two (t_w, 1 - t_x); b: one (1 - t_y) -> b = 1
-- complement (score_c = sum_j x_j log((T - T_c) / (F_j - N_jc)); a zero denominator is a
-- factor 1/alpha, which wins):
--   {x,y}: F_x - N_xa = 0 -> a = 1
--   {x,w}: a: x -> 3/alpha, w -> 3/2; b: x -> 5/3, w -> 5/alpha; both have one 1/alpha
--          -> a ~ 3 * 3/2 = 9/2, b ~ 5/3 * 5 = 25/3 -> a = 27/77, b = 50/77
--   {x,w,w}: b has two 1/alpha, a one -> b = 1
--   {}: 1/2 each;  {w}: b = 1
-- alpha = 0 combined with a zero class prior: the excluded class stays at 0
SELECT nbt_round(nb_predict_proba(m, '{x,w}'::text[], '{"alpha": 0, "class_prior": {"a": 0, "b": 1}}')) AS proba,
       nb_predict_log_proba(m, '{x,w}'::text[], '{"alpha": 0, "class_prior": {"a": 0, "b": 1}}') AS log_proba
FROM pred_model;
-- with alpha = 0 the posterior is the maximum-likelihood one when a class has no zero
-- factor: a very small alpha gives nearly the same numbers
SELECT nbt_round(nb_predict_proba(m, '{x,w}'::text[], '{"alpha": 0}'), 6) AS alpha_0,
       nbt_round(nb_predict_proba(m, '{x,w}'::text[], '{"alpha": 1e-9}'), 6) AS alpha_1e_9
FROM pred_model;

--
-- The README example: {cheap,money} is spam
--
SELECT nb_predict(m, '{cheap,money}'::text[]) AS predict,
       nbt_round(nb_predict_proba(m, '{cheap,money}'::text[])) AS proba,
       nbt_round(nb_predict_proba(m, '{lunch,agenda}'::text[])) AS proba_lunch_agenda
FROM (SELECT nb_train(label, tokens) AS m FROM docs) s;
-- (spam: 1/2 * 2/16 * 4/16 = 1/64;  ham: 1/2 * 1/15 * 2/15 = 1/225  ->  spam = 225/289;
--  {lunch,agenda}: ham: 1/2 * (2/15)^2 = 2/225, spam: 1/2 * (1/16)^2 = 1/512 -> ham = 1024/1249)

--
-- Where the model comes from does not matter: a scalar subquery, a CTE and a
-- join with a table of several models (different models on successive rows,
-- options changing from row to row, one model stored out of line in TOAST)
-- all give the same answers.
--
CREATE TABLE pred_models (name text PRIMARY KEY, m nb_model);
ALTER TABLE pred_models ALTER COLUMN m SET STORAGE EXTERNAL;
INSERT INTO pred_models
SELECT 'pred', m FROM pred_model UNION ALL
SELECT 'tie', m FROM pred_tie UNION ALL
SELECT 'readme', nb_train(label, tokens) FROM docs UNION ALL
SELECT 'big', nb_train(CASE WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END,
                       ARRAY['tok' || i, 'tok' || (i / 2), 'x', CASE WHEN i % 3 = 0 THEN 'y' ELSE 'z' END])
FROM generate_series(1, 400) AS i;
-- 'big' is stored out of line (one value in the TOAST table), the others inline
CREATE FUNCTION pred_toasted_values() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                 (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'pred_models'::regclass)) INTO n;
  RETURN n;
END $$;
SELECT pred_toasted_values() AS toasted_values,
       (SELECT octet_length(m::text) > 8000 FROM pred_models WHERE name = 'big') AS big_is_big;
CREATE TABLE pred_queries (id int PRIMARY KEY, name text, doc text[], options jsonb);
INSERT INTO pred_queries
SELECT i, (ARRAY['pred', 'tie', 'readme', 'big', 'pred', 'big'])[1 + i % 6],
       (ARRAY['{x,y}', '{p,q,q}', '{cheap,money,tomorrow}', '{tok7,tok3,x,y}', '{w,z,z}', '{z}'])[1 + (i * 7) % 6]::text[],
       (ARRAY[NULL, '{"kind": "bernoulli"}', '{"kind": "complement", "alpha": 0.5}', '{"fit_prior": false}'])[1 + i % 4]::jsonb
FROM generate_series(1, 60) AS i;
CREATE TABLE pred_by_join AS
SELECT q.id, nb_predict(m.m, q.doc, q.options) AS predict,
       nb_predict_proba(m.m, q.doc, q.options) AS proba,
       nb_predict_log_proba(m.m, q.doc, q.options) AS log_proba
FROM pred_queries q JOIN pred_models m USING (name);
-- the scalar subquery: one model per row, fetched again each time
SELECT count(*) AS rows,
       count(*) FILTER (WHERE j.predict = nb_predict((SELECT m FROM pred_models p WHERE p.name = q.name), q.doc, q.options)
                          AND j.proba = nb_predict_proba((SELECT m FROM pred_models p WHERE p.name = q.name), q.doc, q.options)
                          AND j.log_proba = nb_predict_log_proba((SELECT m FROM pred_models p WHERE p.name = q.name), q.doc, q.options)) AS same
FROM pred_queries q JOIN pred_by_join j USING (id);
-- a CTE, with the model passed through its text form (a new, inline datum)
WITH models AS MATERIALIZED (SELECT name, m::text::nb_model AS m FROM pred_models)
SELECT count(*) AS rows,
       count(*) FILTER (WHERE j.predict = nb_predict(m.m, q.doc, q.options)
                          AND j.proba = nb_predict_proba(m.m, q.doc, q.options)
                          AND j.log_proba = nb_predict_log_proba(m.m, q.doc, q.options)) AS same
FROM pred_queries q JOIN models m USING (name) JOIN pred_by_join j USING (id);
-- each row alone, in its own query, through the model of the query literal
CREATE FUNCTION pred_one(model_text text, doc text[], options jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
BEGIN
  EXECUTE format('SELECT nb_predict_proba(%L::nb_model, $1, $2)', model_text) INTO r USING doc, options;
  RETURN r;
END $$;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE j.proba = pred_one(m.m::text, q.doc, q.options)) AS same
FROM pred_queries q JOIN pred_models m USING (name) JOIN pred_by_join j USING (id);
-- and the answers for the first rows, checked above for 'pred' and 'readme'
SELECT q.id, q.name, q.doc, q.options, j.predict, nbt_round(j.proba) AS proba
FROM pred_queries q JOIN pred_by_join j USING (id) WHERE q.id <= 12 ORDER BY q.id;

-- alpha = 0 when a denominator is itself zero: class b has no tokens, so its
-- multinomial denominator is T_b + alpha V = 2 alpha, and every token has
-- P(t|b) = alpha / (2 alpha) = 1/2 = P(x|a) (N_xa = 1 of T_a = 2): the limit
-- alpha -> 0+ is a tie, for any number of x.  Complement: Z_a = T - T_a = 0 and
-- F_x - N_xa = 0, so a's score is log(V alpha / alpha) = log 2 per x, and b's
-- is log((T - T_b) / F_x) = log(2 / 1): a tie again.
WITH m AS (SELECT nb_train(l, t) m FROM (VALUES ('a', '{x,y}'::text[]), ('b', '{}')) v(l, t))
SELECT k, nb_predict(m, d, jsonb_build_object('kind', k, 'alpha', 0)) AS predicted,
       nbt_round(nb_predict_proba(m, d, jsonb_build_object('kind', k, 'alpha', 0))) AS proba
FROM m, unnest(ARRAY['multinomial', 'complement']) k, (VALUES ('{x}'::text[]), ('{x,x,x}')) docs(d)
ORDER BY k, cardinality(d);
-- Bernoulli with a tiny alpha stays exact.  For {x}: P(x|a) = (1 + alpha) / (1 + 2 alpha),
-- P(y absent|a) = alpha / (1 + 2 alpha); P(x|b) = alpha / (1 + 2 alpha),
-- P(y absent|b) = (1 + alpha) / (1 + 2 alpha): equal products, equal priors, so
-- 1/2 each for every alpha (computing D_c + alpha - d_jc instead of
-- (D_c - d_jc) + alpha loses digits here).
WITH m AS (SELECT nb_train(l, t) m FROM (VALUES ('a', '{x,y}'::text[]), ('b', '{}')) v(l, t))
SELECT nbt_round(nb_predict_proba(m, '{x}'::text[], '{"kind": "bernoulli", "alpha": 1e-12}')) FROM m;
