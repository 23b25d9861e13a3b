--
-- em_cv: nb_cross_validate_em and nb_train_em's "lambda": "auto" (#43).
-- Every row is checked against a reference computed here: per fold and
-- lambda, nb_train_em on a view of the rows outside the fold (the
-- unlabelled rows in every one), accuracy and log loss of its
-- nb_predict_proba on the fold's labelled rows by hand, macro F1 by
-- nb_metrics; means over the folds, the gain over lambda 0 and its
-- standard error.  Lambda 0 must be nb_cross_validate's row.
--
SET extra_float_digits = 0;
SET jit = off;
-- em_cv_help: the unlabelled rows follow the classes of the labelled ones;
-- em_cv_hurt: they all look like class a, so EM makes a's prior too large
CREATE TABLE em_cv_help AS
SELECT i AS id, CASE WHEN i % 4 = 0 THEN CASE WHEN i % 8 = 0 THEN 'a' ELSE 'b' END END AS label,
       CASE WHEN i % 8 IN (0, 3, 5) THEN ARRAY['x' || (i % 5), 'y', 'z' || (i % 3)]
            ELSE ARRAY['w' || (i % 7), 'y', 'v' || (i % 2)] END AS tokens,
       i % 3 AS fold
FROM generate_series(1, 200) AS i;
CREATE TABLE em_cv_hurt AS
SELECT i AS id, CASE WHEN i <= 40 THEN CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END END AS label,
       CASE WHEN i <= 40 AND i % 2 = 1 THEN ARRAY['b' || (i % 3), 'y' || (i % 5), 'c' || (i % 4)]
            ELSE ARRAY['a' || (i % 3), 'y' || (i % 5), 'c' || (i % 4)] END AS tokens,
       i % 3 AS fold
FROM generate_series(1, 200) AS i;

-- the reference, for a table with a fold column
CREATE FUNCTION em_cv_reference(rel regclass, lambdas float8[], options jsonb)
RETURNS TABLE (lambda float8, accuracy float8, macro_f1 float8, log_loss float8,
               gain float8, gain_se float8)
LANGUAGE plpgsql AS $$
DECLARE
  f bigint;
  l float8;
BEGIN
  CREATE TEMPORARY TABLE em_cv_ref (fold bigint, lambda float8, accuracy float8, macro_f1 float8, log_loss float8);
  FOR f IN EXECUTE format('SELECT DISTINCT fold FROM %s WHERE label IS NOT NULL ORDER BY 1', rel) LOOP
    EXECUTE format('CREATE TEMPORARY VIEW em_cv_out AS SELECT label, tokens FROM %s '
                   'WHERE label IS NULL OR fold <> %s', rel, f);
    FOREACH l IN ARRAY lambdas LOOP
      EXECUTE format(
        'INSERT INTO em_cv_ref '
        'SELECT $1, $2, avg((p.predicted = d.label)::int), '
        '       (nb_metrics(d.label, p.predicted) -> ''macro'' ->> ''f1'')::float8, '
        '       avg(-ln((p.proba ->> d.label)::float8)) '
        'FROM (SELECT nb_train_em(''em_cv_out'', ''label'', ''tokens'', $3 || jsonb_build_object(''lambda'', $2)) AS m) e, '
        '     %s d, LATERAL (SELECT nb_predict(e.m, d.tokens) AS predicted, nb_predict_proba(e.m, d.tokens) AS proba) p '
        'WHERE d.label IS NOT NULL AND d.fold = $1', rel)
        USING f, l, options;
    END LOOP;
    DROP VIEW em_cv_out;
  END LOOP;
  RETURN QUERY
    SELECT r.lambda, avg(r.accuracy), avg(r.macro_f1), avg(r.log_loss), avg(z.log_loss - r.log_loss),
           stddev_samp(z.log_loss - r.log_loss) / sqrt(count(*))
    FROM em_cv_ref r JOIN em_cv_ref z ON z.fold = r.fold AND z.lambda = 0
    GROUP BY r.lambda ORDER BY r.lambda;
  DROP TABLE em_cv_ref;
