--
-- dcm: kind "dcm", the Dirichlet compound multinomial (Murphy eq. 3.79),
-- fitted by Elkan's EDCM from the documents per token and the document
-- length histograms of format version 3.
--
SET extra_float_digits = 0;
CREATE TABLE dcm_docs (id int, label text, tokens text[], w float8);
INSERT INTO dcm_docs VALUES
  (1, 'a', '{x,x,x,y}', 1), (2, 'a', '{x,z}', 1), (3, 'a', '{y,y}', 2),
  (4, 'b', '{z,z,w}', 1), (5, 'b', '{w}', 1), (6, 'b', '{}', 1);
CREATE TABLE dcm_model AS SELECT nb_train(label, tokens) AS m FROM dcm_docs;

-- the histograms: a has lengths 2 (twice) and 4, b 1 and 3 (the empty row has none)
SELECT m::jsonb -> 'classes' FROM dcm_model;

-- By hand (alpha 0.5): class a has D = 5 rows with a token (x 2, y 2, z 1)
-- and lengths {2: 2, 4: 1}; b has D = 3 (z 1, w 2) and {1: 1, 3: 1}.  s
-- solves s = D / Z(s), Z(s) = sum_n w_n (psi(s + n) - psi(s)): for b,
-- Z = 1/s + (1/s + 1/(s+1) + 1/(s+2)), so 3 = 2 + s/(s+1) + s/(s+2),
-- 2 s^2 + 3 s = s^2 + 3 s + 2, s = sqrt(2).  beta = d / Z, an unseen
-- token a / Z; p(x|c) = Gamma(s)/Gamma(s+n) prod Gamma(beta+x)/Gamma(beta).
-- For b and the document {w}: beta_w = 2/Z(sqrt 2), and the probability of a
-- one-token document is beta_w / s_all with s_all = (3 + 0.5 * 2) / Z.
SELECT round((2 / (2 / sqrt(2)::numeric + 1 / (sqrt(2)::numeric + 1) + 1 / (sqrt(2)::numeric + 2)))
             / ((3 + 0.5 * 2) / (2 / sqrt(2)::numeric + 1 / (sqrt(2)::numeric + 1) + 1 / (sqrt(2)::numeric + 2))), 12)
       AS by_hand,
       round(exp(log_prob)::numeric, 12) AS nbc
FROM dcm_model, nb_feature_log_prob(m, '{"kind": "dcm", "alpha": 0.5}')
WHERE value = 'w' AND label = 'b';

-- A posterior by hand: classes a ({z,z,w}, {w}) and b ({y,y,x}, {x}) both
-- have lengths 1 and 3 and D = 3, so s = sqrt(2) as above and the same Z;
-- with alpha 0.5, for the document {w,w}: a has beta_w = 2/Z, b beta_w =
-- 0.5/Z (never seen), equal s_all, equal priors, so
-- p(a) = beta(beta + 1) / (beta(beta + 1) + beta0(beta0 + 1)).
WITH z AS (SELECT 2 / sqrt(2)::numeric + 1 / (sqrt(2)::numeric + 1) + 1 / (sqrt(2)::numeric + 2) AS z)
SELECT round((2 / z) * (2 / z + 1) / ((2 / z) * (2 / z + 1) + (0.5 / z) * (0.5 / z + 1)), 12) AS by_hand,
       round((nb_predict_proba(m, '{w,w}'::text[], '{"kind": "dcm", "alpha": 0.5}') ->> 'a')::numeric, 12) AS nbc
FROM z, (SELECT nb_train(l, t::text[]) AS m
         FROM (VALUES ('a', '{z,z,w}'), ('a', '{w}'), ('b', '{y,y,x}'), ('b', '{x}')) v(l, t)) s;

