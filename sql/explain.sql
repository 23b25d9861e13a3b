--
-- explain: nb_explain and nb_feature_log_prob.  Every expected number is
-- computed here in SQL from the formulas (README "Formulas"; scikit-learn's
-- MultinomialNB, BernoulliNB, ComplementNB, CategoricalNB, GaussianNB),
-- independently of nbc, and compared to 1e-12; the contributions of every
-- explanation are checked to sum to the log posterior odds that
-- nb_predict_log_proba gives, to 1e-9.
--
CREATE TABLE ex_rows (id int, label text, tokens text[]);
INSERT INTO ex_rows VALUES
  (1, 'spam', '{win,money,now,money}'),
  (2, 'spam', '{cheap,money,offer}'),
  (3, 'ham', '{meeting,tomorrow,agenda}'),
  (4, 'ham', '{lunch,tomorrow,money}'),
  (5, 'news', '{money,market,now,now}');
CREATE TABLE ex_model AS SELECT nb_train(label, tokens) AS m FROM ex_rows;

-- Independent statistics: N_jc, d_jc per (class, token); D_c, T_c per class; V; D; T; F_j.
CREATE VIEW ex_class AS
SELECT label, count(*)::float8 AS docs,
       (SELECT count(*) FROM ex_rows r2, unnest(r2.tokens) WHERE r2.label = r.label)::float8 AS tokens
FROM ex_rows r GROUP BY label;
CREATE VIEW ex_vocab AS SELECT DISTINCT tok FROM ex_rows, unnest(tokens) AS tok;
CREATE VIEW ex_cell AS
SELECT c.label, v.tok,
       (SELECT count(*) FROM ex_rows r, unnest(r.tokens) t WHERE r.label = c.label AND t = v.tok)::float8 AS n,
       (SELECT count(*) FROM ex_rows r WHERE r.label = c.label AND v.tok = ANY (r.tokens))::float8 AS d
FROM ex_class c, ex_vocab v;

-- log theta_jc of the formulas: multinomial, Bernoulli (log t and log(1 - t), pseudo-counts
-- a for presence and b0 for absence, a if NULL), complement weight (normalized: divided by
-- the class's sum of weights over the vocabulary)
CREATE FUNCTION ex_log_prob(kind text, lab text, token text, a float8, b0 float8 DEFAULT NULL)
RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT CASE kind
    WHEN 'multinomial' THEN ln((x.n + a) / (c.tokens + a * (SELECT count(*) FROM ex_vocab)))
    WHEN 'bernoulli' THEN ln((x.d + a) / (c.docs + a + coalesce(b0, a)))
    WHEN 'absent' THEN ln(1 - (x.d + a) / (c.docs + a + coalesce(b0, a)))
    WHEN 'complement' THEN
      ln(((SELECT sum(tokens) FROM ex_class) + a * (SELECT count(*) FROM ex_vocab) - c.tokens)
         / ((SELECT sum(n) FROM ex_cell WHERE tok = token) + a - x.n))
    WHEN 'complement_norm' THEN
      ex_log_prob('complement', lab, token, a)
      / (SELECT sum(ex_log_prob('complement', lab, v.tok, a)) FROM ex_vocab v)
    END
  FROM ex_cell x JOIN ex_class c USING (label) WHERE x.label = lab AND x.tok = token
$$;

-- nb_feature_log_prob: every (token, class) for every kind and alpha, as the formulas
SELECT o->>'kind' AS kind, (o->>'alpha')::float8 AS alpha, count(*) AS rows,
       count(*) FILTER (WHERE f.feature = '') AS unnamed_bag,
       max(abs(f.log_prob - ex_log_prob(o->>'kind', f.label, f.value, (o->>'alpha')::float8))) < 1e-12 AS exact
FROM ex_model,
     (SELECT jsonb_build_object('kind', k, 'alpha', a) AS o
      FROM unnest(ARRAY['multinomial', 'bernoulli', 'complement']) k, unnest(ARRAY[1, 0.5, 0.01]) a) opts,
     nb_feature_log_prob(m, o) f
GROUP BY 1, 2 ORDER BY 1, 2;
-- in model order: tokens in byte order, classes in byte order; the default options
SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_model)) LIMIT 7;
-- alpha 0: a token a class never had has probability 0
SELECT label, log_prob FROM nb_feature_log_prob((SELECT m FROM ex_model), '{"alpha": 0}')
WHERE value = 'cheap';
-- the estimators' options: the posterior mode with alpha 2 is Lidstone with alpha 1;
-- Beta(2, 0.5) for Bernoulli; the normalized complement weights
SELECT o, count(*) AS rows,
       max(abs(f.log_prob - ex_log_prob(kind, f.label, f.value, a, b0))) < 1e-12 AS exact
