--
-- calibrate: the prediction options "temperature" and "sigmoid", and
-- nb_calibrate.  Expected numbers are computed here from the definitions
-- (p proportional to exp(log p / T); q = 1 / (1 + exp(a p + b))), not
-- copied from a run; the fits are checked by their optimality conditions
-- (the derivative of the out-of-fold log loss is 0 at the fitted T), and
-- against scikit-learn and numpy by the parity suite (test/parity/calibration.py).
--
SET jit = off;
CREATE TABLE cal_docs AS
SELECT i AS id,
       CASE WHEN i % 7 < 3 THEN 'ham' WHEN i % 7 < 6 THEN 'spam' ELSE 'eggs' END AS label,
       ARRAY(SELECT 'w' || ((i * j + (i % 7) * 3) % 17) FROM generate_series(1, 2 + i % 4) AS j) AS tokens,
       i % 4 AS fold
FROM generate_series(1, 90) AS i;
CREATE TABLE cal_model AS SELECT nb_train(label, tokens) AS m FROM cal_docs;
CREATE TABLE cal_two AS SELECT nb_train(label, tokens) AS m FROM cal_docs WHERE label <> 'eggs';

-- temperature: the log posteriors divided by T and normalized again
SELECT t, bool_and(abs((nb_predict_log_proba(m, d.tokens, jsonb_build_object('temperature', t)) ->> c)::float8
                       - ((l ->> c)::float8 / t - ln(s))) < 1e-12) AS as_defined
FROM cal_model, cal_docs AS d, unnest(ARRAY[0.25, 0.5, 2, 10]) AS t,
     LATERAL (SELECT nb_predict_log_proba(m, d.tokens) AS l) AS lp,
     LATERAL (SELECT sum(exp((lp.l ->> k)::float8 / t)) AS s FROM jsonb_object_keys(lp.l) AS k) AS z,
     jsonb_object_keys(lp.l) AS c
GROUP BY t ORDER BY t;
-- 1 (the default) is not applied: the same bytes from every function
SELECT bool_and(nb_predict_proba(m, tokens)::text = nb_predict_proba(m, tokens, '{"temperature": 1}')::text
                AND nb_predict_log_proba(m, tokens)::text = nb_predict_log_proba(m, tokens, '{"temperature": 1.0}')::text)
       AS same_bytes
FROM cal_model, cal_docs;
SELECT bool_and(a.label = b.label AND a.probability = b.probability) AS same_top
FROM cal_model, cal_docs AS d,
     LATERAL (SELECT row_number() OVER () AS n, * FROM nb_predict_top(m, d.tokens, NULL)) AS a
     JOIN LATERAL (SELECT row_number() OVER () AS n, * FROM nb_predict_top(m, d.tokens, NULL, '{"temperature": 1}')) AS b
     USING (n);
-- the predicted class never changes, not even where rounding ties the classes
SELECT t, bool_and(nb_predict(m, tokens) = nb_predict(m, tokens, jsonb_build_object('temperature', t))) AS same_label,
       bool_and(nb_predict(m, tokens) = (SELECT label FROM nb_predict_top(m, tokens, 1, jsonb_build_object('temperature', t))))
       AS top_is_predicted
FROM cal_model, cal_docs, unnest(ARRAY[1e-300, 0.01, 3, 1e300]::float8[]) AS t
GROUP BY t ORDER BY t;
-- an extreme temperature is a limit, never NaN: 1e-300 puts everything on the best class
SELECT nb_predict_proba(m, ARRAY['w1', 'w2'], '{"temperature": 1e-300}'),
       nb_predict_proba(m, ARRAY['w1', 'w2'], '{"temperature": 1e300}')
FROM cal_model;
-- nb_predict_top and nb_grid_metrics honour it too
SELECT bool_and(abs(t.probability - (nb_predict_proba(m, d.tokens, '{"temperature": 3}') ->> t.label)::float8) = 0)
       AS top_matches_proba
FROM cal_model, cal_docs AS d, nb_predict_top(m, d.tokens, NULL, '{"temperature": 3}') AS t;
SELECT abs((g[1] ->> 'log_loss')::float8 - (p ->> 'log_loss')::float8) < 1e-12 AS grid_matches_metrics
FROM (SELECT nb_grid_metrics(m, tokens, label, ARRAY['{"temperature": 3}'::jsonb]) AS g,
             nb_metrics(label, nb_predict_proba(m, tokens, '{"temperature": 3}')) AS p
      FROM cal_model, cal_docs) AS s;
