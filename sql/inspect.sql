--
-- inspect: nb_mutual_info, nb_classes, nb_info and the jsonb cast.
--
-- The model of predict.sql:  a: {x,x,y}, {x,z}   b: {y,w,w}
--   D = 3, pi_a = 2/3, pi_b = 1/3;  theta_jc = d_jc / D_c
--
CREATE TABLE insp_model AS
SELECT nb_train(l, t) AS m FROM (VALUES ('a', '{x,x,y}'::text[]), ('a', '{x,z}'), ('b', '{y,w,w}')) AS v(l, t);

--
-- Mutual information, Murphy eq. 3.76, in nats:
--   x: theta_xa = 1, theta_xb = 0, theta_x = 2/3
--      I = 2/3 log(1 / (2/3)) + 1/3 log(1 / (1/3)) = log 3 - 2/3 log 2 (= H(class): x decides the class)
--   w: theta_wa = 0, theta_wb = 1, theta_w = 1/3: the same value
--   y: theta_ya = 1/2, theta_yb = 1, theta_y = 2/3
--      I = 2/3 [1/2 log(3/4) + 1/2 log(3/2)] + 1/3 log(3/2) = 1/3 log(27/16)
--   z: theta_za = 1/2, theta_zb = 0, theta_z = 1/3
--      I = 2/3 [1/2 log(3/2) + 1/2 log(3/4)] + 1/3 log(3/2) = 1/3 log(27/16)
--
SELECT feature, round(mutual_info::numeric, 12) AS mutual_info,
       abs(mutual_info - CASE WHEN feature IN ('w', 'x') THEN ln(3) - 2 * ln(2) / 3
                              ELSE ln(27.0 / 16) / 3 END) < 1e-15 AS matches_hand
FROM nb_mutual_info((SELECT m FROM insp_model))
ORDER BY round(mutual_info::numeric, 12) DESC, feature COLLATE "C";

-- Order: highest first, exact ties by feature in byte order.
--   p and q occur in exactly the documents of class c1, s in exactly those of c2:
--   each decides the class, I = log 2.  r occurs in one document of each class
--   and e in every document: I = 0.  The order must be p, q, s, e, r.
SELECT n, feature, round(mutual_info::numeric, 12) AS mutual_info
FROM nb_mutual_info((SELECT nb_train(l, t)
                     FROM (VALUES ('c1', '{e,p,q,r}'::text[]), ('c1', '{q,p,e}'),
                                  ('c2', '{s,r,e}'), ('c2', '{e,s}')) AS v(l, t)))
     WITH ORDINALITY AS r(feature, mutual_info, n)
ORDER BY n;
SELECT abs(mutual_info - ln(2)) < 1e-15 AS is_log_2
FROM nb_mutual_info((SELECT nb_train(l, t)
                     FROM (VALUES ('c1', '{e,p,q,r}'::text[]), ('c1', '{q,p,e}'),
                                  ('c2', '{s,r,e}'), ('c2', '{e,s}')) AS v(l, t)))
LIMIT 1;
-- one class: nothing to learn about it, every I = 0
SELECT feature, mutual_info FROM nb_mutual_info((SELECT nb_train('only', '{b,a,c}'::text[]))) ORDER BY feature COLLATE "C";
-- no tokens: no rows
SELECT count(*) FROM nb_mutual_info((SELECT nb_train('only', '{}'::text[])));
-- the feature order does not depend on the collation
SELECT array_agg(feature ORDER BY n) AS features
FROM nb_mutual_info((SELECT nb_train('c', '{b,B,a,A,é,_}'::text[]))) WITH ORDINALITY AS r(feature, mutual_info, n);

--
-- Eq. 3.76 written out in SQL from the model's own counts (the jsonb cast),
-- over every class, against nb_mutual_info: weighted generated data, 5 classes
--
CREATE TABLE insp_gen AS
SELECT i AS id, 'k' || (i % 5) AS label,
       ARRAY(SELECT 'f' || ((i * j + j) % 29) FROM generate_series(1, 1 + i % 7) AS j) AS tokens,
       (1 + i % 4) * 0.5 AS weight
FROM generate_series(1, 400) AS i;
CREATE TABLE insp_gen_model AS SELECT nb_train(label, tokens, weight) AS m FROM insp_gen;
WITH j AS (SELECT m::jsonb AS j FROM insp_gen_model),
classes AS (
  SELECT c.key AS label, (c.value ->> 'documents')::float8 AS dc FROM j, jsonb_each(j -> 'classes') AS c),
