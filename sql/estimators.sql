--
-- estimators: the prediction options class_alpha, estimator, beta and norm,
-- each checked against the formulas computed here in SQL from the training
-- rows' counts (not from the model), and every error they can raise.
--
CREATE TABLE est_docs (label text, tokens text[]);
INSERT INTO est_docs VALUES
    ('ham', '{lunch,meeting,today,lunch}'), ('ham', '{agenda,meeting}'), ('ham', '{lunch,tomorrow}'),
    ('spam', '{cheap,money,now,cheap}'), ('spam', '{money,win,now}'),
    ('eggs', '{green,ham,lunch}');
CREATE TABLE est_model AS SELECT nb_train(label, tokens) AS m FROM est_docs;
CREATE TABLE est_test (id int, doc text[]);
INSERT INTO est_test VALUES (1, '{lunch,money,now}'), (2, '{cheap,meeting,green,unknown,cheap}'),
    (3, '{}'), (4, '{ham,ham,agenda}');

-- per (class, token of the vocabulary): count N and documents d; per class D and T
CREATE VIEW est_counts AS
SELECT c.label, v.token,
       count(*) FILTER (WHERE t.token IS NOT NULL)::float8 AS n,
       count(DISTINCT t.doc) FILTER (WHERE t.token IS NOT NULL)::float8 AS d
FROM (SELECT DISTINCT label FROM est_docs) c
CROSS JOIN (SELECT DISTINCT u AS token FROM est_docs, unnest(tokens) u) v
LEFT JOIN (SELECT e.label, u AS token, e.ctid AS doc FROM est_docs e, unnest(e.tokens) u) t
       ON t.label = c.label AND t.token = v.token
GROUP BY c.label, v.token;
CREATE VIEW est_classes AS
SELECT label, count(*)::float8 AS docs, sum(cardinality(tokens))::float8 AS tokens
FROM est_docs GROUP BY label;

-- the log posterior per class of a document by the formulas (Murphy eq. 3.66-3.68):
-- pseudo-counts a (multinomial, complement), b1/b0 (Bernoulli), k (class prior);
-- norm divides each class's complement weights by their sum over the vocabulary
CREATE FUNCTION est_expected(doc text[], kind text, a float8, b1 float8, b0 float8, k float8,
                             norm bool DEFAULT false)
RETURNS TABLE (label text, logp float8) LANGUAGE sql AS $$
WITH x AS (SELECT token, count(*)::float8 AS x FROM unnest(doc) token
           WHERE token IN (SELECT token FROM est_counts) GROUP BY token),
V AS (SELECT count(DISTINCT token)::float8 AS v FROM est_counts),
tot AS (SELECT sum(docs) AS docs, sum(tokens) AS tokens, count(*)::float8 AS c FROM est_classes),
F AS (SELECT token, sum(n) AS f FROM est_counts GROUP BY token),
w AS (SELECT e.label, e.token,
             ln((tot.tokens + a * V.v - c.tokens) / (F.f + a - e.n)) AS w
      FROM est_counts e JOIN est_classes c USING (label) JOIN F USING (token), V, tot),
score AS (
    SELECT c.label,
           CASE kind
           WHEN 'multinomial' THEN
               ln((c.docs + k) / (tot.docs + tot.c * k))
               + coalesce((SELECT sum(x.x * ln((e.n + a) / (c.tokens + a * V.v)))
                           FROM x JOIN est_counts e USING (token) WHERE e.label = c.label), 0)
           WHEN 'bernoulli' THEN
               ln((c.docs + k) / (tot.docs + tot.c * k))
               + (SELECT sum(CASE WHEN e.token IN (SELECT token FROM x)
                                  THEN ln((e.d + b1) / (c.docs + b1 + b0))
                                  ELSE ln((c.docs - e.d + b0) / (c.docs + b1 + b0)) END)
                  FROM est_counts e WHERE e.label = c.label)
           ELSE
               coalesce((SELECT sum(x.x * w.w) FROM x JOIN w USING (token) WHERE w.label = c.label), 0)
               / CASE WHEN norm THEN (SELECT sum(w.w) FROM w WHERE w.label = c.label) ELSE 1 END
           END AS s
    FROM est_classes c, V, tot)
SELECT label, s - (SELECT max(s) + ln(sum(exp(s - (SELECT max(s) FROM score)))) FROM score)
FROM score
$$;

-- the largest difference from nbc's log posteriors over the test documents and classes
-- (a probability 0, JSON null, counts as infinitely far)
CREATE FUNCTION est_error(options jsonb, kind text, a float8, b1 float8, b0 float8, k float8,
                          norm bool DEFAULT false)