-- a grid of temperatures cross-validates (the calibration is not refitted per fold: see nb_calibrate)
SELECT options, round(accuracy::numeric, 4) AS accuracy, round(log_loss::numeric, 4) AS log_loss
FROM nb_cross_validate('cal_docs', 'label', 'tokens', fold_column => 'fold',
                       grid => '{"temperature": [0.5, 1, 2]}')
ORDER BY log_loss;

-- invalid temperatures (22023)
SELECT nb_predict_proba(m, ARRAY['w1'], '{"temperature": 0}') FROM cal_model;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"temperature": -2}') FROM cal_model;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"temperature": 1e400}') FROM cal_model;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"temperature": "2"}') FROM cal_model;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"temperature": null}') FROM cal_model;
-- complement's scores are no probabilities
SELECT nb_predict(m, ARRAY['w1'], '{"kind": "complement", "temperature": 2}') FROM cal_model;

-- sigmoid: with two classes one class's q = 1 / (1 + exp(a p + b)), the other's 1 - q
SELECT bool_and(abs((nb_predict_proba(m, tokens, '{"sigmoid": {"spam": [-4, 1.5]}}') ->> 'spam')::float8
                    - 1 / (1 + exp(-4 * (nb_predict_proba(m, tokens) ->> 'spam')::float8 + 1.5))) < 1e-15
                AND abs((nb_predict_proba(m, tokens, '{"sigmoid": {"spam": [-4, 1.5]}}') ->> 'ham')::float8
                    - 1 / (1 + exp(4 * (nb_predict_proba(m, tokens) ->> 'spam')::float8 - 1.5))) < 1e-15)
       AS binary_as_defined
FROM cal_two, cal_docs;
-- with more, every class's q normalized
SELECT bool_and(abs((nb_predict_proba(m, d.tokens, o) ->> c)::float8 - q.q / q.s) < 1e-15) AS multiclass_as_defined
FROM cal_model, cal_docs AS d,
     (SELECT '{"sigmoid": {"eggs": [-3, 2], "ham": [-5, 1], "spam": [-2, 0.5]}}'::jsonb AS o) AS opt,
     jsonb_object_keys(nb_predict_proba(m, d.tokens)) AS c,
     LATERAL (SELECT max(x) FILTER (WHERE k = c) AS q, sum(x) AS s
              FROM (SELECT k, 1 / (1 + exp((o -> 'sigmoid' -> k ->> 0)::float8 * (nb_predict_proba(m, d.tokens) ->> k)::float8
                                           + (o -> 'sigmoid' -> k ->> 1)::float8)) AS x
                    FROM jsonb_object_keys(o -> 'sigmoid') AS k) AS e) AS q;
-- the predicted class is the most probable after the sigmoids (it can change), nb_predict_top's first
SELECT bool_and(nb_predict(m, tokens, o) = (SELECT label FROM nb_predict_top(m, tokens, 1, o))) AS top_is_predicted,
       count(*) FILTER (WHERE nb_predict(m, tokens, o) <> nb_predict(m, tokens)) AS labels_changed
FROM cal_model, cal_docs, (SELECT '{"sigmoid": {"eggs": [-3, 2], "ham": [-5, 1], "spam": [-2, 0.5]}}'::jsonb AS o) AS opt;
-- null: none
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": null}') = nb_predict_proba(m, ARRAY['w1']) AS null_is_none
FROM cal_model;
-- invalid sigmoids (22023)
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"spam": [1, 2], "ham": [1, 2]}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"spam": [1, 2]}}') FROM cal_model;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"bacon": [1, 2]}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"spam": [1]}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"spam": [1, "x"]}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": {"spam": [1e400, 0]}}') FROM cal_two;
SELECT nb_predict_proba(m, ARRAY['w1'], '{"sigmoid": [1, 2]}') FROM cal_two;
SELECT nb_predict_proba(nb_train('one', ARRAY['w1']), ARRAY['w1'], '{"sigmoid": {"one": [1, 2]}}');

-- kept in the model with the other options; a call's own options take precedence
CREATE TABLE cal_kept AS SELECT nb_with_options(m, '{"alpha": 0.5, "temperature": 2}') AS m FROM cal_model;
SELECT nb_info(m) -> 'options' FROM cal_kept;
SELECT bool_and(nb_predict_proba(k.m, tokens)::text = nb_predict_proba(c.m, tokens, '{"alpha": 0.5, "temperature": 2}')::text)
       AS stored_applied,
       bool_and(nb_predict_proba(k.m, tokens, '{"temperature": 1}')::text = nb_predict_proba(c.m, tokens, '{"alpha": 0.5}')::text)
       AS call_overrides
FROM cal_kept AS k, cal_model AS c, cal_docs;
SELECT nb_with_options(m, '{"temperature": 0}') FROM cal_model;