FROM ex_model,
     (VALUES ('{"estimator": "map", "alpha": 2}'::jsonb, 'multinomial', 1, NULL),
             ('{"kind": "bernoulli", "beta": [2, 0.5]}', 'bernoulli', 2, 0.5),
             ('{"kind": "bernoulli", "estimator": "map", "beta": [3, 1.5]}', 'bernoulli', 2, 0.5),
             ('{"kind": "complement", "norm": true}', 'complement_norm', 1, NULL),
             ('{"kind": "complement", "norm": true, "alpha": 0.3}', 'complement_norm', 0.3, NULL)
     ) AS v(o, kind, a, b0),
     nb_feature_log_prob(m, o) f
GROUP BY o ORDER BY o::text COLLATE "C";
-- the prior options change no log-probability
SELECT count(*) FROM nb_feature_log_prob((SELECT m FROM ex_model), '{"class_prior": {"ham": 1, "news": 2, "spam": 3}}') a
JOIN nb_feature_log_prob((SELECT m FROM ex_model)) b USING (feature, value, label)
WHERE a.log_prob = b.log_prob;

-- nb_explain, text[]: the document, its prediction and runner-up
SELECT nb_predict_log_proba(m, '{money,money,now,lunch,unknown}'::text[]) FROM ex_model;
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money,money,now,lunch,unknown}'::text[]);