total AS (SELECT sum(dc) AS d FROM classes),
tokens AS (SELECT t.key AS token FROM j, jsonb_each(j -> 'tokens') AS t),
theta AS (
  SELECT token, label, dc / d AS pi,
         coalesce((j #>> ARRAY['tokens', token, label, 'documents'])::float8, 0) / dc AS t
  FROM j, tokens, classes, total),
theta_j AS (SELECT token, sum(pi * t) AS tj FROM theta GROUP BY token),
mi AS (
  SELECT token,
         sum(pi * (CASE WHEN t > 0 THEN t * ln(t / tj) ELSE 0 END
                 + CASE WHEN t < 1 THEN (1 - t) * ln((1 - t) / (1 - tj)) ELSE 0 END)) AS mi
  FROM theta JOIN theta_j USING (token) GROUP BY token)
SELECT count(*) AS tokens,
       count(*) FILTER (WHERE abs(n.mutual_info - mi.mi) < 1e-12) AS equal,
       max(n.mutual_info) > 0 AS some_positive
FROM mi FULL JOIN nb_mutual_info((SELECT m FROM insp_gen_model)) AS n ON n.feature = mi.token;
-- the ranking is by value
SELECT bool_and(prev >= mutual_info) AS descending
FROM (SELECT mutual_info, lag(mutual_info) OVER (ORDER BY n) AS prev
      FROM nb_mutual_info((SELECT m FROM insp_gen_model)) WITH ORDINALITY AS r(feature, mutual_info, n)) s
WHERE prev IS NOT NULL;

--
-- nb_classes: classes in byte order of their labels, weighted documents, prior D_c / D
--
SELECT * FROM nb_classes((SELECT m FROM insp_model));
SELECT label, documents, round(prior::numeric, 12) AS prior
FROM nb_classes((SELECT m FROM insp_gen_model));
-- documents against plain SQL: k0..k4 have 80 rows each; weights 0.5, 1, 1.5, 2 by i % 4
SELECT label, sum(weight) AS sql_documents FROM insp_gen GROUP BY label ORDER BY label COLLATE "C";
SELECT sum(prior) AS total_prior FROM nb_classes((SELECT m FROM insp_gen_model));

--
-- nb_info: {format_version, bytes, classes, vocabulary, entries, documents, tokens[, length_pairs]}
--   insp_model: 2 classes, 4 tokens, 5 entries (w/b, x/a, y/a, y/b, z/a), 3 documents, 8 tokens
--   bytes = 4 + 32 + 2 * 12 + 4 * 8 + 5 * 20 + 2 + 4 = 198
--
SELECT nb_info(m) FROM insp_model;
SELECT nb_info(m) ->> 'bytes' = pg_column_size(m)::text AS bytes_is_size,
       (nb_info(m) ->> 'bytes')::int = octet_length(nbc_model_send(m)) + 4 AS bytes_is_payload_plus_header
FROM insp_model;
SELECT nb_info(nb_train('a', '{}'::text[]));

--
-- The jsonb cast lists every count: per class D_c and T_c, per token and
-- class N_jc and d_jc, only for the classes the token occurred in
--
SELECT jsonb_pretty(m::jsonb) FROM insp_model;
SELECT nb_model_to_jsonb(m) = m::jsonb AS same FROM insp_model;
-- documents, tokens and counts add up
WITH j AS (SELECT m::jsonb AS j FROM insp_gen_model)
SELECT (SELECT sum((c.value ->> 'tokens')::float8) FROM j, jsonb_each(j -> 'classes') c) AS class_tokens,
       (SELECT sum((e.value ->> 'count')::float8) FROM j, jsonb_each(j -> 'tokens') t, jsonb_each(t.value) e) AS entry_counts,
       (SELECT sum(weight * cardinality(tokens)) FROM insp_gen) AS sql_tokens,
       (SELECT nb_info(m) ->> 'tokens' FROM insp_gen_model) AS info_tokens;

--
-- The inspection functions are strict
--
SELECT nb_info(NULL) IS NULL AS info, NULL::nb_model::jsonb IS NULL AS cast,
       (SELECT count(*) FROM nb_classes(NULL)) AS classes,
       (SELECT count(*) FROM nb_mutual_info(NULL)) AS mutual_info;

--
-- Every number in a jsonb result is the numeric that numeric_in makes of
-- the float8's shortest text (to_jsonb(float8)): the same text, the same
-- stored size (short or long form) and equal, over the whole positive
-- range of float8 (here as a Gaussian feature's mean)
--
WITH v AS (
    SELECT (1.234567890123 * 10::float8 ^ e) * (1 + i * 0.000731) AS x
    FROM generate_series(-300, 300, 7) AS e, generate_series(1, 20) AS i
    UNION ALL
    SELECT unnest(ARRAY[1, 0.5, 0.1, 1e-4, 1e-5, 9999.5, 10000, 12345.678, 1e15, 1e16, 1e20, 1e22,
                        123456789012345678, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e307])::float8),
j AS (
    SELECT x, nb_model_to_jsonb((SELECT nb_train('a', jsonb_build_object('g', y)) FROM (SELECT x) AS t(y)))
              -> 'features' -> 'g' -> 'mean' AS j
    FROM v)
SELECT count(*) AS numbers,
       count(*) FILTER (WHERE j::text = to_jsonb(x)::text AND j = to_jsonb(x)
                        AND pg_column_size(j) = pg_column_size(to_jsonb(x))) AS as_numeric_in
FROM j;