-- nb_calibrate: the fitted options and the out-of-fold log loss and Brier
-- score before and after, here against out-of-fold models trained directly
-- on the other folds.  The fitted T is where the out-of-fold log loss stops
-- falling: its derivative in 1 / T, the sum over rows of E_p[log p] - log
-- p(actual) under the tempered p, is 0.
WITH oof AS (
    SELECT f.fold, nb_train(d.label, d.tokens) AS m
    FROM (SELECT DISTINCT fold FROM cal_docs) AS f JOIN cal_docs AS d ON d.fold <> f.fold GROUP BY f.fold),
fit AS (
    SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', fold_column => 'fold', method => 'temperature')),
rows AS (
    SELECT d.id, d.label, nb_predict_log_proba(o.m, d.tokens) AS l,
           nb_predict_proba(o.m, d.tokens) AS p, nb_predict_proba(o.m, d.tokens, fit.calibrated_options) AS pt,
           (fit.calibrated_options ->> 'temperature')::float8 AS t
    FROM cal_docs AS d JOIN oof AS o USING (fold), fit),
sums AS (
    SELECT avg(-ln((r.p ->> r.label)::float8)) AS log_loss, avg(-ln((r.pt ->> r.label)::float8)) AS calibrated_log_loss,
           avg(b.brier) AS brier, avg(b.calibrated_brier) AS calibrated_brier,
           sum(e.mean - (r.l ->> r.label)::float8) / count(*) AS derivative
    FROM rows AS r,
         LATERAL (SELECT sum(exp((r.l ->> k)::float8 / r.t) * (r.l ->> k)::float8) / sum(exp((r.l ->> k)::float8 / r.t)) AS mean
                  FROM jsonb_object_keys(r.l) AS k) AS e,
         LATERAL (SELECT sum(((r.p ->> k)::float8 - (k = r.label)::int) ^ 2) AS brier,
                         sum(((r.pt ->> k)::float8 - (k = r.label)::int) ^ 2) AS calibrated_brier
                  FROM jsonb_object_keys(r.p) AS k) AS b)
SELECT abs(fit.log_loss - s.log_loss) < 1e-12 AS log_loss, abs(fit.calibrated_log_loss - s.calibrated_log_loss) < 1e-12 AS calibrated,
       abs(fit.brier - s.brier) < 1e-12 AS brier, abs(fit.calibrated_brier - s.calibrated_brier) < 1e-12 AS calibrated_brier,
       fit.calibrated_log_loss < fit.log_loss AS better, abs(s.derivative) < 1e-9 AS derivative_zero
FROM fit, sums AS s;
-- the same with folds => 4 (nb_cross_validate's assignment), and the sigmoids
SELECT jsonb_object_keys(calibrated_options -> 'sigmoid') AS class, calibrated_log_loss < log_loss AS better,
       calibrated_brier < brier AS brier_better
FROM nb_calibrate('cal_docs', 'label', 'tokens', folds => 4, method => 'sigmoid') ORDER BY 1;
-- auto (the default): the method of the lower out-of-fold log loss
SELECT a.calibrated_options = CASE WHEN t.calibrated_log_loss <= s.calibrated_log_loss
                                   THEN t.calibrated_options ELSE s.calibrated_options END AS auto_is_best
FROM nb_calibrate('cal_docs', 'label', 'tokens') AS a,
     nb_calibrate('cal_docs', 'label', 'tokens', method => 'temperature') AS t,
     nb_calibrate('cal_docs', 'label', 'tokens', method => 'sigmoid') AS s;
-- the options given are kept, the calibration added; into the model in one step
SELECT calibrated_options - 'temperature' - 'sigmoid' AS kept
FROM nb_calibrate('cal_docs', 'label', 'tokens', options => '{"alpha": 0.5, "kind": "bernoulli"}');
CREATE TABLE cal_calibrated AS
SELECT nb_with_options(m, (SELECT calibrated_options FROM nb_calibrate('cal_docs', 'label', 'tokens', method => 'temperature'))) AS m
FROM cal_model;
SELECT bool_and(nb_predict(c.m, tokens) = nb_predict(m.m, tokens)) AS same_labels,
       bool_and(nb_predict_proba(c.m, tokens)::text <> nb_predict_proba(m.m, tokens)::text) AS other_probabilities
FROM cal_calibrated AS c, cal_model AS m, cal_docs;
-- text documents with a tokenizer
CREATE TABLE cal_text AS SELECT id, label, array_to_string(tokens, ' ') AS body FROM cal_docs;
SELECT calibrated_options ? 'temperature' AS temperature, calibrated_log_loss < log_loss AS better
FROM nb_calibrate('cal_text', 'label', 'body', method => 'temperature', tokenizer => '{"lowercase": false}');

-- bad input (22023 unless said)
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', method => 'isotonic');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', method => NULL);
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', options => '{"temperature": 2}');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', options => '{"kind": "complement"}');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', options => '{"alpha": -1}');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', folds => 1);
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', folds => 4, fold_column => 'fold');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'nothing');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', fold_column => 'label');
SELECT * FROM nb_calibrate('cal_docs', 'label', 'tokens', tokenizer => '{}');
-- too few rows, one class, a fold of every row
CREATE TABLE cal_small AS SELECT * FROM cal_docs WHERE id <= 3;
SELECT * FROM nb_calibrate('cal_small', 'label', 'tokens', folds => 5);
CREATE TABLE cal_one AS SELECT * FROM cal_docs WHERE label = 'ham';
SELECT * FROM nb_calibrate('cal_one', 'label', 'tokens');
CREATE TABLE cal_none AS SELECT * FROM cal_docs WHERE false;
SELECT * FROM nb_calibrate('cal_none', 'label', 'tokens');
-- rows whose log posteriors would take more than 256 MB (5,800 rows of as
-- many classes: 5,800 x 5,801 x 8 bytes): refused after training, before
-- any row is scored
CREATE TABLE cal_wide AS SELECT 'c' || i AS label, ARRAY['t' || (i % 10)] AS tokens FROM generate_series(1, 5800) i;
SELECT * FROM nb_calibrate('cal_wide', 'label', 'tokens');
UPDATE cal_small SET fold = 0;
SELECT * FROM nb_calibrate('cal_small', 'label', 'tokens', fold_column => 'fold');
-- rows every out-of-fold model gets right: no temperature minimizes the log loss
CREATE TABLE cal_easy AS
SELECT i AS id, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS label,
       CASE WHEN i % 2 = 0 THEN ARRAY['x', 'x', 'y'] ELSE ARRAY['z', 'z', 'w'] END AS tokens