END
$$;

-- every row as the reference computes it; the chosen lambda is the one of
-- the lowest log loss when its gain is above its standard error, else 0
CREATE FUNCTION em_cv_check(rel regclass, lambdas float8[], options jsonb)
RETURNS TABLE (lambda float8, same boolean, chosen boolean, lowest_log_loss boolean, gain_above_se boolean)
LANGUAGE sql AS $$
  WITH got AS (SELECT * FROM nb_cross_validate_em(rel, 'label', 'tokens', fold_column => 'fold',
                                                  lambdas => lambdas, options => options)),
       ref AS (SELECT * FROM em_cv_reference(rel, lambdas, options))
  SELECT g.lambda,
         abs(g.accuracy - r.accuracy) < 1e-12 AND abs(g.macro_f1 - r.macro_f1) < 1e-12
         AND abs(g.log_loss - r.log_loss) < 1e-12 AND abs(g.log_loss_gain - r.gain) < 1e-12
         AND abs(g.log_loss_gain_se - r.gain_se) < 1e-12,
         g.chosen,
         g.lambda > 0 AND g.log_loss = (SELECT min(log_loss) FROM got WHERE got.lambda > 0),
         g.log_loss_gain > g.log_loss_gain_se
  FROM got g JOIN ref r ON r.lambda = g.lambda ORDER BY g.lambda
$$;

