--
-- mixed: categorical, Gaussian, boolean and bag features from jsonb, and
-- Gaussian features from float8[].  Every expected probability is computed
-- here in SQL from the formulas (Murphy 3.5; scikit-learn's CategoricalNB,
-- GaussianNB and BernoulliNB), independently of nbc, and compared to 1e-12.
--
-- The training rows (a small weather table):
--   yes  sunny     20  false
--   yes  overcast  22  true
--   yes  rainy     18  false
--   no   sunny     30  true
--   no   sunny     28  windy null (missing)
--   no   rainy     temp and windy absent (missing)
--
CREATE TABLE mx_rows (id int, label text, f jsonb);
INSERT INTO mx_rows VALUES
  (1, 'yes', '{"outlook": "sunny", "temp": 20, "windy": false}'),
  (2, 'yes', '{"outlook": "overcast", "temp": 22, "windy": true}'),
  (3, 'yes', '{"outlook": "rainy", "temp": 18, "windy": false}'),
  (4, 'no', '{"outlook": "sunny", "temp": 30, "windy": true}'),
  (5, 'no', '{"outlook": "sunny", "temp": 28, "windy": null}'),
  (6, 'no', '{"outlook": "rainy"}');
CREATE TABLE mx_model AS SELECT nb_train(label, f) AS m FROM mx_rows;

-- what the model holds
SELECT nb_info(m) - 'bytes' AS info FROM mx_model;
SELECT jsonb_pretty(m::jsonb) FROM mx_model;
SELECT * FROM nb_classes((SELECT m FROM mx_model));

-- Independent statistics, available-case: per class, over the rows that have the feature.
CREATE VIEW mx_gauss AS
SELECT label, avg((f->>'temp')::float8) AS mean, var_pop((f->>'temp')::float8) AS var
FROM mx_rows WHERE f ? 'temp' GROUP BY label;
-- variance floor: 1e-9 times the largest variance of a Gaussian feature over all rows
CREATE VIEW mx_eps AS
SELECT 1e-9 * var_pop((f->>'temp')::float8) AS eps FROM mx_rows WHERE f ? 'temp';

-- log p(x, c) for one row of (outlook, temp, windy), any of them NULL = missing, alpha a
CREATE FUNCTION mx_joint(label text, outlook text, temp float8, windy bool, a float8)
RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT ln((SELECT count(*) FROM mx_rows WHERE mx_rows.label = $1)::float8 / (SELECT count(*) FROM mx_rows))
    + coalesce((SELECT ln((count(*) FILTER (WHERE f->>'outlook' = $2) + a)
                         / (count(*) + a * (SELECT count(DISTINCT f->>'outlook') FROM mx_rows)))
                FROM mx_rows WHERE mx_rows.label = $1 AND f ? 'outlook' AND $2 IS NOT NULL), 0)
    + coalesce((SELECT -0.5 * ln(2 * pi() * (g.var + e.eps)) - ($3 - g.mean) ^ 2 / (2 * (g.var + e.eps))
                FROM mx_gauss g, mx_eps e WHERE g.label = $1 AND $3 IS NOT NULL), 0)
    + coalesce((SELECT ln(((count(*) FILTER (WHERE (f->>'windy')::bool = $4)) + a)
                         / (count(*) + 2 * a))
                FROM mx_rows WHERE mx_rows.label = $1 AND jsonb_typeof(f->'windy') = 'boolean'
                  AND $4 IS NOT NULL), 0)
$$;

CREATE TABLE mx_cases (id int, outlook text, temp float8, windy bool, a float8);
INSERT INTO mx_cases VALUES
  (1, 'sunny', 25, true, 1), (2, 'overcast', 19, false, 1), (3, 'rainy', 29.5, NULL, 1),
  (4, NULL, 21, NULL, 1), (5, 'sunny', NULL, NULL, 1), (6, NULL, NULL, true, 1),
  (7, NULL, NULL, NULL, 1),
  -- a value never seen in training gets a / (N_jc + a K_j)
  (8, 'snowy', 24, false, 1),
  (9, 'sunny', 25, true, 0.5), (10, 'overcast', 19, false, 0.01);

