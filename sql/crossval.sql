--
-- crossval: nb_cross_validate and nb_grid_options.  Every result is checked
-- against out-of-fold models trained directly on the other folds, with the
-- metrics computed here by hand (accuracy, macro F1, log loss).
--
-- (The reference queries are estimated expensive enough for JIT, which
-- would only add seconds of compiling.)
SET jit = off;
CREATE TABLE cv_docs AS
SELECT i AS id,
       CASE WHEN i % 7 < 3 THEN 'ham' WHEN i % 7 < 6 THEN 'spam' ELSE 'eggs' END AS label,
       ARRAY(SELECT 'w' || ((i * j + (i % 7) * 3) % 17) FROM generate_series(1, 2 + i % 4) AS j) AS tokens,
       i % 4 AS fold
FROM generate_series(1, 90) AS i;

-- grids: an object is every combination of its values, an array the union
SELECT * FROM nb_grid_options('{"kind": ["multinomial", "bernoulli"], "alpha": [0.5, 1], "fit_prior": false}');
SELECT * FROM nb_grid_options('[{"kind": "complement", "alpha": [0.1, 1]}, {}]');
-- at most 10,000 option sets, counted before any is made (54000 past that)
SELECT count(*) AS option_sets FROM nb_grid_options(jsonb_build_object(
  'alpha', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g),
  'var_smoothing', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g)));
SELECT count(*) FROM nb_grid_options(jsonb_build_object(
  'alpha', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g),
  'var_smoothing', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g),
  'fit_prior', '[true, false]'::jsonb));
SELECT count(*) FROM nb_grid_options(jsonb_build_array(
  jsonb_build_object('alpha', (SELECT jsonb_agg(g) FROM generate_series(1, 10000) g)), '{}'::jsonb));

-- the expected results: for every option set and fold, a model trained on
-- the other folds (rows of a NULL fold are always trained on), its
-- predictions on the fold, and the metrics by hand (population standard
-- deviation over folds; no log loss for complement, whose scores are not
-- probabilities); tab has columns label, features, fold
CREATE FUNCTION cv_expected(tab regclass, grid jsonb)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
               macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN QUERY EXECUTE format($$
WITH docs AS (SELECT * FROM %1$s WHERE label IS NOT NULL AND features IS NOT NULL),
models AS (
    SELECT f.fold, (SELECT nb_train(label, features) FROM docs d WHERE d.fold IS DISTINCT FROM f.fold) AS model
    FROM (SELECT DISTINCT fold FROM docs WHERE fold IS NOT NULL) f),
pred AS (
    SELECT g.options, d.fold, d.label, p.proba,
           (SELECT key FROM jsonb_each(p.proba) ORDER BY value::text::float8 DESC, key COLLATE "C" LIMIT 1) AS predicted
    FROM nb_grid_options($1) AS g(options)
    CROSS JOIN docs d JOIN models m USING (fold)
    CROSS JOIN LATERAL (SELECT nb_predict_proba(m.model, d.features, g.options) AS proba) p),
classes AS (SELECT DISTINCT options, fold, label AS c FROM pred
            UNION SELECT DISTINCT options, fold, predicted FROM pred),
f1 AS (
    SELECT c.options, c.fold,
           2 * count(*) FILTER (WHERE p.label = c.c AND p.predicted = c.c)::float8
             / (count(*) FILTER (WHERE p.label = c.c) + count(*) FILTER (WHERE p.predicted = c.c)) AS f1
    FROM classes c JOIN pred p USING (options, fold)
    GROUP BY c.options, c.fold, c.c),
per_fold AS (
    SELECT options, fold, avg((label = predicted)::int)::float8 AS accuracy,
           CASE WHEN options ->> 'kind' IS DISTINCT FROM 'complement'
                THEN avg(-ln((proba ->> label)::float8)) END AS log_loss
    FROM pred GROUP BY options, fold),
macro AS (SELECT options, fold, avg(f1) AS macro_f1 FROM f1 GROUP BY options, fold)
SELECT options, avg(accuracy), stddev_pop(accuracy), avg(macro_f1), stddev_pop(macro_f1),
       avg(log_loss), stddev_pop(log_loss)
FROM per_fold JOIN macro USING (options, fold) GROUP BY options$$, tab) USING grid;
END $f$;

