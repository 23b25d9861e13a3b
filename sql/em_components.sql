--
-- em_components: EM-CM, nb_train_em's "components" (#43): several mixture
-- components per class, a class's probability the sum of its components'.
-- The model of EM-CM's first pass (nb_train_em_trace's iteration 1) is the
-- labelled rows spread over their class's components in turn, which
-- nb_train reproduces as a model whose classes are the components (label
-- '#' component): summing its posteriors per class must give the component
-- model's, and its fitted documents the class prior shared among them.
--
SET extra_float_digits = 0;
SET jit = off;
-- two topics per class: billing is invoices or cards, outage servers or logins
CREATE TABLE emcm AS
SELECT i AS id,
       CASE WHEN i % 5 = 0 THEN CASE WHEN i % 4 < 2 THEN 'billing' ELSE 'outage' END END AS label,
       CASE i % 4
            WHEN 0 THEN (ARRAY['invoice', 'refund', 'paid'])[1 + i % 3] || ' ' || (ARRAY['twice', 'wrong', 'late'])[1 + i % 7 % 3]
            WHEN 1 THEN (ARRAY['card', 'expired', 'declined'])[1 + i % 3] || ' ' || (ARRAY['bank', 'visa'])[1 + i % 2]
            WHEN 2 THEN (ARRAY['server', 'down', 'timeout'])[1 + i % 3] || ' ' || (ARRAY['site', 'page'])[1 + i % 2]
            ELSE (ARRAY['login', 'password', 'locked'])[1 + i % 3] || ' ' || (ARRAY['account', 'reset', 'user'])[1 + i % 7 % 3]
       END || ' please' AS body
FROM generate_series(1, 400) AS i;
CREATE TABLE emcm_docs (body text);
INSERT INTO emcm_docs VALUES ('invoice twice'), ('card declined visa'), ('server down'),
    ('password reset please'), ('please'), ('unknown words only');

-- the first pass's model, and the same components as classes
CREATE TABLE emcm_init AS
SELECT model FROM nb_train_em_trace('emcm', 'label', 'body', '{"components": 2}') WHERE iteration = 1;
CREATE TABLE emcm_flat AS
SELECT nb_train(label || '#' || (rank % 2), body) AS model
FROM (SELECT label, body, row_number() OVER (PARTITION BY label ORDER BY id) - 1 AS rank
      FROM emcm WHERE label IS NOT NULL) r;
SELECT nb_info(model) ->> 'classes' AS classes, nb_info(model) ->> 'components' AS components,
       nb_info(model) ->> 'format_version' AS version
FROM emcm_init;
-- nb_classes: a row per class, its components' documents summed
SELECT label, documents, prior FROM nb_classes((SELECT model FROM emcm_init));
SELECT label, count(*) FROM emcm WHERE label IS NOT NULL GROUP BY label ORDER BY label;

-- posteriors: the components' summed, with the fitted prior, uniform
-- (each class 1/2, shared by documents) and given
CREATE FUNCTION emcm_summed(flat nb_model, body text, options jsonb)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_object_agg(k, p) FROM (
        SELECT split_part(key, '#', 1) AS k, sum(value::float8) AS p
        FROM jsonb_each_text(nb_predict_proba(flat, body, options)) GROUP BY 1) s
$$;
CREATE FUNCTION emcm_prior(flat nb_model, billing float8)
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('class_prior', jsonb_object_agg(label,
        CASE WHEN label LIKE 'billing%' THEN billing ELSE 1 - billing END * share))
    FROM (SELECT label, documents / sum(documents) OVER (PARTITION BY split_part(label, '#', 1)) AS share
          FROM nb_classes(flat)) c
$$;
SELECT o.name, max(abs((nb_predict_proba(i.model, d.body, o.options) ->> k)::float8
                       - (emcm_summed(f.model, d.body, o.flat_options) ->> k)::float8)) < 1e-12 AS same