-- The runner-up, independently: the most probable class other than c1 in
-- nb_predict_log_proba, the first in byte order on a tie; and the log odds of c1 against it.
CREATE FUNCTION ex_runner_up(lp jsonb, c1 text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT o.key FROM jsonb_each(lp) o WHERE o.key <> c1
  ORDER BY (lp->>o.key)::float8 DESC NULLS LAST, o.key COLLATE "C" LIMIT 1
$$;
CREATE FUNCTION ex_log_odds(lp jsonb, c1 text) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN lp->c1 = 'null' THEN '-Infinity'::float8
              WHEN lp->ex_runner_up(lp, c1) = 'null' THEN 'Infinity'::float8
              ELSE (lp->>c1)::float8 - (lp->>ex_runner_up(lp, c1))::float8 END
$$;
-- the identity, to 1e-9 relative to the log odds where that is larger than 1 (rounding)
CREATE FUNCTION ex_sums(total float8, lp jsonb, c1 text) RETURNS bool LANGUAGE sql IMMUTABLE AS $$
  SELECT total = ex_log_odds(lp, c1)
         OR abs(total - ex_log_odds(lp, c1)) <= 1e-9 * greatest(1, abs(ex_log_odds(lp, c1)))
$$;

-- each row by hand, against the runner-up, for every kind and alpha: tokens count x times,
-- except Bernoulli's (once), whose absent row is the sum over the vocabulary tokens not in
-- the document
CREATE TABLE ex_doc (tok text, x float8);
INSERT INTO ex_doc VALUES ('money', 2), ('now', 1), ('lunch', 1);
CREATE FUNCTION ex_hand(kind text, a float8, c1 text, c2 text)
RETURNS TABLE (feature text, contribution float8) LANGUAGE sql STABLE AS $$
  SELECT NULL::text, ln((SELECT docs FROM ex_class WHERE label = c1) / (SELECT docs FROM ex_class WHERE label = c2))
  WHERE kind <> 'complement'
  UNION ALL
  SELECT NULL::text, 0 WHERE kind = 'complement'
  UNION ALL
  SELECT tok, CASE WHEN kind = 'bernoulli' THEN 1 ELSE x END
              * (ex_log_prob(kind, c1, tok, a) - ex_log_prob(kind, c2, tok, a))
  FROM ex_doc
  UNION ALL
  SELECT '', sum(ex_log_prob('absent', c1, tok, a) - ex_log_prob('absent', c2, tok, a))
  FROM ex_vocab WHERE kind = 'bernoulli' AND tok NOT IN (SELECT tok FROM ex_doc)
$$;
SELECT kind, alpha, predicted, runner_up,
       (SELECT count(*) FROM nb_explain(m, d, o) e) AS rows,
       (SELECT bool_and(abs(e.contribution - h.contribution) < 1e-12) AND count(*) = count(h.contribution)
        FROM nb_explain(m, d, o) e
        LEFT JOIN ex_hand(kind, alpha, predicted, runner_up) h
          ON e.feature IS NOT DISTINCT FROM h.feature) AS by_hand
FROM (SELECT m, d, o, o->>'kind' AS kind, (o->>'alpha')::float8 AS alpha,
             nb_predict(m, d, o) AS predicted,
             ex_runner_up(nb_predict_log_proba(m, d, o), nb_predict(m, d, o)) AS runner_up
      FROM ex_model,
           (SELECT '{money,money,now,lunch,unknown}'::text[] AS d) doc,
           (SELECT jsonb_build_object('kind', k, 'alpha', a) AS o
            FROM unnest(ARRAY['multinomial', 'bernoulli', 'complement']) k, unnest(ARRAY[1, 0.5, 0.01]) a) opts) s
ORDER BY 1, 2;

-- against a class named: the same rows against ham, by hand
SELECT bool_and(abs(e.contribution - h.contribution) < 1e-12) AND count(*) = 4 AS by_hand
FROM nb_explain((SELECT m FROM ex_model), '{money,money,now,lunch}'::text[], NULL, 'ham') e
JOIN ex_hand('multinomial', 1, 'spam', 'ham') h ON e.feature IS NOT DISTINCT FROM h.feature;
-- against the predicted class itself: every contribution 0
SELECT feature, contribution FROM nb_explain((SELECT m FROM ex_model), '{money,now}'::text[], NULL, 'spam');
-- top_k: the k largest
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money,money,now,lunch}'::text[], top_k => 2);
SELECT count(*) FROM nb_explain((SELECT m FROM ex_model), '{money,money,now,lunch}'::text[], top_k => 0);
SELECT count(*) FROM nb_explain((SELECT m FROM ex_model), '{money,money,now,lunch}'::text[], top_k => 100);

-- The sum identity: contributions sum to log p(c1|x) - log p(c2|x), c2 the runner-up, for
-- every kind, alpha and prior option, with text[] and tsvector features.
CREATE TABLE ex_opts (o jsonb);
INSERT INTO ex_opts
SELECT jsonb_build_object('kind', k, 'alpha', a) || p
FROM unnest(ARRAY['multinomial', 'bernoulli', 'complement']) k, unnest(ARRAY[1, 0.5, 0.01, 1e-8]) a,
     unnest(ARRAY['{}', '{"fit_prior": false}', '{"class_prior": {"ham": 0.2, "news": 0.5, "spam": 0.3}}']::jsonb[]) p;