CREATE VIEW mx_expected AS
SELECT id, label, exp(j - jmax - ln(sum(exp(j - jmax)) OVER (PARTITION BY id))) AS p
FROM (SELECT id, label, j, max(j) OVER (PARTITION BY id) AS jmax
      FROM (SELECT id, label, mx_joint(label, outlook, temp, windy, a) AS j
            FROM mx_cases, (VALUES ('yes'), ('no')) l(label)) s) t;

CREATE VIEW mx_doc AS
SELECT id, jsonb_strip_nulls(jsonb_build_object('outlook', outlook, 'temp', temp, 'windy', windy)) AS doc,
       jsonb_build_object('alpha', a) AS options
FROM mx_cases;

SELECT c.id, c.doc, round((nb_predict_proba(m, c.doc, c.options) ->> 'yes')::numeric, 12) AS p_yes,
       nb_predict(m, c.doc, c.options) AS predicted,
       abs((nb_predict_proba(m, c.doc, c.options) ->> 'yes')::float8 - e.p) < 1e-12 AS matches
FROM mx_doc c JOIN mx_expected e ON e.id = c.id AND e.label = 'yes', mx_model
ORDER BY c.id;

-- log posteriors too
SELECT c.id, abs((nb_predict_log_proba(m, c.doc, c.options) ->> 'no')::float8 - ln(e.p)) < 1e-12 AS matches
FROM mx_doc c JOIN mx_expected e ON e.id = c.id AND e.label = 'no', mx_model
ORDER BY c.id;

-- JSON null and an absent key are the same (missing); so is a key the model does not know
SELECT nb_predict_proba(m, '{"outlook": "sunny", "temp": null}'::jsonb) = nb_predict_proba(m, '{"outlook": "sunny"}'::jsonb) AS null_is_missing,
       nb_predict_proba(m, '{"outlook": "sunny", "humidity": 80}'::jsonb) = nb_predict_proba(m, '{"outlook": "sunny"}'::jsonb) AS unknown_key_ignored
FROM mx_model;

-- var_smoothing: the floor scales with it
SELECT abs((nb_predict_proba(m, '{"temp": 25}'::jsonb, '{"var_smoothing": 0.5}') ->> 'yes')::float8
  - (SELECT 1 / (1 + exp(
      (-0.5 * ln(2 * pi() * (n.var + 0.5 * 21.44)) - (25 - n.mean) ^ 2 / (2 * (n.var + 0.5 * 21.44)))
    - (-0.5 * ln(2 * pi() * (y.var + 0.5 * 21.44)) - (25 - y.mean) ^ 2 / (2 * (y.var + 0.5 * 21.44)))))
     FROM mx_gauss y, mx_gauss n WHERE y.label = 'yes' AND n.label = 'no')) < 1e-12 AS var_smoothing_matches
FROM mx_model;
SELECT var_pop((f->>'temp')::float8) AS largest_variance FROM mx_rows;

-- fit_prior and class_prior apply to mixed models as to text
SELECT nb_predict_proba(m, '{}'::jsonb) AS prior, nb_predict_proba(m, '{}'::jsonb, '{"class_prior": {"yes": 1, "no": 3}}') AS given
FROM mx_model;

-- weights: weight 2 is the row twice, for every type of feature
-- (var_smoothing 0: the floor uses the spread of the rows, which duplicating changes)
SELECT abs((nb_predict_proba(w, d, '{"var_smoothing": 0}') ->> 'yes')::float8
         - (nb_predict_proba(u, d, '{"var_smoothing": 0}') ->> 'yes')::float8) < 1e-12 AS weight_is_repetition
FROM (SELECT nb_train(label, f, CASE WHEN id = 2 THEN 2 ELSE 1 END) AS w FROM mx_rows) a,
     (SELECT nb_train(label, f) AS u FROM (SELECT * FROM mx_rows UNION ALL SELECT * FROM mx_rows WHERE id = 2) r) b,
     (VALUES ('{"outlook": "overcast", "temp": 21, "windy": true}'::jsonb), ('{"temp": 26}')) d(d);

-- bags under a key: arrays count each token once per occurrence, objects give counts
CREATE TABLE mx_bags (label text, f jsonb);
INSERT INTO mx_bags VALUES
  ('a', '{"subject": ["x", "x", "y"], "body": {"y": 2, "z": 1}}'),
  ('a', '{"subject": ["x", "z"]}'),
  ('b', '{"subject": ["y", "w", "w"], "body": {"w": 0.5, "q": null, "r": 0}}');