-- posteriors: burstiness makes a repeated token weigh less than in the multinomial
-- (p_dcm as test/parity/dcm_ref.py gives it: DcmNB(rows, labels, alpha=0.1))
SELECT nb_predict(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm"}') AS dcm,
       nb_predict(m, '{x,x,x,x,w}'::text[]) AS multinomial,
       round((nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm"}') ->> 'a')::numeric, 6) AS p_dcm,
       round((nb_predict_proba(m, '{x,x,x,x,w}'::text[]) ->> 'a')::numeric, 6) AS p_multinomial
FROM dcm_model;
-- alpha not given is the pseudo document count 0.1 (NB_DCM_DEFAULT_ALPHA,
-- chosen by cross-validation on training data), for dcm only
SELECT nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm"}')
       = nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm", "alpha": 0.1}') AS dcm_default_0_1,
       nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm"}')
       <> nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"kind": "dcm", "alpha": 1}') AS not_1,
       nb_predict_proba(m, '{x,x,x,x,w}'::text[])
       = nb_predict_proba(m, '{x,x,x,x,w}'::text[], '{"alpha": 1}') AS multinomial_default_1
FROM dcm_model;
-- unknown tokens are left out; an empty bag leaves the prior
SELECT nb_predict_proba(m, '{x,unknown}'::text[], '{"kind": "dcm"}')
       = nb_predict_proba(m, '{x}'::text[], '{"kind": "dcm"}') AS unknown_ignored,
       nb_predict_proba(m, '{}'::text[], '{"kind": "dcm"}') AS empty
FROM dcm_model;
-- every posterior finite and summing to 1, whatever the smoothing
SELECT a, bool_and(abs((p ->> 'a')::float8 + (p ->> 'b')::float8 - 1) < 1e-12) AS sums_to_1
FROM dcm_model, (VALUES (1e-9), (0.5), (1), (1e6)) AS v(a),
     LATERAL (SELECT nb_predict_proba(m, t.tokens, jsonb_build_object('kind', 'dcm', 'alpha', v.a)) AS p
              FROM dcm_docs t) x
GROUP BY a ORDER BY a;

-- jsonb bags and tsvector rows, weights, and a mixed model (dcm for the bag only)
SELECT nb_predict(nb_train(label, jsonb_build_object('words', tokens, 'n', id > 3)),
                  '{"words": ["x", "x", "y"], "n": false}'::jsonb, '{"kind": "dcm"}')
FROM dcm_docs;
SELECT nb_predict(nb_train(label, array_to_string(tokens, ' ')::tsvector, w),
                  'x:1,2 y:3'::tsvector, '{"kind": "dcm"}')
FROM dcm_docs;

-- merges: the histograms of split training add up to those of the whole
SELECT nb_merge(p ORDER BY part)::text = (SELECT m::text FROM dcm_model) AS merged_equals_whole
FROM (SELECT id % 2 AS part, nb_train(label, tokens) AS p FROM dcm_docs GROUP BY id % 2) s;
SELECT nb_subtract(m, (SELECT nb_train(label, tokens) FROM dcm_docs WHERE id > 4))::text
       = (SELECT nb_train(label, tokens)::text FROM dcm_docs WHERE id <= 4) AS subtracted_equals_rest
FROM dcm_model;

-- nb_explain: a row per known token w, log Gamma(beta_w + x_w) - log
-- Gamma(beta_w) of the predicted class less that of the other; a row for
-- the bag's length (feature: the bag's key, '' for text[]; value: its n
-- known occurrences), log Gamma(s) - log Gamma(s + n) of one less the
-- other; and the prior.  By hand in the model above (a: {z,z,w}, {w}; b:
-- {y,y,x}, {x}; alpha 0.5; the same Z and s in both classes), the document
-- {w,w,x,unknown}: w has beta 2/Z in a, 0.5/Z in b, and Gamma(b + 2) /
-- Gamma(b) = b (b + 1); x once contributes log(0.5/Z) - log(2/Z) = log
-- 0.25; the length (3) and the prior 0.
WITH z AS (SELECT 2 / sqrt(2)::numeric + 1 / (sqrt(2)::numeric + 1) + 1 / (sqrt(2)::numeric + 2) AS z)
SELECT e.feature, e.value, round(e.contribution::numeric, 10) AS nbc,
       round(CASE e.feature
               WHEN 'w' THEN ln((2 / z) * (2 / z + 1)) - ln((0.5 / z) * (0.5 / z + 1))
               WHEN 'x' THEN ln(0.25)
               ELSE 0 END, 10) AS by_hand
FROM z, (SELECT nb_train(l, t::text[]) AS m
         FROM (VALUES ('a', '{z,z,w}'), ('a', '{w}'), ('b', '{y,y,x}'), ('b', '{x}')) v(l, t)) s,
     nb_explain(m, '{w,w,x,unknown}'::text[], '{"kind": "dcm", "alpha": 0.5}') e;
-- a bag under a key and a boolean: the length row names the key
SELECT e.feature, e.value, e.contribution > 0 AS favours_predicted
FROM (SELECT nb_train(label, jsonb_build_object('words', tokens, 'n', id > 3)) AS m FROM dcm_docs) s,
     nb_explain(m, '{"words": ["x", "x", "y"], "n": false}'::jsonb, '{"kind": "dcm"}') e
ORDER BY 1 NULLS FIRST;
-- the rows add up to the log posterior odds, against every other class,
-- for text[], tsvector and jsonb documents and several alphas
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE abs(total - ((lp ->> pred)::float8 - (lp ->> other)::float8)) < 1e-9)
         AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp, l AS other,
             (SELECT sum(contribution) FROM nb_explain(m, d, o, l)) AS total
      FROM dcm_model, (VALUES ('a'), ('b')) c(l),
           (SELECT jsonb_build_object('kind', 'dcm', 'alpha', a) AS o FROM unnest(ARRAY[0.01, 0.5, 1, 100]) a) opts,
           (SELECT tokens AS d FROM dcm_docs UNION ALL
            SELECT '{x,x,x,x,w,unknown}' UNION ALL SELECT '{y,y,y,z,z}') docs) s