-- and the estimators' options
INSERT INTO ex_opts VALUES ('{"estimator": "map", "alpha": 2, "class_alpha": 1.5}'),
  ('{"class_alpha": 3}'), ('{"kind": "bernoulli", "beta": [2, 0.5]}'),
  ('{"kind": "bernoulli", "estimator": "map", "beta": [3, 1.5], "alpha": 2}'),
  ('{"kind": "complement", "norm": true}'), ('{"kind": "complement", "norm": true, "alpha": 0.01}');
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE ex_sums(s.total, s.lp, s.pred)) AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp,
             (SELECT sum(contribution) FROM nb_explain(m, d, o)) AS total
      FROM ex_model, ex_opts,
           (SELECT tokens AS d FROM ex_rows UNION ALL
            SELECT '{money,money,now,lunch,unknown}' UNION ALL SELECT '{}' UNION ALL
            SELECT '{cheap,cheap,cheap,tomorrow}') docs) s;
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE ex_sums(s.total, s.lp, s.pred)) AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp,
             (SELECT sum(contribution) FROM nb_explain(m, d, o)) AS total
      FROM ex_model, ex_opts,
           (VALUES ('money:1,2,3 now:4 agenda'::tsvector), ('cheap win:1,2'), ('')) docs(d)) s;
-- tsvector: a lexeme counts once per position
SELECT * FROM nb_explain((SELECT m FROM ex_model), 'money:1,2 now:3 lunch'::tsvector);

-- Ties: an empty document with equal priors; the first label in byte order is predicted,
-- the other is the runner-up, and every contribution is 0
SELECT nb_predict(m, '{}'::text[], '{"fit_prior": false}') FROM ex_model;
SELECT feature, value, contribution FROM nb_explain((SELECT m FROM ex_model), '{}'::text[], '{"fit_prior": false}');
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{}'::text[], '{"fit_prior": false, "kind": "bernoulli"}');

-- alpha 0: "cheap" rules out ham and news, whose probability is 0: +Infinity, as the log odds
SELECT nb_predict_log_proba(m, '{cheap,money}'::text[], '{"alpha": 0}') FROM ex_model;
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{cheap,money}'::text[], '{"alpha": 0}');
-- alpha 0 and both classes possible: the zero factors are as many and cancel; each row
-- shows its remaining factors, which sum to the log odds.  With the runner-up ruled out,
-- the rows that rule it out are +Infinity and those that rule out the prediction
-- -Infinity: with both, their sum is undefined (NaN).
SELECT nb_predict_log_proba(m, '{cheap,lunch}'::text[], '{"alpha": 0}') FROM ex_model;
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{cheap,lunch}'::text[], '{"alpha": 0}');
SELECT kind, d::text AS document, total, ex_log_odds(lp, pred) AS log_odds, ex_sums(total, lp, pred) AS sums_match
FROM (SELECT k AS kind, d, nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp,
             (SELECT sum(contribution) FROM nb_explain(m, d, o)) AS total
      FROM ex_model, unnest(ARRAY['multinomial', 'bernoulli', 'complement']) k,
           LATERAL (SELECT jsonb_build_object('kind', k, 'alpha', 0) AS o) opts,
           (VALUES ('{cheap,lunch}'::text[]), ('{money,now}'), ('{cheap,cheap,cheap,tomorrow}')) docs(d)) s
ORDER BY 1, 2;
-- a class_prior of 0 for the runner-up: its prior row is +Infinity
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[],
                         '{"class_prior": {"ham": 1, "news": 0, "spam": 1}}', 'news');

-- a single class: nothing to tell it apart from, no rows; against itself, zeros
CREATE TABLE ex_one AS SELECT nb_train('only', tokens) AS m FROM ex_rows;
SELECT count(*) FROM nb_explain((SELECT m FROM ex_one), '{money}'::text[]);
SELECT * FROM nb_explain((SELECT m FROM ex_one), '{money}'::text[], NULL, 'only');
SELECT count(*), min(log_prob) < 0 FROM nb_feature_log_prob((SELECT m FROM ex_one));