SELECT jsonb_pretty(nb_train(label, f)::jsonb) FROM mx_bags;
-- the bag "subject" alone is the text model of the same tokens (predict.sql's model)
SELECT nb_predict_proba(j, '{"subject": ["x", "y"]}'::jsonb) = nb_predict_proba(t, ARRAY['x', 'y']) AS same_as_text,
       nb_predict_proba(j, '{"subject": ["x", "y"]}'::jsonb, '{"kind": "bernoulli"}')
         = nb_predict_proba(t, ARRAY['x', 'y'], '{"kind": "bernoulli"}') AS same_as_text_bernoulli
FROM (SELECT nb_train(label, jsonb_build_object('subject', f->'subject')) AS j FROM mx_bags) a,
     (SELECT nb_train(label, ARRAY(SELECT jsonb_array_elements_text(f->'subject'))) AS t FROM mx_bags) b;
-- text[] rows are the bag named "": both inputs train and score the same feature (the
-- jsonb model's counts are the text[] model's; it knows it is a model of jsonb rows too)
SELECT nb_train(label, jsonb_build_object('', f->'subject'))::jsonb - 'format_version' = nb_train(label, ARRAY(SELECT jsonb_array_elements_text(f->'subject')))::jsonb - 'format_version' AS same_model
FROM mx_bags;
SELECT nb_predict(nb_train(label, ARRAY(SELECT jsonb_array_elements_text(f->'subject'))), '{"": ["w"]}'::jsonb) FROM mx_bags;
-- two bags: each with its own vocabulary, totals and (bernoulli) documents
SELECT nb_predict_proba(m, '{"subject": ["x"], "body": ["y"]}'::jsonb) AS multinomial,
       nb_predict_proba(m, '{"subject": ["x"], "body": ["y"]}'::jsonb, '{"kind": "bernoulli"}') AS bernoulli,
       nb_predict_proba(m, '{"subject": ["x"], "body": ["y"]}'::jsonb, '{"kind": "complement"}') AS complement
FROM (SELECT nb_train(label, f) AS m FROM mx_bags) s;
-- by hand, multinomial: subject as in predict.sql (a ~ 2/3 * 4/9, b ~ 1/3 * 1/7 for x);
-- body: V = 4 (q never counted, r count 0: not items) -> V = 3 (w, y, z);
-- a: T = 3, (2 + 1) / (3 + 3) = 1/2; b: T = 0.5, (0 + 1) / (0.5 + 3) = 2/7
SELECT round((2.0/3 * 4/9 * 1/2) / (2.0/3 * 4/9 * 1/2 + 1.0/3 * 1/7 * 2/7), 12) AS by_hand;

-- float8[]: Gaussian features named "1", "2", ...; NULL elements are missing
CREATE TABLE mx_vec (label text, v float8[]);
INSERT INTO mx_vec VALUES ('p', '{1, 10}'), ('p', '{2, 12}'), ('p', '{3, NULL}'), ('q', '{7, 20}'), ('q', '{9, 24}');
SELECT jsonb_pretty(nb_train(label, v)::jsonb) FROM mx_vec;
SELECT round((nb_predict_proba(nb_train(label, v), '{4, 15}'::float8[]) ->> 'p')::numeric, 12) AS p,
       round((nb_predict_proba(nb_train(label, v), '{4, NULL}'::float8[]) ->> 'p')::numeric, 12) AS p_missing,
       nb_predict_proba(nb_train(label, v), '{4, 15}'::float8[]) = nb_predict_proba(nb_train(label, v), '{"1": 4, "2": 15}'::jsonb) AS same_as_jsonb
FROM mx_vec;
-- by hand: feature 1: p mean 2 var 2/3, q mean 8 var 1; feature 2: p mean 11 var 1, q mean 22 var 4;
-- floor 1e-9 * max(var_pop(1, 2, 3, 7, 9), var_pop(10, 12, 20, 24)) = 1e-9 * 32.75
WITH g(c, prior, m1, v1, m2, v2) AS (VALUES
  ('p', 3.0/5, 2.0, 2.0/3 + 32.75e-9, 11.0, 1 + 32.75e-9), ('q', 2.0/5, 8.0, 1 + 32.75e-9, 22.0, 4 + 32.75e-9)),
j AS (SELECT c, ln(prior) - 0.5 * ln(2 * pi() * v1) - (4 - m1) ^ 2 / (2 * v1)
                - 0.5 * ln(2 * pi() * v2) - (15 - m2) ^ 2 / (2 * v2) AS j FROM g)
SELECT round(((SELECT exp(j) FROM j WHERE c = 'p') / (SELECT sum(exp(j)) FROM j))::numeric, 12) AS by_hand;
SELECT var_pop(x) FROM (VALUES (10), (12), (20), (24)) v(x);

-- constant features do not produce NaN, even when every feature is constant
SELECT nb_predict_proba(nb_train(label, v), '{5, 5}'::float8[]) AS all_constant,
       nb_predict_proba(nb_train(label, v), '{1e300, -1e300}'::float8[]) AS far_away
FROM (VALUES ('a', '{5, 5}'::float8[]), ('b', '{5, 5}'), ('b', '{5, 5}')) t(label, v);
SELECT nb_predict_proba(nb_train(label, v), '{5, 3}'::float8[]) AS one_constant,
       nb_predict_proba(nb_train(label, v), '{1e300, 3}'::float8[]) AS far_away
FROM (VALUES ('a', '{5, 1}'::float8[]), ('b', '{5, 2}'), ('b', '{5, 4}')) t(label, v);

-- a class without any value of a feature scores it with the pooled statistics
SELECT nb_predict_proba(nb_train(label, f), '{"x": 3}'::jsonb)
FROM (VALUES ('a', '{"x": 1}'::jsonb), ('a', '{"x": 3}'), ('b', '{"y": "u"}')) t(label, f);

-- mutual information: categorical and boolean features from their counts,
-- Gaussian features from the class normals, bag tokens as key:token
SELECT feature, round(mutual_info::numeric, 12) AS mutual_info FROM nb_mutual_info((SELECT m FROM mx_model));
-- temp by hand: H(X) - sum_c pi_c log(2 pi e s2_c) / 2, H(X) of the mixture of the
-- class normals (variance + eps) by the trapezoidal rule, steps of 1/64 of the
-- smallest deviation over 40 deviations either side, densities below e^-700 (which
-- exp() refuses) taken as e^-700 (test/parity/mixed.py's
-- 40-digit mpmath integration gives 0.6720464356617418)
WITH g AS (SELECT label, mean, var + eps AS var,
                  (SELECT count(*) FROM mx_rows r WHERE r.label = mx_gauss.label AND r.f ? 'temp')::float8
                  / (SELECT count(*) FROM mx_rows WHERE f ? 'temp') AS pi
           FROM mx_gauss, mx_eps),
     grid AS (SELECT min(mean - 40 * sqrt(var)) AS lo, max(mean + 40 * sqrt(var)) AS hi,
                     min(sqrt(var)) / 64 AS h FROM g),
     p AS (SELECT grid.h, sum(g.pi * exp(greatest(-((grid.lo + i * grid.h - g.mean) ^ 2) / (2 * g.var), -700))
                              / sqrt(2 * pi() * g.var)) AS p
           FROM grid, generate_series(0, ceil((grid.hi - grid.lo) / grid.h)::int) AS i, g
           GROUP BY i, grid.h)
SELECT round(((SELECT sum(-p * ln(p) * h) FROM p WHERE p > 0)
              - (SELECT sum(pi * ln(2 * pi() * exp(1.0) * var) / 2) FROM g))::numeric, 12) AS temp_by_hand;
-- by hand, plug-in over the rows with the feature
WITH t AS (SELECT f->>'outlook' AS v, label, count(*)::float8 AS n FROM mx_rows WHERE f ? 'outlook' GROUP BY 1, 2),
     tot AS (SELECT sum(n) AS n FROM t),
     pv AS (SELECT v, sum(n) AS n FROM t GROUP BY v),
     pc AS (SELECT label, sum(n) AS n FROM t GROUP BY label)
SELECT round(sum(t.n / tot.n * ln(t.n * tot.n / (pv.n * pc.n)))::numeric, 12) AS outlook_by_hand
FROM t JOIN pv USING (v) JOIN pc USING (label), tot;
WITH t AS (SELECT (f->>'windy')::bool AS v, label, count(*)::float8 AS n FROM mx_rows
           WHERE jsonb_typeof(f->'windy') = 'boolean' GROUP BY 1, 2),
     tot AS (SELECT sum(n) AS n FROM t),
     pv AS (SELECT v, sum(n) AS n FROM t GROUP BY v),
     pc AS (SELECT label, sum(n) AS n FROM t GROUP BY label)
SELECT round(sum(t.n / tot.n * ln(t.n * tot.n / (pv.n * pc.n)))::numeric, 12) AS windy_by_hand
FROM t JOIN pv USING (v) JOIN pc USING (label), tot;
SELECT feature, round(mutual_info::numeric, 12) AS mutual_info
FROM nb_mutual_info((SELECT nb_train(label, f) FROM mx_bags));

-- merging, GROUP BY, the text form and the Citus path work for mixed models
SELECT nb_merge(a, b)::text = (SELECT m::text FROM mx_model) AS merge_of_halves,
       nb_merge(b, a)::text = (SELECT m::text FROM mx_model) AS merge_commutes
FROM (SELECT nb_train(label, f) FILTER (WHERE id <= 3) AS a, nb_train(label, f) FILTER (WHERE id > 3) AS b FROM mx_rows) s;
SELECT id % 2 AS part, nb_info(nb_train(label, f)) -> 'documents' AS documents FROM mx_rows GROUP BY 1 ORDER BY 1;
SELECT m::text::nb_model::text = m::text AS text_round_trip FROM mx_model;
-- Citus: workers return partial models as text, the coordinator merges them
-- (Gaussian moments merged by Chan's formula round differently from one pass)
SELECT c.id, abs((nb_predict_proba(w.m, c.doc, c.options) ->> 'yes')::float8 - e.p) < 1e-12 AS citus_path
FROM (SELECT nb_merge(p::nb_model ORDER BY part) AS m
      FROM (SELECT id % 3 AS part, nb_train(label, f)::text AS p FROM mx_rows GROUP BY 1) workers) w,
     mx_doc c JOIN mx_expected e ON e.id = c.id AND e.label = 'yes'
ORDER BY c.id;
-- Gaussian statistics merge by Chan's formula: merging in any order gives the same probabilities
SELECT abs((nb_predict_proba(nb_merge(nb_merge(a, b), c), '{"temp": 24}'::jsonb) ->> 'yes')::float8
         - (nb_predict_proba((SELECT m FROM mx_model), '{"temp": 24}'::jsonb) ->> 'yes')::float8) < 1e-12 AS chan_merge
FROM (SELECT nb_train(label, f) FILTER (WHERE id IN (1, 4)) AS a, nb_train(label, f) FILTER (WHERE id IN (2, 5)) AS b,
             nb_train(label, f) FILTER (WHERE id IN (3, 6)) AS c FROM mx_rows) s;

-- a text model is still written in format version 1; mixing in another feature (jsonb's bag
-- "" is the text[] rows' bag) makes version 2, and merging models of unrelated rows is refused
SELECT nb_info(nb_train(label, tokens)) -> 'format_version' AS text_only FROM (VALUES ('a', '{x}'::text[])) t(label, tokens);
SELECT nb_info(nb_merge(nb_train(label, tokens), nb_train(label, jsonb_build_object('', tokens, 'temp', 20)))) - 'bytes' AS merged
FROM (VALUES ('yes', '{x}'::text[])) t(label, tokens);
SELECT nb_merge(nb_train(label, tokens), (SELECT m FROM mx_model))
FROM (VALUES ('yes', '{x}'::text[])) t(label, tokens);

-- many classes (the class table grows while rows are added) with long values
SELECT nb_info(nb_train('c' || (i % 40), jsonb_build_object('a', 'v' || (i % 3), 'z', repeat('x', 20000) || (i % 2))))
       - 'bytes' AS info
FROM generate_series(1, 400) i;
SELECT nb_info(nb_train('c' || (i % 40), array_fill(i::float8, ARRAY[5000]))) -> 'classes' AS classes
FROM generate_series(1, 400) i;

-- binary COPY round trip
COPY mx_model TO '/tmp/nbc_regress_mixed.bin' WITH (FORMAT binary);
CREATE TABLE mx_copy (m nb_model);
COPY mx_copy FROM '/tmp/nbc_regress_mixed.bin' WITH (FORMAT binary);
SELECT c.m::text = m.m::text AS binary_copy_round_trip FROM mx_copy c, mx_model m;

-- crafted version 2 bytes, checksum repaired (nbt_fix from type_io) so that
-- validation itself must catch them.  Layout of mx_model (C = 2, V = 3,
-- E = 5, F = 3: outlook, temp, windy): feature_type at byte 200,
-- feature_present at 224, feature_a at 272, vector length at 36.
CREATE TABLE mx_ref AS SELECT nbc_model_send(m) AS b FROM mx_model;
SELECT length(b) AS bytes, get_byte(b, 4) AS version, get_byte(b, 200) AS outlook_type,
       get_byte(b, 204) AS temp_type, get_byte(b, 208) AS windy_type FROM mx_ref;
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(9, 4) FROM 201)))::nb_model FROM mx_ref;   -- unknown type
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(2, 4) FROM 205)))::nb_model FROM mx_ref;   -- Gaussian statistics as categorical
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(3, 4) FROM 201)))::nb_model FROM mx_ref;   -- items on a Gaussian feature
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_f64(4) FROM 225)))::nb_model FROM mx_ref;     -- more rows than the class
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_f64(-1) FROM 225)))::nb_model FROM mx_ref;    -- negative rows
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_f64(5) FROM 305)))::nb_model FROM mx_ref;     -- more true than rows
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(1, 4) FROM 37)))::nb_model FROM mx_ref;    -- no feature "1"
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(4, 4) FROM 33)))::nb_model FROM mx_ref;    -- feature count too large
SELECT nbt_text(nbt_fix(substr(b, 1, length(b) - 1)))::nb_model FROM mx_ref;                -- truncated
SELECT nbt_text(nbt_fix(b || '\x00'::bytea))::nb_model FROM mx_ref;                         -- trailing byte
SELECT nbt_text(nbt_fix(b))::nb_model::text = (SELECT m::text FROM mx_model) AS untouched_is_valid FROM mx_ref;