-- got: nb_cross_validate's rows; the largest difference from cv_expected,
-- and the same log losses NULL (greatest() would skip a NULL)
CREATE FUNCTION cv_compare(got regclass, tab regclass, grid jsonb) RETURNS TABLE (option_sets bigint, equal_to_direct_training boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT count(*), max(greatest(abs(g.accuracy - e.accuracy), abs(g.accuracy_std - e.accuracy_std),
                                       abs(g.macro_f1 - e.macro_f1), abs(g.macro_f1_std - e.macro_f1_std),
                                       abs(g.log_loss - e.log_loss), abs(g.log_loss_std - e.log_loss_std))) < 1e-9
                          AND bool_and((g.log_loss IS NULL) = (e.log_loss IS NULL)
                                       AND (g.log_loss_std IS NULL) = (e.log_loss_std IS NULL))
         FROM %s g FULL JOIN cv_expected(%L, $1) e USING (options)', got, tab) USING grid;
END $$;

CREATE VIEW cv_folded AS SELECT label, tokens AS features, fold FROM cv_docs;
-- a fold column
CREATE TABLE cv_got AS
SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', fold_column => 'fold',
                                grid => '[{"kind": ["multinomial", "bernoulli"], "alpha": [0.1, 1], "fit_prior": [true, false]},
                                          {"kind": "complement", "alpha": [0.1, 1]}]');
SELECT * FROM cv_compare('cv_got', 'cv_folded', '[{"kind": ["multinomial", "bernoulli"], "alpha": [0.1, 1], "fit_prior": [true, false]},
                            {"kind": "complement", "alpha": [0.1, 1]}]');
-- best first
SELECT bool_and(accuracy >= next_accuracy) AS best_first
FROM (SELECT accuracy, lead(accuracy) OVER () AS next_accuracy FROM cv_got) s;
-- complement's scores are not probabilities: no log loss (nor its spread)
SELECT options ->> 'kind' AS kind, count(*) AS option_sets, count(log_loss) AS with_log_loss,
       count(log_loss_std) AS with_log_loss_std
FROM cv_got GROUP BY 1 ORDER BY 1;
DROP TABLE cv_got;
-- the same in nb_grid_metrics: complement's objects have log_loss and brier
-- null, and the metrics of its labels, those of nb_metrics over nb_predict
WITH m AS (SELECT nb_train(label, tokens) AS model FROM cv_docs),
g AS (SELECT nb_grid_metrics(m.model, d.tokens, d.label,
                             ARRAY['{"kind": "complement"}', '{"kind": "multinomial"}']::jsonb[]) AS a
      FROM cv_docs d, m),
l AS (SELECT nb_metrics(d.label, nb_predict(m.model, d.tokens, '{"kind": "complement"}')) AS c
      FROM cv_docs d, m)
SELECT g.a[1] -> 'log_loss' AS complement_log_loss, g.a[1] -> 'brier' AS complement_brier,
       jsonb_typeof(g.a[2] -> 'log_loss') AS multinomial_log_loss, jsonb_typeof(g.a[2] -> 'brier') AS multinomial_brier,
       g.a[1] - 'log_loss' - 'brier' = l.c AS complement_same_as_labels
FROM g, l;
-- leave-one-out: a fold per row, more folds than a query has columns
-- (1664); nb_cross_validate scores 8 folds per pass over the rows
CREATE TABLE cv_loo AS
SELECT row_number() OVER (ORDER BY d.id, g) AS fold, d.label, d.tokens AS features
FROM cv_docs d, generate_series(1, 19) AS g;
CREATE TABLE cv_got AS
SELECT * FROM nb_cross_validate('cv_loo', 'label', 'features', fold_column => 'fold', grid => '{"kind": "multinomial"}');
SELECT * FROM cv_compare('cv_got', 'cv_loo', '{"kind": "multinomial"}');
DROP TABLE cv_got, cv_loo;

-- counted folds: rows numbered by label (byte order), then by a 64-bit hash
-- of the features; row n goes to fold n % folds
CREATE VIEW cv_counted AS
SELECT label, tokens AS features,
       (row_number() OVER (ORDER BY label COLLATE "C", hash_array_extended(tokens COLLATE "C", 0)) - 1) % 3 AS fold