-- NULL model or features: no rows
SELECT count(*) FROM nb_explain(NULL::nb_model, '{money}'::text[]);
SELECT count(*) FROM nb_explain((SELECT m FROM ex_model), NULL::text[]);
SELECT count(*) FROM nb_feature_log_prob(NULL);

-- Mixed features (jsonb): categorical, Gaussian, boolean and a bag under a key.
CREATE TABLE ex_mx (id int, label text, f jsonb);
INSERT INTO ex_mx VALUES
  (1, 'yes', '{"outlook": "sunny", "temp": 20, "windy": false, "tags": ["warm", "dry"]}'),
  (2, 'yes', '{"outlook": "overcast", "temp": 22, "windy": true, "tags": ["warm"]}'),
  (3, 'yes', '{"outlook": "rainy", "temp": 18, "windy": false}'),
  (4, 'no', '{"outlook": "sunny", "temp": 30, "windy": true, "tags": ["hot", "dry", "dry"]}'),
  (5, 'no', '{"outlook": "sunny", "temp": 28, "windy": null}'),
  (6, 'no', '{"outlook": "rainy", "tags": ["wet"]}');
CREATE TABLE ex_mx_model AS SELECT nb_train(label, f) AS m FROM ex_mx;

-- by hand: categorical log((N_jvc + a) / (N_jc + a K)), boolean log((T + a) / (N + 2a)),
-- Gaussian mean and population variance plus 1e-9 times the largest variance
CREATE FUNCTION ex_mx_categorical(lab text, v text, a float8) RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT ln((count(*) FILTER (WHERE f->>'outlook' = v) + a)
            / (count(*) + a * (SELECT count(DISTINCT f->>'outlook') FROM ex_mx)))
  FROM ex_mx WHERE label = lab AND f ? 'outlook'
$$;
CREATE FUNCTION ex_mx_boolean(lab text, v bool, a float8) RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT ln((count(*) FILTER (WHERE (f->>'windy')::bool = v) + a) / (count(*) + 2 * a))
  FROM ex_mx WHERE label = lab AND jsonb_typeof(f->'windy') = 'boolean'
$$;
CREATE VIEW ex_mx_gauss AS
SELECT label, avg((f->>'temp')::float8) AS mean,
       var_pop((f->>'temp')::float8) + (SELECT 1e-9 * var_pop((f->>'temp')::float8) FROM ex_mx) AS var
FROM ex_mx WHERE f ? 'temp' GROUP BY label;
CREATE FUNCTION ex_mx_gaussian(lab text, x float8) RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT -0.5 * ln(2 * pi() * var) - (x - mean) ^ 2 / (2 * var) FROM ex_mx_gauss WHERE label = lab
$$;
-- the bag "tags": multinomial over the rows that have it
CREATE FUNCTION ex_mx_tag(lab text, tag text, a float8) RETURNS float8 LANGUAGE sql STABLE AS $$
  SELECT ln(((SELECT count(*) FROM ex_mx, jsonb_array_elements_text(f->'tags') t WHERE label = lab AND t = tag) + a)
            / ((SELECT count(*) FROM ex_mx, jsonb_array_elements_text(f->'tags') t WHERE label = lab)
               + a * (SELECT count(DISTINCT t) FROM ex_mx, jsonb_array_elements_text(f->'tags') t)))
$$;

SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_mx_model)) WHERE feature <> 'tags';
SELECT a, count(*) AS rows,
       bool_and(abs(log_prob - CASE
         WHEN feature = 'outlook' THEN ex_mx_categorical(label, value, a)
         WHEN feature = 'windy' THEN ex_mx_boolean(label, value::bool, a)
         WHEN feature = 'temp' AND value = 'mean' THEN (SELECT mean FROM ex_mx_gauss g WHERE g.label = f.label)
         WHEN feature = 'temp' AND value = 'variance' THEN (SELECT var FROM ex_mx_gauss g WHERE g.label = f.label)
         WHEN feature = 'tags' THEN ex_mx_tag(label, value, a) END) < 1e-12) AS by_hand