SELECT * FROM em_cv_check('em_cv_help', '{0, 0.1, 1}', '{"iterations": 5}');
-- here the NOTICE: lambda 0 is chosen (its DETAIL's figures are the rows below, rounded)
SELECT * FROM em_cv_check('em_cv_hurt', '{0, 0.1, 1}', '{"iterations": 5}');
SELECT lambda, round(log_loss::numeric, 4) AS log_loss, round(log_loss_gain::numeric, 4) AS gain,
       round(log_loss_gain_se::numeric, 4) AS gain_se, chosen
FROM nb_cross_validate_em('em_cv_hurt', 'label', 'tokens', fold_column => 'fold', lambdas => '{0.1, 1}',
                          options => '{"iterations": 5}');
-- a gain above 0 but within its standard error (the folds disagree: one
-- holds only class a, which EM's larger prior of a helps): 0 is kept, with
-- the NOTICE
CREATE TABLE em_cv_noisy AS
SELECT id, label, tokens,
       CASE WHEN label = 'a' AND id % 3 = 0 THEN 0 WHEN label = 'a' THEN 1 ELSE 2 + (id % 5 = 0)::int END AS fold
FROM em_cv_hurt WHERE id <= 60;
SELECT * FROM em_cv_check('em_cv_noisy', '{0, 0.1}', '{}');
SELECT lambda, round(log_loss::numeric, 4) AS log_loss, round(log_loss_gain::numeric, 4) AS gain,
       round(log_loss_gain_se::numeric, 4) AS gain_se, chosen
FROM nb_cross_validate_em('em_cv_noisy', 'label', 'tokens', fold_column => 'fold', lambdas => '{0.1}');
-- Bernoulli, with the model's options
SELECT * FROM em_cv_check('em_cv_help', '{0, 0.3}', '{"kind": "bernoulli", "alpha": 0.5, "iterations": 3}');

-- lambda 0 is nb_cross_validate's row, with k folds by the rows' contents
-- too; 0 is always tried, the grid sorted and without repeats
SELECT array_agg(e.lambda ORDER BY e.lambda) AS lambdas,
       bool_and(abs(e.accuracy - c.accuracy) < 1e-12 AND abs(e.macro_f1 - c.macro_f1) < 1e-12
                AND abs(e.log_loss - c.log_loss) < 1e-12 AND abs(e.log_loss_std - c.log_loss_std) < 1e-12)
         FILTER (WHERE e.lambda = 0) AS lambda_0_same
FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', 4, '{0.5, 0.2, 0.5}') e,
     nb_cross_validate('em_cv_help', 'label', 'tokens', 4, '{"alpha": 1}') c;
-- the default grid
SELECT array_agg(lambda ORDER BY lambda) AS lambdas, count(*) FILTER (WHERE chosen) AS chosen
FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens');

-- documents of text: the same as their tokens by nb_tokens with the
-- tokenizer of the options
CREATE TABLE em_cv_text AS
SELECT id, label, fold, 'the ' || array_to_string(tokens, ' ') || ' and' AS body FROM em_cv_help;
CREATE TABLE em_cv_tokens AS
SELECT id, label, fold, nb_tokens(body, '{"stop_words": "english", "ngram_range": [1, 2]}') AS tokens FROM em_cv_text;
SELECT t.lambda, t.log_loss = k.log_loss AND t.accuracy = k.accuracy AND t.macro_f1 = k.macro_f1 AS same
FROM nb_cross_validate_em('em_cv_text', 'label', 'body', fold_column => 'fold', lambdas => '{0.1}',
                          options => '{"tokenizer": {"stop_words": "english", "ngram_range": [1, 2]}}') t
JOIN nb_cross_validate_em('em_cv_tokens', 'label', 'tokens', fold_column => 'fold', lambdas => '{0.1}') k USING (lambda)
ORDER BY t.lambda;

-- nb_train_em chooses: the model of nb_train_em with the lambda chosen
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": [0, 0.1, 1], "fold_column": "fold", "iterations": 5}')
       = nb_train_em('em_cv_help', 'label', 'tokens',
                     jsonb_build_object('lambda', (SELECT lambda FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens',
                                                   fold_column => 'fold', lambdas => '{0.1, 1}', options => '{"iterations": 5}')
                                                   WHERE chosen), 'iterations', 5)) AS same_model;
-- where lambda 0 is chosen, the model of the labelled rows
SELECT nb_train_em('em_cv_hurt', 'label', 'tokens', '{"lambda": "auto", "folds": 3}')
       = (SELECT nb_train(label, tokens) FROM em_cv_hurt WHERE label IS NOT NULL) AS labelled_only;
SELECT count(*) FROM nb_train_em_trace('em_cv_hurt', 'label', 'tokens', '{"lambda": [0.5]}');
-- documents of text: the model keeps the tokenizer
SELECT nb_predict(nb_train_em('em_cv_text', 'label', 'body',
                              '{"lambda": "auto", "fold_column": "fold", "tokenizer": {"stop_words": "english"}}'),
                  'The w3 and v1') AS predicted;

-- errors
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', options => '{"lambda": 1}');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', lambdas => '{0.5, 2}');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', lambdas => '{0.5, NULL}');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', options => '[]');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', options => '{"kind": "complement"}');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'nothing');
SELECT * FROM nb_cross_validate_em('em_cv_help', NULL, 'tokens');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'fold');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', 60);
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', fold_column => 'label');
CREATE TABLE em_cv_one_fold AS SELECT label, tokens, 1 AS fold FROM em_cv_help;
SELECT * FROM nb_cross_validate_em('em_cv_one_fold', 'label', 'tokens', fold_column => 'fold');
SELECT * FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', 3, fold_column => 'fold');
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": "best"}');
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": ["a"]}');
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": 0.5, "folds": 3}');
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": "auto", "folds": 1.5}');
SELECT nb_train_em('em_cv_help', 'label', 'tokens', '{"lambda": "auto", "fold_column": 3}');
-- nothing is left behind, and a second call in the same transaction works
BEGIN;
SELECT count(*) FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', lambdas => '{1}');
SELECT count(*) FROM nb_cross_validate_em('em_cv_help', 'label', 'tokens', lambdas => '{1}');
SELECT to_regclass('pg_temp.nbc_em_cv_rows') IS NULL AND to_regclass('pg_temp.nbc_em_cv_fold') IS NULL AS clean;
COMMIT;

DROP TABLE em_cv_help, em_cv_hurt, em_cv_noisy, em_cv_text, em_cv_tokens, em_cv_one_fold;
DROP FUNCTION em_cv_check(regclass, float8[], jsonb);
DROP FUNCTION em_cv_reference(regclass, float8[], jsonb);