FROM cv_docs;
CREATE TABLE cv_got AS SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', 3);
SELECT * FROM cv_compare('cv_got', 'cv_counted', nb_grid_default((SELECT nb_train(label, tokens) FROM cv_docs)));
-- every class spread evenly over the folds
SELECT label, array_agg(n ORDER BY fold) AS rows_per_fold
FROM (SELECT label, fold, count(*) AS n FROM cv_counted GROUP BY 1, 2) s GROUP BY label ORDER BY label;
-- the folds depend on the rows' contents only: the same rows stored in
-- another order, and rewritten by VACUUM FULL, give the same results
CREATE TABLE cv_shuffled AS SELECT * FROM cv_docs ORDER BY md5(id::text);
DELETE FROM cv_shuffled WHERE id % 5 = 0;
INSERT INTO cv_shuffled SELECT * FROM cv_docs WHERE id % 5 = 0;
VACUUM FULL cv_shuffled;
SELECT count(*) AS option_sets,
       count(*) FILTER (WHERE (g.*) IS NOT DISTINCT FROM (s.*)) AS identical
FROM cv_got g FULL JOIN nb_cross_validate('cv_shuffled', 'label', 'tokens', 3) s USING (options);
DROP TABLE cv_got;

-- rows with a NULL fold are only trained on; a NULL label or features is skipped
CREATE TABLE cv_nulls AS
SELECT label, tokens, CASE WHEN id % 9 = 0 THEN NULL ELSE fold END AS fold FROM cv_docs
UNION ALL VALUES (NULL, '{w1,w2}'::text[], 1), ('ham', NULL, 2), ('ham', '{w3}', NULL);
CREATE VIEW cv_nulls_folded AS SELECT label, tokens AS features, fold FROM cv_nulls;
CREATE TABLE cv_got AS
SELECT * FROM nb_cross_validate('cv_nulls', 'label', 'tokens', fold_column => 'fold', grid => '{"kind": ["bernoulli", "complement"]}');
SELECT * FROM cv_compare('cv_got', 'cv_nulls_folded', '{"kind": ["bernoulli", "complement"]}');
DROP TABLE cv_got;

-- one fold with rows in no fold: not a fold that holds every row; it is
-- scored by the model of the rows in none
CREATE TABLE cv_one_fold_more AS
SELECT label, tokens, CASE WHEN id % 3 = 0 THEN NULL ELSE 0 END AS fold FROM cv_docs;
CREATE VIEW cv_one_fold_more_folded AS SELECT label, tokens AS features, fold FROM cv_one_fold_more;
CREATE TABLE cv_got AS
SELECT * FROM nb_cross_validate('cv_one_fold_more', 'label', 'tokens', fold_column => 'fold', grid => '{"kind": ["multinomial", "bernoulli"]}');
SELECT * FROM cv_compare('cv_got', 'cv_one_fold_more_folded', '{"kind": ["multinomial", "bernoulli"]}');
DROP TABLE cv_got;

-- mixed features (categorical, Gaussian, boolean, a bag) and dense vectors
CREATE TABLE cv_mixed AS
SELECT id, label,
       jsonb_build_object('colour', (ARRAY['red', 'green', 'blue'])[1 + (id * 7) % 3],
                          'size', round(((id % 7) * 1.5 + (id % 3))::numeric, 2),
                          'big', id % 4 = 0,
                          'words', tokens) AS features,
       ARRAY[(id % 7) * 1.5, (id % 5) - (id % 3) * 0.25]::float8[] AS vec,
       fold
FROM cv_docs;
SELECT * FROM nb_grid_options(nb_grid_default((SELECT nb_train(label, features) FROM cv_mixed)))
LIMIT 3;
CREATE VIEW cv_mixed_folded AS SELECT label, features, fold FROM cv_mixed;
CREATE TABLE cv_got AS SELECT * FROM nb_cross_validate('cv_mixed', 'label', 'features', fold_column => 'fold');
SELECT * FROM cv_compare('cv_got', 'cv_mixed_folded',
                         nb_grid_default((SELECT nb_train(label, features) FROM cv_mixed)));
DROP TABLE cv_got;
SELECT * FROM nb_grid_options(nb_grid_default((SELECT nb_train(label, vec) FROM cv_mixed)));
CREATE VIEW cv_vec_folded AS SELECT label, vec AS features, fold FROM cv_mixed;
CREATE TABLE cv_got AS SELECT * FROM nb_cross_validate('cv_mixed', 'label', 'vec', fold_column => 'fold');
SELECT * FROM cv_compare('cv_got', 'cv_vec_folded', nb_grid_default((SELECT nb_train(label, vec) FROM cv_mixed)));
DROP TABLE cv_got;