FROM emcm_init i, emcm_flat f, emcm_docs d, unnest(ARRAY['billing', 'outage']) AS k,
     (VALUES ('fitted', '{}'::jsonb, '{}'::jsonb),
             ('uniform', '{"fit_prior": false}', emcm_prior((SELECT model FROM emcm_flat), 0.5)),
             ('given', '{"class_prior": {"billing": 0.2, "outage": 0.8}}', emcm_prior((SELECT model FROM emcm_flat), 0.2)))
         AS o(name, options, flat_options)
GROUP BY o.name ORDER BY o.name;

-- EM-CM to the end: log likelihood never decreasing from iteration 2 on
-- (iteration 1's vocabulary is the labelled rows' only)
SELECT bool_and(log_likelihood >= prev - 1e-9 * abs(prev)) AS increasing, count(*) >= 2 AS iterated
FROM (SELECT iteration, log_likelihood, lag(log_likelihood) OVER (ORDER BY iteration) AS prev
      FROM nb_train_em_trace('emcm', 'label', 'body', '{"components": 2}')) t
WHERE iteration >= 3;
CREATE TABLE emcm_model AS SELECT nb_train_em('emcm', 'label', 'body', '{"components": 2}') AS model;
-- every scoring function reports the classes, consistently
SELECT d.body, nb_predict(m.model, d.body) AS predicted,
       abs((SELECT sum(value::float8) FROM jsonb_each_text(nb_predict_proba(m.model, d.body))) - 1) < 1e-12 AS sums_to_1,
       nb_predict(m.model, d.body) = (SELECT key FROM jsonb_each_text(nb_predict_proba(m.model, d.body))
                                       ORDER BY value::float8 DESC, key LIMIT 1) AS best,
       nb_probability(m.model, d.body, 'outage') = (nb_predict_proba(m.model, d.body) ->> 'outage')::float8 AS probability,
       abs(exp((nb_predict_log_proba(m.model, d.body) ->> 'billing')::float8)
           - (nb_predict_proba(m.model, d.body) ->> 'billing')::float8) < 1e-12 AS log_proba,
       (SELECT array_agg(label ORDER BY probability DESC) FROM nb_predict_top(m.model, d.body, 2))
           = ARRAY(SELECT key FROM jsonb_each_text(nb_predict_proba(m.model, d.body)) ORDER BY value::float8 DESC, key) AS top
FROM emcm_model m, emcm_docs d ORDER BY d.body;
-- metrics over a grid: accuracy as nb_predict's
SELECT ((nb_grid_metrics(m.model, e.body, e.label, ARRAY['{}'::jsonb]))[1] ->> 'accuracy')::float8
       = avg((nb_predict(m.model, e.body) = e.label)::int) AS accuracy
FROM emcm_model m, emcm e WHERE e.label IS NOT NULL GROUP BY m.model;
-- stored options keep the components; without them, the same bytes
SELECT nb_info(nb_with_options(model, '{"alpha": 2}')) ->> 'components' AS components,
       nb_with_options(nb_with_options(model, '{"alpha": 2}'), NULL) = model AS same,
       model::text::nb_model = model AS text_io,
       nb_predict_proba(nb_with_options(model, '{"alpha": 2}'), 'invoice') = nb_predict_proba(model, 'invoice', '{"alpha": 2}') AS options
FROM emcm_model;
-- one component per class is nb_train_em without the option
SELECT nb_train_em('emcm', 'label', 'body', '{"components": 1}') = nb_train_em('emcm', 'label', 'body') AS same;

