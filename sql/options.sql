--
-- options: every invalid option is an error with its exact message
-- (SQLSTATE 22023), for all three prediction functions and both feature types.
--
CREATE TABLE opt_model AS
SELECT nb_train(l, t) AS m FROM (VALUES ('a', '{x,y}'::text[]), ('b', '{x}')) AS v(l, t);

-- valid: NULL, {}, every key, keys in any order, alpha at both ends of its range
SELECT o AS options, nb_predict(m, '{x,y}'::text[], o::jsonb) AS predict
FROM opt_model, (VALUES (NULL), ('{}'), ('{"kind": "multinomial"}'), ('{"kind": "bernoulli"}'),
                        ('{"kind": "complement"}'), ('{"alpha": 0}'), ('{"alpha": 0.0}'), ('{"alpha": 1e100}'),
                        ('{"alpha": 2.5e-300}'), ('{"fit_prior": true}'), ('{"fit_prior": false}'),
                        ('{"class_prior": {"b": 2, "a": 1}}'), ('{"class_prior": {"a": 0, "b": 1e-300}}'),
                        ('{"class_prior": {"a": 1e300, "b": 1e300}, "alpha": 0.5, "kind": "bernoulli", "fit_prior": false}')
                ) AS v(o)
ORDER BY o COLLATE "C" NULLS FIRST;

\set VERBOSITY sqlstate
SELECT nb_predict(m, '{x}'::text[], '[]') FROM opt_model;
\set VERBOSITY default

-- not an object
SELECT nb_predict(m, '{x}'::text[], '[]') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '[{"kind": "bernoulli"}]') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '1') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '"bernoulli"') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], 'null') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], 'true') FROM opt_model;

-- unrecognized keys (names are case-sensitive)
SELECT nb_predict(m, '{x}'::text[], '{"Kind": "bernoulli"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"smoothing": 1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"": 1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": 1, "normalize": true}') FROM opt_model;
-- a tokenizer option among the prediction options (the analyst tuning
-- ngram_range at scoring, or in a grid) names where it goes
SELECT nb_predict(m, '{x}'::text[], '{"ngram_range": [1, 2]}') FROM opt_model;
SELECT nb_with_options(m, '{"lowercase": false}') FROM opt_model;
-- the key "tokenizer" too; the hint's form, the tokenizer by position to the
-- aggregate (which takes no named arguments), trains and scores quietly
SELECT nb_predict(m, '{x}'::text[], '{"tokenizer": {"ngram_range": [1, 2]}}') FROM opt_model;
SELECT nb_predict(nb_train(l, b, '{"ngram_range": [1, 2]}'), 'ab cd')
FROM (VALUES ('a', 'ab cd'), ('b', 'ab')) AS v(l, b);

-- kind: not a string, unknown, wrong case
SELECT nb_predict(m, '{x}'::text[], '{"kind": 1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"kind": null}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"kind": ["bernoulli"]}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"kind": "gaussian"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"kind": "Bernoulli"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"kind": ""}') FROM opt_model;

-- alpha: negative, not a number, too big
SELECT nb_predict(m, '{x}'::text[], '{"alpha": -1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": -1e-300}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": "1"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": null}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": true}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": [1]}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": 1.0000000001e100}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"alpha": 1e101}') FROM opt_model;

-- fit_prior: not a boolean
SELECT nb_predict(m, '{x}'::text[], '{"fit_prior": "true"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"fit_prior": 1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"fit_prior": null}') FROM opt_model;

-- class_prior: not an object, unknown label, missing label, bad probabilities
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": [1, 2]}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": 0.5}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": null}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": "a"}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1, "b": 1, "c": 1}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1, "B": 1}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"b": 1}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": -0.5, "b": 1}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1, "b": "1"}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1, "b": null}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1, "b": {"p": 1}}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 0, "b": 0}}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 0, "b": 0.0}}') FROM opt_model;
-- a sum that overflows to infinity
SELECT nb_predict(m, '{x}'::text[], '{"class_prior": {"a": 1e308, "b": 1e308}}') FROM opt_model;

-- the first error found wins: keys are read in jsonb order (shorter keys first)
SELECT nb_predict(m, '{x}'::text[], '{"kind": "nope", "alpha": -1}') FROM opt_model;
SELECT nb_predict(m, '{x}'::text[], '{"fit_prior": 1, "nope": 1}') FROM opt_model;

-- the same checks for every function and both feature types
SELECT nb_predict_proba(m, '{x}'::text[], '{"alpha": -1}') FROM opt_model;
SELECT nb_predict_log_proba(m, '{x}'::text[], '{"alpha": -1}') FROM opt_model;
SELECT nb_predict(m, 'x'::tsvector, '{"alpha": -1}') FROM opt_model;
SELECT nb_predict_proba(m, 'x'::tsvector, '{"kind": "x"}') FROM opt_model;
SELECT nb_predict_log_proba(m, 'x'::tsvector, '{"class_prior": {"a": 1}}') FROM opt_model;
-- even when no token of the document is known
SELECT nb_predict(m, '{zzz}'::text[], '{"alpha": -1}') FROM opt_model;
SELECT nb_predict(m, '{}'::text[], '{"kind": "x"}') FROM opt_model;

-- options that change from row to row are checked on every row
SELECT nb_predict(m, '{x}'::text[], o::jsonb)
FROM opt_model, (VALUES (1, '{"alpha": 1}'), (2, '{"alpha": 2}'), (3, '{"alpha": -2}')) AS v(i, o)
ORDER BY i;

-- numbers beyond the range of float8 get the option's own error
SELECT nb_predict(nb_train('a', '{x}'::text[]), '{x}'::text[], '{"alpha": 1e400}');
SELECT nb_predict(nb_train('a', '{x}'::text[]), '{x}'::text[], '{"class_prior": {"a": 1e-400}}');
-- and an alpha that underflows is 0 (maximum likelihood)
SELECT nb_predict_proba(nb_train('a', '{x}'::text[]), '{x}'::text[], '{"alpha": 1e-400}');