CREATE TABLE cv_one_fold AS SELECT label, tokens, 0 AS fold FROM cv_docs;
-- one class: refused, as nb_calibrate does (every fold would score 1)
CREATE VIEW cv_one_class AS SELECT label, tokens FROM cv_docs WHERE label = (SELECT min(label) FROM cv_docs);
CREATE TABLE cv_empty (label text, tokens text[]);
-- progress under nbc.progress: a NOTICE after training and after each batch
-- of up to 8 folds scored, once nbc.progress_interval seconds have passed
-- (0: each; its DETAIL, the elapsed time, left out here)
SET nbc.progress = on;
SET nbc.progress_interval = 0;
\set VERBOSITY terse
SELECT count(*) FROM nb_cross_validate('cv_docs', 'label', 'tokens', 3, grid => '{"alpha": [0.5, 1]}');
CREATE TABLE cv_many_folds AS SELECT label, tokens, id % 10 AS fold FROM cv_docs;
SELECT count(*) FROM nb_cross_validate('cv_many_folds', 'label', 'tokens', fold_column => 'fold', grid => '{}');
-- inside a pass: the training and the scoring aggregates report every 4096
-- rows read (nb_train) and scored (nb_grid_metrics) in the statement
CREATE TABLE cv_big AS
SELECT CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END AS label, ARRAY['t' || (i % 7), 'u' || (i % 3)] AS tokens
FROM generate_series(1, 10000) AS i;
SELECT count(*) FROM nb_cross_validate('cv_big', 'label', 'tokens', 2, grid => '{}');
\set VERBOSITY default
-- the default interval, 5 s: a short call stays quiet
RESET nbc.progress_interval;
SELECT count(*) FROM nb_cross_validate('cv_many_folds', 'label', 'tokens', fold_column => 'fold', grid => '{}');
SELECT count(*) FROM nb_cross_validate('cv_big', 'label', 'tokens', 2, grid => '{}');
SET nbc.progress_interval = 0;
SET nbc.progress = off;
SELECT count(*) FROM nb_cross_validate('cv_many_folds', 'label', 'tokens', fold_column => 'fold', grid => '{}');
SELECT count(*) FROM nb_cross_validate('cv_big', 'label', 'tokens', 2, grid => '{}');
DROP TABLE cv_big;
RESET nbc.progress;
RESET nbc.progress_interval;
-- an error in an internal statement: its own message, detail and hint, and
-- a CONTEXT quoting the statement, which begins by saying what
-- cross-validation was doing (training, or scoring folds a to b of n)
SELECT * FROM nb_cross_validate('cv_many_folds', 'label', 'tokens', fold_column => 'fold',
                                grid => '[{}, {"alpha": -1}]');
SELECT * FROM nb_cross_validate('cv_many_folds', 'label', 'tokens', fold_column => 'fold',
                                grid => '{"class_prior": {"nope": 1}}');
CREATE TABLE cv_bad_rows AS
SELECT label, jsonb_build_object('x', CASE WHEN id = 7 THEN to_jsonb('a'::text) ELSE to_jsonb(id) END) AS features
FROM cv_docs;
SELECT * FROM nb_cross_validate('cv_bad_rows', 'label', 'features');
DROP TABLE cv_many_folds, cv_bad_rows;
SET nbc.progress = 'maybe';
-- errors, as SQLSTATE: message.  No argument reaches the SQL unquoted:
-- names that are not columns, or a relation that does not exist, are
-- errors, and odd names that are columns work (below)
CREATE FUNCTION cv_error(query text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT cv_error(q) AS error, q AS query FROM (VALUES
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'labels', 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'token')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', fold_column => 'folds')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'id')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', fold_column => 'label')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', 1)$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', 3, fold_column => 'fold')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', NULL, 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', grid => '[]')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', grid => '{"alpha": []}')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', grid => '[1]')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', grid => '{"alpha": -1}')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', grid => '{"kind": "complement"}', folds => 100)$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_mixed', 'label', 'features', grid => '{"kind": "complement"}')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_one_fold', 'label', 'tokens', fold_column => 'fold')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_one_class', 'label', 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', 200)$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_empty', 'label', 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs; DROP TABLE cv_docs', 'label', 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label::text, 1 FROM cv_docs; DROP TABLE cv_docs; --', 'tokens')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens) FROM cv_docs; DROP TABLE cv_docs; --')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', fold_column => 'fold::int; DROP TABLE cv_docs')$q$),
    ($q$SELECT * FROM nb_cross_validate('cv_docs', 'label"', 'tokens')$q$)) AS v(q);