WHERE pred <> other;
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE abs(total - ((lp ->> pred)::float8 - (lp ->> other)::float8)) < 1e-9)
         AS sums_match
FROM (SELECT nb_predict(m, d, o) AS pred, nb_predict_log_proba(m, d, o) AS lp, l AS other,
             (SELECT sum(contribution) FROM nb_explain(m, d, o, l)) AS total
      FROM (SELECT nb_train(label, array_to_string(tokens, ' ')::tsvector, w) AS m FROM dcm_docs) s,
           (VALUES ('a'), ('b')) c(l),
           (VALUES ('x:1,2 y:3'::tsvector), ('w:1 z:2,3,4'), ('x:1,5 q:2')) docs(d),
           (VALUES ('{"kind": "dcm"}'::jsonb), ('{"kind": "dcm", "alpha": 0.1}')) opts(o)) s
WHERE pred <> other;
SELECT count(*) AS explanations,
       count(*) FILTER (WHERE abs(total - ((lp ->> pred)::float8 - (lp ->> other)::float8)) < 1e-9)
         AS sums_match
FROM (SELECT nb_predict(m, d, '{"kind": "dcm"}') AS pred,
             nb_predict_log_proba(m, d, '{"kind": "dcm"}') AS lp, l AS other,
             (SELECT sum(contribution) FROM nb_explain(m, d, '{"kind": "dcm"}', l)) AS total
      FROM (SELECT nb_train(label, jsonb_build_object('words', tokens, 'n', id > 3)) AS m FROM dcm_docs) s,
           (VALUES ('a'), ('b')) c(l),
           (VALUES ('{"words": ["x", "x", "y"], "n": false}'::jsonb), ('{"words": ["w", "z", "z"], "n": true}'),
                   ('{"words": ["x"]}')) docs(d)) s
WHERE pred <> other;

-- errors: a model without lengths (pruned of tokens: written as format
-- version 1, as before version 3) and its merge with a model that has
-- them, a model without bags, no smoothing
\set VERBOSITY default
SELECT nb_predict(nbt_v1, '{x}'::text[], '{"kind": "dcm"}')
FROM (SELECT nb_merge(m, nb_prune(m, '{"top_k": 1}')) AS nbt_v1 FROM dcm_model) s;
SELECT nb_info(nb_prune(m, '{"top_k": 1}')) ->> 'format_version' AS pruned_version,
       nb_predict(nb_prune(m, '{"top_k": 1}'), '{x}'::text[]) AS still_scores
FROM dcm_model;
SELECT nb_predict(nb_train(label, jsonb_build_object('n', id)), '{"n": 1}'::jsonb, '{"kind": "dcm"}')
FROM dcm_docs;
SELECT nb_predict(m, '{x}'::text[], '{"kind": "dcm", "alpha": 0}') FROM dcm_model;
\set VERBOSITY sqlstate
SELECT nb_predict(nb_prune(m, '{"top_k": 1}'), '{x}'::text[], '{"kind": "dcm"}') FROM dcm_model;
\set VERBOSITY default
DROP TABLE dcm_docs, dcm_model;