-- errors
-- a key whose type changes between rows (the message names it)
SELECT nb_train(label, f) FROM (VALUES ('a', '{"k": "red"}'::jsonb), ('b', '{"k": 1.5}')) t(label, f);
SELECT nb_train(label, f) FROM (VALUES ('a', '{"k": true}'::jsonb), ('b', '{"k": ["x"]}')) t(label, f);
-- null has no type: it never conflicts
SELECT nb_info(nb_train(label, f)) -> 'features' AS features
FROM (VALUES ('a', '{"k": null}'::jsonb), ('b', '{"k": 2}'), ('c', '{"k": null}')) t(label, f);
-- text[] rows feed the bag "", which a jsonb row made categorical
SELECT nb_train(label, f) FROM (VALUES ('a', '{"": "x"}'::jsonb)) t(label, f) \gset
SELECT nb_merge(:'nb_train'::nb_model, nb_train('b', ARRAY['x']));
SELECT nb_merge((SELECT m FROM mx_model), nb_train('a', '{"temp": "hot"}'::jsonb));
-- not an object, bad bag elements and counts, numbers out of range
SELECT nb_train('a', '[1, 2]'::jsonb);
SELECT nb_train('a', '"x"'::jsonb);
SELECT nb_train('a', '{"k": [1, 2]}'::jsonb);
SELECT nb_train('a', '{"k": ["x", ["y"]]}'::jsonb);
SELECT nb_train('a', '{"k": {"x": -1}}'::jsonb);
SELECT nb_train('a', '{"k": {"x": "many"}}'::jsonb);
SELECT nb_train('a', '{"k": 1e400}'::jsonb);
-- values within range whose spread is not: the squared deviations overflow
SELECT nb_train(l, f) FROM (VALUES ('a', '{"k": 1e308}'::jsonb), ('a', '{"k": -1e308}')) v(l, f);
-- float8[]: lengths, NaN, infinity, empty, a position used as another type
SELECT nb_train(label, v) FROM (VALUES ('a', '{1, 2}'::float8[]), ('b', '{1, 2, 3}')) t(label, v);
SELECT nb_train('a', '{1, NaN}'::float8[]);
SELECT nb_train('a', '{Infinity}'::float8[]);
SELECT nb_train('a', '{}'::float8[]);
SELECT nb_train('a', '{{1, 2}, {3, 4}}'::float8[]);
SELECT nb_train(label, v) FROM (VALUES ('a', '{1, 2}'::float8[]), ('b', '{{1, 2}}')) t(label, v);
\set VERBOSITY sqlstate
SELECT nb_train('a', '{{1, 2}, {3, 4}}'::float8[]);
\set VERBOSITY default
SELECT nb_merge(nb_train('a', '{"1": "one"}'::jsonb), nb_train('a', '{1, 2}'::float8[]));
SELECT nb_merge(nb_train('a', '{1, 2}'::float8[]), nb_train('a', '{1, 2, 3}'::float8[]));
-- prediction: a value of the wrong type, float8[] of the wrong length or for a jsonb model
SELECT nb_predict(m, '{"outlook": 3}'::jsonb) FROM mx_model;
SELECT nb_predict(m, '{"temp": "warm"}'::jsonb) FROM mx_model;
-- a number in a string (j->>'temp' rebuilt into jsonb); as a number it scores quietly
SELECT nb_predict(m, jsonb_build_object('temp', '19')) FROM mx_model;
SELECT nb_predict(m, jsonb_build_object('temp', '19'::float8)) FROM mx_model;
SELECT nb_predict(m, '{"windy": "yes"}'::jsonb) FROM mx_model;
SELECT nb_predict(m, '{"outlook": ["sunny"]}'::jsonb) FROM mx_model;
SELECT nb_predict(m, '{20}'::float8[]) FROM mx_model;
SELECT nb_predict(nb_train('a', '{1, 2}'::float8[]), '{1}'::float8[]);
SELECT nb_predict(nb_train('a', '{1, 2}'::float8[]), '{1, NaN}'::float8[]);
SELECT nb_predict(nb_train('a', '{1, 2}'::float8[]), '{{1, 2}}'::float8[]);
SELECT nb_predict_proba(nb_train('a', '{1, 2}'::float8[]), '{{1}, {2}}'::float8[]);
SELECT nb_predict_log_proba(nb_train('a', '{1, 2}'::float8[]), '{{{1, 2}}}'::float8[]);
\set VERBOSITY sqlstate
SELECT nb_predict(nb_train('a', '{1, 2}'::float8[]), '{{1, 2}}'::float8[]);
\set VERBOSITY default
SELECT nb_predict(m, '7'::jsonb) FROM mx_model;
SELECT nb_predict(m, ARRAY['sunny']) FROM mx_model;
-- a model of rows without any feature has the prior only
SELECT nb_predict_proba(nb_train(label, f), '{"x": 1}'::jsonb), nb_info(nb_train(label, f)) - 'bytes' AS info
FROM (VALUES ('a', '{}'::jsonb), ('b', '{"x": null}'), ('b', '{}')) t(label, f);
-- complement naive Bayes is defined for bags of tokens only
SELECT nb_predict(m, '{"outlook": "sunny"}'::jsonb, '{"kind": "complement"}') FROM mx_model;
SELECT nb_predict(m, '{"temp": 20}'::jsonb, '{"var_smoothing": -1}') FROM mx_model;
SELECT nb_predict(m, '{"temp": 20}'::jsonb, '{"var_smoothing": "small"}') FROM mx_model;