-- the grid of nb_cross_validate_em: each pair of lambda and components as
-- computed here, fold by fold (nb_train_em on the rows outside the fold,
-- the log loss of its posteriors on the fold's labelled rows), the gain
-- over the labelled rows alone and its standard error
CREATE TABLE emcm_folds AS SELECT id, label, body, id % 3 AS fold FROM emcm;
CREATE TABLE emcm_ref (fold bigint, lambda float8, components integer, log_loss float8);
DO $$
DECLARE f bigint;
BEGIN
  FOR f IN SELECT DISTINCT fold FROM emcm_folds ORDER BY 1 LOOP
    EXECUTE format('CREATE TEMPORARY VIEW emcm_out AS SELECT label, body FROM emcm_folds WHERE label IS NULL OR fold <> %s', f);
    INSERT INTO emcm_ref
    SELECT f, g.lambda, g.components,
           (SELECT avg(-ln((nb_predict_proba(m.model, d.body) ->> d.label)::float8))
            FROM (SELECT nb_train_em('emcm_out', 'label', 'body',
                                     jsonb_build_object('lambda', g.lambda, 'components', g.components)) AS model) m,
                 emcm_folds d WHERE d.fold = f AND d.label IS NOT NULL)
    FROM (VALUES (0, 1), (1, 1), (0, 2), (1, 2)) AS g(lambda, components);
    DROP VIEW emcm_out;
  END LOOP;
END
$$;
WITH got AS (SELECT * FROM nb_cross_validate_em('emcm_folds', 'label', 'body', lambdas => '{1}',
                                                fold_column => 'fold', component_counts => '{2}')),
     ref AS (SELECT r.lambda, r.components, avg(r.log_loss) AS log_loss, avg(z.log_loss - r.log_loss) AS gain,
                    stddev_samp(z.log_loss - r.log_loss) / sqrt(count(*)) AS gain_se
             FROM emcm_ref r JOIN emcm_ref z ON z.fold = r.fold AND z.lambda = 0 AND z.components = 1
             GROUP BY r.lambda, r.components)
SELECT g.lambda, g.components, abs(g.log_loss - r.log_loss) < 1e-12 AND abs(g.log_loss_gain - r.gain) < 1e-12
                               AND abs(g.log_loss_gain_se - r.gain_se) < 1e-12 AS same,
       g.chosen, g.log_loss = (SELECT min(log_loss) FROM got WHERE (lambda, components) <> (0, 1)) AS lowest,
       g.log_loss_gain > g.log_loss_gain_se AS gain_above_se
FROM got g JOIN ref r USING (lambda, components) ORDER BY g.components, g.lambda;
-- nb_train_em chooses the pair ("auto": components 1, 2 and 4) and says so
SELECT nb_train_em('emcm_folds', 'label', 'body', '{"components": [2], "lambda": [1], "fold_column": "fold"}')
       = nb_train_em('emcm_folds', 'label', 'body',
                     (SELECT jsonb_build_object('lambda', lambda, 'components', components)
                      FROM nb_cross_validate_em('emcm_folds', 'label', 'body', lambdas => '{1}',
                                                fold_column => 'fold', component_counts => '{2}') WHERE chosen)) AS same;
SELECT nb_info(nb_train_em('emcm', 'label', 'body', '{"components": "auto", "lambda": 1, "folds": 3}')) ->> 'classes' AS classes;

-- what does not apply to a model of components
\set VERBOSITY terse
SELECT nb_merge(model, model) FROM emcm_model;
SELECT nb_subtract(model, model) FROM emcm_model;
SELECT nb_prune(model, '{"min_documents": 2}') FROM emcm_model;
SELECT * FROM nb_explain((SELECT model FROM emcm_model), 'invoice twice');
SELECT * FROM nb_feature_log_prob((SELECT model FROM emcm_model));
SELECT nb_predict(model, 'invoice', '{"kind": "complement"}') FROM emcm_model;
SELECT nb_model_to_jsonb(model) FROM emcm_model;
SELECT nb_train_em('emcm', 'label', 'body', '{"components": 0}');
SELECT nb_train_em('emcm', 'label', 'body', '{"components": 1.5}');
SELECT nb_train_em('emcm', 'label', 'body', '{"components": "2"}');
SELECT nb_train_em('emcm', 'label', 'body', '{"components": 101}');
SELECT nb_train_em('emcm', 'label', 'body', '{"components": [2, 1.5]}');
SELECT nb_train_em('emcm', 'label', 'body', '{"components": "many"}');
SELECT * FROM nb_cross_validate_em('emcm', 'label', 'body', component_counts => '{0}');
SELECT * FROM nb_cross_validate_em('emcm', 'label', 'body', options => '{"components": 2}');
\set VERBOSITY default
DROP TABLE emcm, emcm_docs, emcm_init, emcm_flat, emcm_model, emcm_folds, emcm_ref;
DROP FUNCTION emcm_summed(nb_model, text, jsonb), emcm_prior(nb_model, float8);