CREATE TABLE "cv odd; DROP TABLE cv_docs" ("la""bel" text, "TOKENS" text[], "f)" int);
INSERT INTO "cv odd; DROP TABLE cv_docs" SELECT label, tokens, fold FROM cv_docs;
CREATE TABLE cv_got AS
SELECT * FROM nb_cross_validate('"cv odd; DROP TABLE cv_docs"', 'la"bel', 'TOKENS', fold_column => 'f)',
                                grid => '{"kind": "bernoulli"}');
SELECT * FROM cv_compare('cv_got', 'cv_folded', '{"kind": "bernoulli"}');
SELECT count(*) AS cv_docs_rows FROM cv_docs;

-- the README's recipe: out-of-fold models by nb_subtract from a table, the
-- grid outside (a nested loop over the grid, scoring every row for one
-- option set before the next), equal to nb_cross_validate
CREATE TABLE cv_fold_models AS SELECT fold, nb_train(label, tokens) AS model FROM cv_docs GROUP BY fold;
CREATE TABLE cv_oof_models AS
SELECT f.fold, nb_subtract(w.model, f.model) AS model
FROM cv_fold_models AS f, (SELECT nb_merge(model) AS model FROM cv_fold_models) AS w;
ANALYZE cv_docs, cv_oof_models;
EXPLAIN (COSTS OFF)
SELECT g.options, avg((s.m ->> 'accuracy')::float8) AS accuracy
FROM nb_grid_options('{"kind": ["multinomial", "bernoulli"]}') WITH ORDINALITY AS g(options, n)
CROSS JOIN LATERAL (
    SELECT nb_metrics(d.label, nb_predict_proba(m.model, d.tokens, g.options)) AS m
    FROM cv_docs AS d JOIN cv_oof_models AS m USING (fold)
    GROUP BY m.fold) AS s
GROUP BY g.n, g.options;
SELECT count(*) AS option_sets,
       max(abs(r.accuracy - c.accuracy)) < 1e-12 AS recipe_equals_nb_cross_validate
FROM (SELECT g.options, avg((s.m ->> 'accuracy')::float8) AS accuracy
      FROM nb_grid_options('{"kind": ["multinomial", "bernoulli"]}') WITH ORDINALITY AS g(options, n)
      CROSS JOIN LATERAL (
          SELECT nb_metrics(d.label, nb_predict_proba(m.model, d.tokens, g.options)) AS m
          FROM cv_docs AS d JOIN cv_oof_models AS m USING (fold)
          GROUP BY m.fold) AS s
      GROUP BY g.n, g.options) r
JOIN nb_cross_validate('cv_docs', 'label', 'tokens', fold_column => 'fold',
                       grid => '{"kind": ["multinomial", "bernoulli"]}') c USING (options);