FROM ex_mx_model, unnest(ARRAY[1, 0.5, 0.01]) a,
     nb_feature_log_prob(m, jsonb_build_object('alpha', a)) f
GROUP BY a ORDER BY a;
-- var_smoothing scales the floor
SELECT label, log_prob FROM nb_feature_log_prob((SELECT m FROM ex_mx_model), '{"var_smoothing": 0.5}')
WHERE value = 'variance';

-- explain a row: each part by hand (a Gaussian term relative to any constant cancels)
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model),
  '{"outlook": "overcast", "temp": 21.5, "windy": true, "tags": ["dry", "dry", "warm", "new"], "other": 1}'::jsonb);
SELECT bool_and(abs(e.contribution - CASE
         WHEN e.feature IS NULL THEN ln(3.0 / 3.0)
         WHEN e.feature = 'outlook' THEN ex_mx_categorical('yes', e.value, 1) - ex_mx_categorical('no', e.value, 1)
         WHEN e.feature = 'temp' THEN ex_mx_gaussian('yes', e.value::float8) - ex_mx_gaussian('no', e.value::float8)
         WHEN e.feature = 'windy' THEN ex_mx_boolean('yes', e.value::bool, 1) - ex_mx_boolean('no', e.value::bool, 1)
         ELSE e.value::float8 * (ex_mx_tag('yes', substr(e.feature, 6), 1) - ex_mx_tag('no', substr(e.feature, 6), 1))
       END) < 1e-12) AND count(*) = 6 AS by_hand
FROM nb_explain((SELECT m FROM ex_mx_model),
  '{"outlook": "overcast", "temp": 21.5, "windy": true, "tags": ["dry", "dry", "warm", "new"]}'::jsonb) e;
-- a categorical value never seen in training gets a / (N_jc + a K_j)
SELECT feature, value, abs(contribution - (ln(1.0 / (3 + 3)) - ln(1.0 / (3 + 3)))) < 1e-12 AS by_hand
FROM nb_explain((SELECT m FROM ex_mx_model), '{"outlook": "snowy"}'::jsonb) WHERE feature IS NOT NULL;
-- Bernoulli bag under a key: its absent row is named by the key, value the number of its
-- vocabulary tokens the row lacks (hot, wet, warm: 3)
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{"tags": ["dry"], "windy": false}'::jsonb,
                         '{"kind": "bernoulli"}');
-- the sum identity with jsonb features: every training row and a few more, every option
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE ex_sums(s.total, s.lp, s.pred)) AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp,
             (SELECT sum(contribution) FROM nb_explain(m, d, o)) AS total
      FROM ex_mx_model,
           (SELECT jsonb_build_object('kind', k, 'alpha', a, 'var_smoothing', v) || p AS o
            FROM unnest(ARRAY['multinomial', 'bernoulli']) k, unnest(ARRAY[1, 0.01]) a,
                 unnest(ARRAY[1e-9, 0.1]) v,
                 unnest(ARRAY['{}', '{"fit_prior": false}', '{"class_prior": {"no": 0.9, "yes": 0.1}}']::jsonb[]) p) opts,
           (SELECT f AS d FROM ex_mx UNION ALL
            SELECT '{"outlook": "snowy", "temp": 1e6, "windy": true, "tags": {"dry": 2.5, "hot": 1}}' UNION ALL
            SELECT '{}') docs) s;

-- float8[] features: Gaussian per position, NULL elements missing
CREATE TABLE ex_vec (label text, v float8[]);
INSERT INTO ex_vec VALUES ('a', '{1, 10}'), ('a', '{2, 12}'), ('a', '{3, NULL}'),
                          ('b', '{5, 11}'), ('b', '{7, 15}');