RETURNS float8 LANGUAGE sql AS $$
SELECT max(coalesce(abs(e.logp - (nb_predict_log_proba(m, t.doc, options) ->> e.label)::float8), 'Infinity'))
FROM est_model, est_test t, est_expected(t.doc, kind, a, b1, b0, k, norm) e
$$;

-- today's defaults are the formulas with a = b1 = b0 = 1, k = 0
SELECT est_error(NULL, 'multinomial', 1, 1, 1, 0) < 1e-12 AS defaults;
-- class_alpha: (D_c + k) / (D + C k) (eq. 3.68), the fitted prior only
SELECT o, est_error(o::jsonb, kind, a, a, a, k) < 1e-12 AS ok
FROM (VALUES ('{"class_alpha": 1}', 'multinomial', 1, 1),
             ('{"class_alpha": 2.5, "alpha": 0.5}', 'multinomial', 0.5, 2.5),
             ('{"class_alpha": 0}', 'multinomial', 1, 0),
             ('{"class_alpha": 4, "kind": "bernoulli"}', 'bernoulli', 1, 4),
             ('{"class_alpha": 1e6}', 'multinomial', 1, 1e6)) AS v(o, kind, a, k);
-- with fit_prior false or class_prior, class_alpha changes nothing
SELECT (SELECT nb_predict_proba(m, doc, '{"fit_prior": false, "class_alpha": 3}')
        = nb_predict_proba(m, doc, '{"fit_prior": false}')
        AND nb_predict_proba(m, doc, '{"class_prior": {"ham": 1, "spam": 2, "eggs": 3}, "class_alpha": 3}')
        = nb_predict_proba(m, doc, '{"class_prior": {"ham": 1, "spam": 2, "eggs": 3}}')) AS unchanged
FROM est_model, est_test ORDER BY id;
-- a large class_alpha tends to the uniform prior
SELECT round((nb_predict_proba(m, '{}'::text[], '{"class_alpha": 1e12}') ->> 'eggs')::numeric, 9) AS eggs
FROM est_model;

-- map: the posterior mode, (N + a - 1) / (T_c + V(a - 1)), (d + b1 - 1) / (D_c + b1 + b0 - 2),
-- (D_c + k - 1) / (D + C(k - 1)); class_alpha not given is D_c / D
SELECT o, est_error(o::jsonb, kind, a, b1, b0, k) < 1e-12 AS ok
FROM (VALUES ('{"estimator": "map", "alpha": 2}', 'multinomial', 1, 1, 1, 0),
             ('{"estimator": "map", "alpha": 1.5, "class_alpha": 3}', 'multinomial', 0.5, 0.5, 0.5, 2),
             ('{"estimator": "map", "alpha": 3, "kind": "bernoulli"}', 'bernoulli', 2, 2, 2, 0),
             ('{"estimator": "map", "beta": [2, 4], "kind": "bernoulli", "class_alpha": 1}', 'bernoulli', 1, 1, 3, 0),
             ('{"estimator": "map", "alpha": 2, "kind": "complement"}', 'complement', 1, 1, 1, 0),
             ('{"estimator": "mean", "alpha": 2}', 'multinomial', 2, 2, 2, 0)) AS v(o, kind, a, b1, b0, k);
-- map with alpha 1 (the default) is maximum likelihood: alpha 0's limit, classes ruled out get 0
SELECT nb_predict_proba(m, doc, '{"estimator": "map"}') = nb_predict_proba(m, doc, '{"alpha": 0}') AS same,
       nb_predict_proba(m, doc, '{"estimator": "map"}') AS proba
FROM est_model, est_test ORDER BY id;

-- beta [b1, b0]: Beta(presence, absence) for Bernoulli; alpha keeps the multinomial's
SELECT o, est_error(o::jsonb, kind, a, b1, b0, 0) < 1e-12 AS ok
FROM (VALUES ('{"kind": "bernoulli", "beta": [2, 0.5]}', 'bernoulli', 1, 2, 0.5),
             ('{"kind": "bernoulli", "beta": [0.1, 3], "alpha": 7}', 'bernoulli', 7, 0.1, 3),
             ('{"kind": "multinomial", "beta": [5, 5], "alpha": 0.5}', 'multinomial', 0.5, 0, 0)) AS v(o, kind, a, b1, b0);
-- beta [a, a] is alpha a
SELECT bool_and(nb_predict_proba(m, doc, '{"kind": "bernoulli", "beta": [0.5, 0.5]}')
                = nb_predict_proba(m, doc, '{"kind": "bernoulli", "alpha": 0.5}')) AS same
FROM est_model, est_test;

-- norm: complement weights over their sum (Rennie et al. 2003, ComplementNB(norm=True))
SELECT o, est_error(o::jsonb, 'complement', a, a, a, 0, norm) < 1e-12 AS ok
FROM (VALUES ('{"kind": "complement", "norm": true}', 1, true),
             ('{"kind": "complement", "norm": true, "alpha": 0.01}', 0.01, true),
             ('{"kind": "complement", "norm": true, "alpha": 3, "estimator": "map"}', 2, true),
             ('{"kind": "complement", "norm": false}', 1, false)) AS v(o, a, norm);