-- nb_grid_metrics: the metrics of every option set of a grid in one pass,
-- equal to nb_metrics over nb_predict_proba with each option set: the same
-- counts, averages and confusion matrix, log loss and Brier score within
-- rounding (a row's tokens are looked up once and their repeats added up),
-- no roc_auc and average_precision.  A model trained on the rows of folds
-- other than 0 scores fold 0.
CREATE FUNCTION cv_grid_equal(tab text, features text, grid jsonb)
RETURNS TABLE (option_sets bigint, same_counts boolean, same_log_loss boolean, same_brier boolean,
               same_ece boolean)
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN QUERY EXECUTE format($$
WITH m AS (SELECT nb_train(label, %2$I) AS model FROM %1$s WHERE fold <> 0),
o AS (SELECT ARRAY(SELECT nb_grid_options($1)) AS options),
g AS (SELECT e.n, e.m
      FROM (SELECT nb_grid_metrics(m.model, d.%2$I, d.label, o.options) AS a
            FROM %1$s d, m, o WHERE d.fold = 0) s,
      unnest(s.a) WITH ORDINALITY AS e(m, n)),
x AS (SELECT g.n, (SELECT nb_metrics(d.label, nb_predict_proba(m.model, d.%2$I, g.options))
                   FROM %1$s d WHERE d.fold = 0) AS m
      FROM m, nb_grid_options($1) WITH ORDINALITY AS g(options, n))
SELECT count(*),
       bool_and((g.m - 'log_loss' - 'brier' - 'calibration') =
                (x.m - 'log_loss' - 'brier' - 'calibration' - 'roc_auc' - 'average_precision')),
       max(abs((g.m ->> 'log_loss')::float8 - (x.m ->> 'log_loss')::float8)) < 1e-12,
       max(abs((g.m ->> 'brier')::float8 - (x.m ->> 'brier')::float8)) < 1e-12,
       coalesce(max(abs((g.m #>> '{calibration,ece}')::float8 - (x.m #>> '{calibration,ece}')::float8)) < 1e-12,
                bool_and(g.m -> 'calibration' IS NULL AND x.m -> 'calibration' IS NULL))
FROM g JOIN x USING (n)$$, tab, features) USING grid;
END $f$;
-- text[], tsvector, jsonb (mixed features) and float8[] rows
SELECT * FROM cv_grid_equal('cv_docs', 'tokens',
    '[{"kind": ["multinomial", "bernoulli", "complement"], "alpha": [0.1, 1]}, {"kind": "complement", "norm": true}]');
CREATE VIEW cv_tsv AS SELECT label, to_tsvector('simple', array_to_string(tokens, ' ')) AS tsv, fold FROM cv_docs;
SELECT * FROM cv_grid_equal('cv_tsv', 'tsv', '{"kind": ["multinomial", "bernoulli"], "fit_prior": [true, false]}');
SELECT * FROM cv_grid_equal('cv_mixed', 'features', nb_grid_default((SELECT nb_train(label, features) FROM cv_mixed)));
SELECT * FROM cv_grid_equal('cv_mixed', 'vec', '{"var_smoothing": [1e-9, 0.1]}');
-- labels of fold 0 the model does not know (its eggs are all in fold 0): a
-- class no row's probabilities name, whose rows count in the log loss
CREATE VIEW cv_eggs AS SELECT label, tokens, CASE WHEN label = 'eggs' THEN 0 ELSE fold END AS fold FROM cv_docs;
SELECT * FROM cv_grid_equal('cv_eggs', 'tokens', '{"kind": ["multinomial", "bernoulli"], "alpha": [0, 1]}');
-- NULL options in the array are the defaults; rows with a NULL model,
-- features or label are skipped, and with none left the result is NULL
CREATE TABLE cv_grid_model AS SELECT nb_train(label, tokens) AS model FROM cv_docs WHERE fold <> 0;
SELECT a[1] = a[2] AS null_is_default, cardinality(a) AS option_sets
FROM (SELECT nb_grid_metrics(model, tokens, label, ARRAY[NULL, '{}']::jsonb[]) AS a
      FROM cv_docs, cv_grid_model WHERE fold = 0) s;
SELECT (SELECT nb_grid_metrics(model, tokens, label, ARRAY['{"alpha": 0.5}']::jsonb[])
        FROM cv_docs, cv_grid_model WHERE fold = 0)
     = (SELECT nb_grid_metrics(CASE WHEN k = 2 THEN NULL ELSE model END,
                               CASE WHEN k = 3 THEN NULL ELSE tokens END, label, ARRAY['{"alpha": 0.5}']::jsonb[])
        FROM (SELECT 0 AS k, label, tokens FROM cv_docs WHERE fold = 0
              UNION ALL SELECT 1, NULL, tokens FROM cv_docs WHERE fold = 0
              UNION ALL SELECT 2, label, tokens FROM cv_docs WHERE fold = 0
              UNION ALL SELECT 3, label, tokens FROM cv_docs WHERE fold = 0) d, cv_grid_model) AS nulls_skipped;
SELECT nb_grid_metrics(model, NULL::text[], label, ARRAY['{}']::jsonb[]) IS NULL AS no_rows
FROM cv_docs, cv_grid_model;
-- errors
SELECT cv_error(q) AS error, q AS query FROM (VALUES
    ($q$SELECT nb_grid_metrics(model, tokens, label, NULL) FROM cv_docs, cv_grid_model$q$),
    ($q$SELECT nb_grid_metrics(model, tokens, label, '{}') FROM cv_docs, cv_grid_model$q$),
    ($q$SELECT nb_grid_metrics(model, tokens, label, '{{"{}"}}') FROM cv_docs, cv_grid_model$q$),
    ($q$SELECT nb_grid_metrics(model, tokens, label, ARRAY['{"alpha": -1}']::jsonb[]) FROM cv_docs, cv_grid_model$q$),
    ($q$SELECT nb_grid_metrics(model, tokens, label, ARRAY[jsonb_build_object('alpha', id % 2)]) FROM cv_docs, cv_grid_model$q$),
    ($q$SELECT nb_grid_metrics(model, vec, label, ARRAY['{}']::jsonb[]) FROM cv_mixed, cv_grid_model$q$)) AS v(q);
-- a grid's scorers take memory in proportion to the option sets times the
-- model (here 8 bytes per option set and (token, class) pair, 30000 pairs):
-- at most nbc.prepared_model_cache_limit, so that a short array cannot make
-- the backend allocate more than the server has.  Option sets that differ
-- in the prior only share their terms.
CREATE TABLE cv_wide AS SELECT 'c' || (i % 2) AS label, ARRAY['t' || i] AS tokens FROM generate_series(1, 30000) AS i;
CREATE TABLE cv_wide_model AS SELECT nb_train(label, tokens) AS model FROM cv_wide;
SET nbc.prepared_model_cache_limit = '2MB';
SELECT cv_error(q) AS error, q AS query FROM (VALUES
    ($q$SELECT nb_grid_metrics(model, tokens, label, ARRAY(SELECT nb_grid_options('{"alpha": [0.5, 1], "fit_prior": [true, false]}'))) FROM cv_wide, cv_wide_model WHERE label = 'c0' AND tokens = '{t2}'$q$),
    ($q$SELECT nb_grid_metrics(model, tokens, label, ARRAY(SELECT jsonb_build_object('alpha', i) FROM generate_series(1, 10) AS i)) FROM cv_wide, cv_wide_model WHERE tokens = '{t2}'$q$)) AS v(q);
RESET nbc.prepared_model_cache_limit;
SELECT cardinality(nb_grid_metrics(model, tokens, label, ARRAY(SELECT jsonb_build_object('alpha', i) FROM generate_series(1, 10) AS i)))
FROM cv_wide, cv_wide_model WHERE tokens = '{t2}';
-- and the states' confusion matrices, one per option set, take at most
-- 1 GB together: the more option sets, the fewer labels they hold (2048 up
-- to 31 option sets, 8 for 2^21 - 1, none for 2^21)
SELECT cv_error($q$SELECT nb_grid_metrics(model, tokens, label, array_fill(NULL::jsonb, ARRAY[2097152]))
                   FROM cv_docs, cv_grid_model$q$) AS error;

-- the extension is relocatable: the functions name its objects through the
-- schema it is in, whatever the caller's search_path holds (a decoy there is
-- never called)
CREATE TABLE cv_before AS SELECT * FROM nb_cross_validate('cv_docs', 'label', 'tokens', 3);
CREATE SCHEMA cv_elsewhere;
ALTER EXTENSION nbc SET SCHEMA cv_elsewhere;
SET search_path = public;
CREATE FUNCTION public.nb_grid_options(jsonb) RETURNS SETOF jsonb LANGUAGE sql
AS $$ SELECT (1 / 0)::text::jsonb $$;
SELECT count(*) AS option_sets,
       count(*) FILTER (WHERE (b.*) IS NOT DISTINCT FROM (e.*)) AS identical
FROM cv_before b FULL JOIN cv_elsewhere.nb_cross_validate('cv_docs', 'label', 'tokens', 3) e USING (options);
SELECT cv_elsewhere.nb_grid_default(cv_elsewhere.nb_train(label, tokens)) -> 1 AS complement FROM cv_docs;
DROP FUNCTION public.nb_grid_options(jsonb);
RESET search_path;
ALTER EXTENSION nbc SET SCHEMA public;
DROP SCHEMA cv_elsewhere;

-- more classes than the metrics count (2048): refused right after training
-- (54000), before any fold's model is made
CREATE TABLE cv_many AS
SELECT 'c' || (g % 2049) AS label, ARRAY['t' || (g % 7)] AS tokens FROM generate_series(1, 2049 * 3) g;
\set VERBOSITY sqlstate
SELECT * FROM nb_cross_validate('cv_many', 'label', 'tokens', 3);
\set VERBOSITY default
SELECT * FROM nb_cross_validate('cv_many', 'label', 'tokens', 3);
DROP TABLE cv_many;
-- the same limit with a class per row: the columns are likely swapped
-- (#42), and the hint says so
CREATE TABLE cv_swapped AS
SELECT 'document ' || g AS label, ARRAY['c' || (g % 2)] AS tokens FROM generate_series(1, 2100) g;
SELECT * FROM nb_cross_validate('cv_swapped', 'label', 'tokens', 3);
DROP TABLE cv_swapped;

-- results do not depend on the plan to the last bit: the scoring query's
-- sort in memory or on disk gives the folds' rows in other orders
CREATE TABLE cv_order AS
SELECT 'l' || (g % 3) AS label,
       ARRAY(SELECT 't' || ((g * 7919 + k * (g % 3 + 1) * 104729) % 500) FROM generate_series(1, 8) k) AS tokens
FROM generate_series(1, 20000) g;
SET work_mem = '64kB';
CREATE TABLE cv_order_small AS SELECT * FROM nb_cross_validate('cv_order', 'label', 'tokens', 4);
SET work_mem = '256MB';
CREATE TABLE cv_order_large AS SELECT * FROM nb_cross_validate('cv_order', 'label', 'tokens', 4);
RESET work_mem;
SELECT count(*) AS option_sets,
       count(*) FILTER (WHERE s::text = l::text) AS identical
FROM cv_order_small s JOIN cv_order_large l USING (options);
DROP TABLE cv_order, cv_order_small, cv_order_large;

-- a text column: each fold's model tokenizes its documents (default
-- tokenizer, or the one given) and scores the held-out documents with it,
-- exactly as the same tokens given as text[] with the same folds
CREATE TABLE cv_text AS
SELECT g AS id, g % 4 AS fold, 'l' || (g % 3) AS label,
       (SELECT string_agg('Word' || ((g * 7919 + k * (g % 3 + 1) * 104729) % 60), ' ') FROM generate_series(1, 6) k)
       || CASE WHEN g % 5 = 0 THEN ' and, the... end!' ELSE '' END AS body
FROM generate_series(1, 400) g;
CREATE TABLE cv_text_tokens AS
SELECT id, fold, label, nb_tokens(body) AS tokens, nb_tokens(body, '{"ngram_range": [1, 2]}') AS bigrams FROM cv_text;
SELECT count(*) AS option_sets, count(*) FILTER (WHERE t::text = a::text) AS identical
FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold') t
JOIN nb_cross_validate('cv_text_tokens', 'label', 'tokens', fold_column => 'fold') a USING (options);
SELECT count(*) AS option_sets, count(*) FILTER (WHERE t::text = a::text) AS identical
FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold', tokenizer => '{"ngram_range": [1, 2]}') t
JOIN nb_cross_validate('cv_text_tokens', 'label', 'bigrams', fold_column => 'fold') a USING (options);
SELECT * FROM nb_cross_validate('cv_text_tokens', 'label', 'tokens', tokenizer => '{}');
SELECT * FROM nb_cross_validate('cv_text', 'label', 'body', tokenizer => '{"analyzer": "sentence"}');
-- the grid key "tokenizer": each tokenizer's rows are those of a call with it
-- (NULL, JSON null: the default), options naming it, all of them best first
CREATE TABLE cv_tok_got AS
SELECT row_number() OVER () AS n, * FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold',
    grid => '{"tokenizer": [null, {"ngram_range": [1, 2]}], "alpha": [0.5, 1]}');
SELECT g.options, t.options IS NOT NULL AS same_as_its_call,
       g.accuracy >= coalesce(lead(g.accuracy) OVER (ORDER BY g.n), 0) AS best_first
FROM cv_tok_got g LEFT JOIN (
    SELECT '{"tokenizer": null}'::jsonb || c.options AS options, c.accuracy, c.macro_f1, c.log_loss
    FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold', grid => '{"alpha": [0.5, 1]}') c
    UNION ALL
    SELECT '{"tokenizer": {"ngram_range": [1, 2]}}'::jsonb || c.options, c.accuracy, c.macro_f1, c.log_loss
    FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold', grid => '{"alpha": [0.5, 1]}',
                           tokenizer => '{"ngram_range": [1, 2]}') c) t
  ON t.options = g.options AND t.accuracy = g.accuracy AND t.macro_f1 = g.macro_f1 AND t.log_loss = g.log_loss
ORDER BY g.n;
-- only the tokenizer in the grid: each with the default grid
SELECT count(*) = 2 * (SELECT count(*) FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold')) AS default_grids
FROM nb_cross_validate('cv_text', 'label', 'body', fold_column => 'fold', grid => '[{"tokenizer": {}}, {"tokenizer": {"lowercase": false}}]');
SELECT * FROM nb_cross_validate('cv_text', 'label', 'body', grid => '{"tokenizer": [{}]}', tokenizer => '{}');
SELECT * FROM nb_cross_validate('cv_text_tokens', 'label', 'tokens', grid => '{"tokenizer": [{}]}');
DROP TABLE cv_text, cv_text_tokens, cv_tok_got;