CREATE TABLE ex_vec_model AS SELECT nb_train(label, v) AS m FROM ex_vec;
SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_vec_model));
SELECT feature, value, round(contribution::numeric, 9) AS contribution
FROM nb_explain((SELECT m FROM ex_vec_model), '{4, NULL}'::float8[]);
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE ex_sums(s.total, s.lp, s.pred)) AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp,
             (SELECT sum(contribution) FROM nb_explain(m, d, o)) AS total
      FROM ex_vec_model,
           (VALUES ('{}'::jsonb), ('{"var_smoothing": 0.3}'), ('{"fit_prior": false}')) opts(o),
           (VALUES ('{4, 13}'::float8[]), ('{NULL, 9}'), ('{1e3, -1e3}'), ('{NULL, NULL}')) docs(d)) s;

-- Every row names its part and the two classes compared: the predicted class
-- (nb_predict's) and the class named, else the most probable other one
-- (nb_predict_top's second).  One prior row per explanation; Bernoulli's
-- absent tokens and the DCM's length are rows of their own, named by part
-- (the feature column holds their bag's key, '' for text[])
SELECT o AS options, count(*) AS rows,
       count(*) FILTER (WHERE e.predicted <> nb_predict(m, d, o::jsonb)) AS predicted_differs,
       count(*) FILTER (WHERE e.compared_to <> (SELECT t.label FROM nb_predict_top(m, d, 2, o::jsonb) t OFFSET 1))
         AS compared_to_differs,
       string_agg(DISTINCT e.part, ',' ORDER BY e.part) AS parts,
       count(*) FILTER (WHERE e.part = 'prior') = count(DISTINCT d) AS one_prior_each,
       count(*) FILTER (WHERE e.part IN ('absent', 'length') AND e.feature <> '') AS special_not_bag
FROM ex_model, (VALUES ('{}'), ('{"kind": "bernoulli"}'), ('{"kind": "dcm"}')) opts(o),
     (VALUES ('{money,money,now}'::text[]), ('{lunch,cheap}'), ('{tomorrow}')) docs(d),
     nb_explain(m, d, o::jsonb) e
GROUP BY o ORDER BY o;
SELECT DISTINCT e.part, e.predicted, e.compared_to
FROM ex_model, nb_explain(m, '{money}'::text[], against => 'ham') e ORDER BY 1;
SELECT e.part, e.feature, e.value
FROM ex_mx_model, nb_explain(m, '{"outlook": "overcast", "windy": true, "tags": ["warm"], "temp": 20}'::jsonb) e
ORDER BY 1, 2;

-- Errors: as nb_predict's, and the class named
\set VERBOSITY sqlstate
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], NULL, 'nope');
\set VERBOSITY default
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], NULL, 'nope');
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], top_k => -1);
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], '{"kind": "gaussian"}');
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], '{"alpha": -1}');
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{money}'::text[], '{"class_prior": {"ham": 1}}');
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{{money}}'::text[]);
SELECT * FROM nb_explain((SELECT m FROM ex_model), '{1, 2}'::float8[]);
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{money}'::text[]);
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{money}'::tsvector);
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{"temp": "warm"}'::jsonb);
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{"temp": [1]}'::jsonb);
SELECT * FROM nb_explain((SELECT m FROM ex_mx_model), '{"temp": 1}'::jsonb, '{"kind": "complement"}');
SELECT * FROM nb_explain((SELECT m FROM ex_vec_model), '{1, 2, 3}'::float8[]);
SELECT * FROM nb_explain((SELECT m FROM ex_vec_model), '{1, NaN}'::float8[]);
SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_model), '[]');
SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_model), '{"alpha": "one"}');
SELECT * FROM nb_feature_log_prob((SELECT m FROM ex_mx_model), '{"kind": "complement"}');
SELECT * FROM nb_feature_log_prob('AAAA'::nb_model);