-- the tsvector input and the jsonb bag "" score the same
SELECT nb_predict_log_proba(m, ARRAY['lunch', 'money', 'now'], o) = nb_predict_log_proba(m, 'lunch money now'::tsvector, o)
       AND nb_predict_log_proba(m, ARRAY['lunch', 'money', 'now'], o)
           = nb_predict_log_proba(m, '{"": ["lunch", "money", "now"]}'::jsonb, o) AS same
FROM est_model, (VALUES ('{"kind": "complement", "norm": true}'::jsonb)) AS v(o);

-- every prediction function sees the options, and one query can use several sets of them
-- with one model (each its own prepared scorer)
SELECT o, nb_predict(m, '{lunch,money,now}'::text[], o::jsonb) AS label,
       nb_predict_proba(m, '{lunch,money,now}'::text[], o::jsonb) ->> 'eggs' AS p_eggs,
       exp((nb_predict_log_proba(m, '{lunch,money,now}'::text[], o::jsonb) ->> 'eggs')::float8)
       - (nb_predict_proba(m, '{lunch,money,now}'::text[], o::jsonb) ->> 'eggs')::float8 < 1e-15 AS consistent
FROM est_model, (VALUES (1, NULL), (2, '{"class_alpha": 10}'), (3, '{"estimator": "map", "alpha": 2}'),
                        (4, '{"kind": "bernoulli", "beta": [1, 3]}'), (5, '{"kind": "complement", "norm": true}'),
                        (6, '{"kind": "complement"}'), (7, '{"kind": "bernoulli", "beta": [3, 1]}'))
     AS v(i, o)
ORDER BY i;

-- nb_explain sees the options: its contributions sum to the log posterior odds
SELECT o, bool_and(abs((SELECT sum(contribution) FROM nb_explain(m, t.doc, o::jsonb, 'ham'))
                       - ((nb_predict_log_proba(m, t.doc, o::jsonb) ->> nb_predict(m, t.doc, o::jsonb))::float8
                          - (nb_predict_log_proba(m, t.doc, o::jsonb) ->> 'ham')::float8)) < 1e-12) AS sums
FROM est_model, est_test t,
     (VALUES (1, '{"class_alpha": 2}'), (2, '{"estimator": "map", "alpha": 1.5, "class_alpha": 4}'),
             (3, '{"kind": "bernoulli", "beta": [0.5, 3]}'), (4, '{"kind": "complement", "norm": true}'),
             (5, '{"kind": "complement", "norm": true, "alpha": 0.2}')) AS v(i, o)