-- NULLs: a NULL row, label, features or weight adds nothing; NULL features predict NULL
SELECT nb_train(label, f)::text = (SELECT m::text FROM mx_model) AS nulls_add_nothing
FROM (SELECT label, f FROM mx_rows UNION ALL VALUES (NULL, '{"temp": 1}'::jsonb), ('yes', NULL)) t;
SELECT nb_train(label, f, w) IS NULL AS all_null FROM (VALUES ('a', '{"x": 1}'::jsonb, NULL::float8)) t(label, f, w);
SELECT nb_predict(m, NULL::jsonb) IS NULL AS null_features, nb_predict(NULL, '{}'::jsonb) IS NULL AS null_model FROM mx_model;
SELECT nb_predict(m, NULL::float8[]) IS NULL AS null_vector FROM mx_model;
-- a row whose features are all missing counts for the prior only
SELECT nb_classes.* FROM nb_classes((SELECT nb_train(label, f) FROM (VALUES ('a', '{"x": 1}'::jsonb), ('b', '{}')) t(label, f)));

DROP VIEW mx_doc, mx_expected, mx_gauss, mx_eps;
DROP FUNCTION mx_joint;
DROP TABLE mx_rows, mx_model, mx_cases, mx_bags, mx_vec, mx_copy, mx_ref;