FROM generate_series(1, 20) AS i;
SELECT * FROM nb_calibrate('cal_easy', 'label', 'tokens', method => 'temperature');
-- the sigmoid, whose Platt targets keep it finite, has a higher log loss
-- than these rows' uncalibrated one: auto keeps neither, the options unchanged
SELECT s.calibrated_log_loss > s.log_loss AS sigmoid_worse
FROM nb_calibrate('cal_easy', 'label', 'tokens', method => 'sigmoid') AS s;
SELECT calibrated_options, calibrated_log_loss = log_loss AS unchanged_loss,
       calibrated_brier = brier AS unchanged_brier
FROM nb_calibrate('cal_easy', 'label', 'tokens', options => '{"alpha": 0.5}');

-- the support aggregate refuses what it cannot mean (fold 0's rows scored
-- by the whole model minus fold 0's)
CREATE TABLE cal_fold AS SELECT nb_train(label, tokens) AS f FROM cal_docs WHERE fold = 0;
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'spam'], NULL, 'cubic')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0;
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['ham', 'spam'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0;
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'ham'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0;
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'spam'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold IN (0, 1);
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], NULL, ARRAY['eggs', 'ham', 'spam'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0;
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'spam'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0 AND d.label = 'ham';
SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'spam'], NULL, 'auto')
FROM cal_model, cal_fold, cal_docs AS d WHERE false;
-- fold 0's rows alone: the fit of their scores under that fold's model, as
-- nb_calibrate with every other fold's rows left out of the calibration
-- (their fold a NULL) fits them
CREATE TABLE cal_fold0 AS SELECT label, tokens, CASE WHEN fold = 0 THEN 0 END AS fold FROM cal_docs;
SELECT c.calibrated_options = (a.r -> 'options') AS same_options, c.calibrated_log_loss = (a.r ->> 'calibrated_log_loss')::float8 AS same_loss
FROM (SELECT nbc_calibration(d.fold, d.tokens, d.label, m, ARRAY[f], ARRAY[0::bigint], ARRAY['eggs', 'ham', 'spam'], NULL, 'temperature') AS r
      FROM cal_model, cal_fold, cal_docs AS d WHERE d.fold = 0) AS a,
     nb_calibrate('cal_fold0', 'label', 'tokens', fold_column => 'fold', method => 'temperature') AS c;

DROP TABLE cal_docs, cal_model, cal_fold, cal_fold0, cal_two, cal_kept, cal_calibrated, cal_text, cal_small, cal_one, cal_none, cal_wide, cal_easy;