WHERE t.doc <> '{}' AND nb_predict(m, t.doc, o::jsonb) <> 'ham'
GROUP BY i, o ORDER BY i;
-- and nb_feature_log_prob: with norm, the complement weights over their sum (each class's sum is 1)
SELECT max(abs(f.log_prob - w.w / s.s)) < 1e-12 AS norm_weights
FROM est_model, nb_feature_log_prob(m, '{"kind": "complement", "norm": true}') AS f
JOIN (SELECT e.label, e.token,
             ln((t.tokens + (SELECT count(DISTINCT token) FROM est_counts) - c.tokens)
                / ((SELECT sum(n) FROM est_counts x WHERE x.token = e.token) + 1 - e.n)) AS w
      FROM est_counts e JOIN est_classes c USING (label),
           (SELECT sum(tokens) AS tokens FROM est_classes) t) AS w
  ON w.label = f.label AND w.token = f.value
JOIN (SELECT e.label, sum(ln((t.tokens + (SELECT count(DISTINCT token) FROM est_counts) - c.tokens)
                             / ((SELECT sum(n) FROM est_counts x WHERE x.token = e.token) + 1 - e.n))) AS s
      FROM est_counts e JOIN est_classes c USING (label),
           (SELECT sum(tokens) AS tokens FROM est_classes) t
      GROUP BY e.label) AS s
  ON s.label = f.label;
-- with map, the mode (N + a - 1) / (T_c + V(a - 1)) as the log probability
SELECT max(abs(f.log_prob - ln((e.n + 1.5) / (c.tokens + 1.5 * (SELECT count(DISTINCT token) FROM est_counts))))) < 1e-12
       AS map_log_prob
FROM est_model, nb_feature_log_prob(m, '{"estimator": "map", "alpha": 2.5}') AS f
JOIN est_counts e ON e.label = f.label AND e.token = f.value
JOIN est_classes c ON c.label = f.label;

-- with beta, Bernoulli's (d + b1) / (D_c + b1 + b0)
SELECT max(abs(f.log_prob - ln((e.d + 0.5) / (c.docs + 3.5)))) < 1e-12 AS beta_log_prob
FROM est_model, nb_feature_log_prob(m, '{"kind": "bernoulli", "beta": [0.5, 3]}') AS f
JOIN est_counts e ON e.label = f.label AND e.token = f.value
JOIN est_classes c ON c.label = f.label;

-- mixed features: beta for a boolean, map for a categorical
CREATE TABLE est_mix (label text, windy bool, outlook text);
INSERT INTO est_mix VALUES ('play', true, 'sunny'), ('play', false, 'sunny'), ('play', false, 'overcast'),
    ('stay', true, 'rain'), ('stay', true, 'sunny'), ('stay', NULL, 'rain');
CREATE TABLE est_mix_model AS
SELECT nb_train(label, jsonb_strip_nulls(jsonb_build_object('windy', windy, 'outlook', outlook))) AS m FROM est_mix;
-- windy true, outlook sunny: prior D_c / D, boolean (T + b1) / (M + b1 + b0),
-- categorical (N_v + a) / (N + aK) with K = 3 values
CREATE FUNCTION est_mix_expected(b1 float8, b0 float8, a float8) RETURNS TABLE (label text, logp float8)
LANGUAGE sql AS $$
WITH s AS (
    SELECT label,
           ln(count(*)::float8 / (SELECT count(*) FROM est_mix))
           + ln((count(*) FILTER (WHERE windy) + b1) / (count(windy) + b1 + b0))
           + ln((count(*) FILTER (WHERE outlook = 'sunny') + a) / (count(outlook) + 3 * a)) AS s
    FROM est_mix GROUP BY label)
SELECT label, s - ln((SELECT sum(exp(s)) FROM s)) FROM s
$$;
SELECT o, (SELECT max(abs(e.logp - (nb_predict_log_proba(m, '{"windy": true, "outlook": "sunny"}'::jsonb, o::jsonb)
                                    ->> e.label)::float8))
           FROM est_mix_model, est_mix_expected(b1, b0, a) e) < 1e-12 AS ok
FROM (VALUES ('{"beta": [2, 0.5]}', 2, 0.5, 1),
             ('{"beta": [2, 0.5], "alpha": 0.25}', 2, 0.5, 0.25),
             ('{"estimator": "map", "beta": [3, 1.5], "alpha": 2}', 2, 0.5, 1),
             ('{"estimator": "map", "alpha": 4}', 3, 3, 3)) AS v(o, b1, b0, a);
-- complement with norm needs token bags only, like complement
SELECT nb_predict(m, '{"windy": true}'::jsonb, '{"kind": "complement", "norm": true}') FROM est_mix_model;

-- errors (SQLSTATE 22023)
\set VERBOSITY sqlstate
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "alpha": 0.5}') FROM est_model;
\set VERBOSITY default
-- class_alpha: not a number, out of range
SELECT nb_predict(m, '{x}'::text[], '{"class_alpha": -1}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_alpha": "1"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_alpha": null}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_alpha": 1e101}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_alpha": 1e400}') FROM est_model;
-- estimator: not a string, unknown, wrong case
SELECT nb_predict(m, '{x}'::text[], '{"estimator": 1}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "mode"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "MAP"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": ["map"]}') FROM est_model;
-- beta: not an array of two numbers in range
SELECT nb_predict(m, '{x}'::text[], '{"beta": 1}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [1]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [1, 2, 3]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [1, "2"]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [null, 2]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [[1], 2]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": {"1": 1, "0": 2}}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [-1, 2]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"beta": [1, 1e101]}') FROM est_model;
-- norm: not a boolean, another kind, no smoothing
SELECT nb_predict(m, '{x}'::text[], '{"norm": 1}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"norm": "true"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"norm": true}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"norm": true, "kind": "bernoulli"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"norm": true, "kind": "complement", "alpha": 0}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"norm": true, "kind": "complement", "estimator": "map"}') FROM est_model;
-- map: every prior parameter given must be at least 1, in any order of the keys
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "alpha": 0}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": 0.999, "estimator": "map"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "beta": [1, 0.5]}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "beta": [0, 1], "kind": "multinomial"}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "class_alpha": 0}') FROM est_model;
SELECT nb_predict(m, '{x}'::text[], '{"estimator": "map", "class_alpha": 0.5, "fit_prior": false}') FROM est_model;
-- the same for the other functions
SELECT nb_predict_proba(m, '{x}'::text[], '{"estimator": "map", "alpha": 0.5}') FROM est_model;
SELECT nb_predict_log_proba(m, 'x'::tsvector, '{"beta": [1]}') FROM est_model;
SELECT nb_predict_proba(m, '{"windy": false}'::jsonb, '{"norm": true}') FROM est_mix_model;
