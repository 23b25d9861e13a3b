--
-- predict_top: nb_predict_top, the k most probable classes of a row with
-- their probabilities as float8, and nb_probability, one class's.  By hand
-- on the README's four documents, then row by row against nb_predict and
-- nb_predict_proba on generated rows of every feature type under several
-- option sets.
--

-- By hand, "money" and "lunch" (alpha 1, V = 9; spam has 7 tokens, ham 6):
-- spam 1/2 * 4/16 * 1/16, ham 1/2 * 2/15 * 2/15, so p(ham) = (4/225) /
-- (4/225 + 1/64) = 256/481 = 0.532224532224532...
SELECT t.* FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['money', 'lunch']) t;
SELECT t.* FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['money', 'lunch'], 2) t;
-- k beyond the classes gives every class; NULL k too; 0 none
SELECT count(*) FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['money'], 5);
SELECT count(*) FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['money'], NULL);
SELECT count(*) FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['money'], 0);
-- a tie (an empty document, equal priors): the label first in byte order
-- first, as nb_predict chooses it
SELECT t.* FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY[]::text[], 2) t;
-- alpha 0: "cheap" rules ham out, probability exactly 0
SELECT t.* FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['cheap'], 2, '{"alpha": 0}') t;
-- complement has no probabilities: the classes in its order, probability NULL
SELECT t.label, t.probability IS NULL AS no_probability
FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['cheap', 'lunch', 'tomorrow'], 2,
                    '{"kind": "complement"}') t;
-- order: rows in byte order of labels ('aa' before 'b': nb_classes, a tie
-- in nb_predict_top), while a jsonb object's keys come shorter first ("b"
-- before "aa", as jsonb orders every object)
CREATE TABLE top_order AS
SELECT nb_train(label, tokens) AS m FROM (VALUES ('b', '{x}'::text[]), ('aa', '{y}')) v(label, tokens);
SELECT string_agg(c.label, ',') AS classes FROM top_order, nb_classes(m) c;
SELECT string_agg(t.label, ',') AS tied FROM top_order, nb_predict_top(m, ARRAY[]::text[], 2, '{"fit_prior": false}') t;
SELECT nb_predict_proba(m, ARRAY['x']) AS proba, (SELECT string_agg(k, ',') FROM jsonb_object_keys(nb_predict_proba(m, ARRAY['x'])) k) AS keys
FROM top_order;
DROP TABLE top_order;
-- a NULL model or features: no rows (LEFT JOIN LATERAL keeps the row)
SELECT count(*) FROM nb_predict_top(NULL::nb_model, ARRAY['a']);
SELECT count(*) FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), NULL::text[]);
SELECT d.id, t.label FROM docs d LEFT JOIN LATERAL nb_predict_top(NULL::nb_model, d.tokens) t ON true ORDER BY d.id;
-- errors: a negative k, and the scoring functions' own
SELECT * FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['a'], -1);
SELECT * FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), ARRAY['a'], 1, '{"kind": "other"}');
SELECT * FROM nb_predict_top((SELECT nb_train(label, tokens) FROM docs), '{"a": 1}'::jsonb);
-- the planner marks a model it proves constant, as for nb_predict (the mark
-- looked for in the plan: how EXPLAIN names an InitPlan differs by version)
CREATE FUNCTION pt_marked(query text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
    IF line LIKE '%nb_predict_top(nbc_query_constant(%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT pt_marked('SELECT t.* FROM docs d, nb_predict_top((SELECT nb_train(label, tokens) FROM docs), d.tokens) t') AS marked,
       pt_marked('SELECT t.* FROM docs d, nb_predict_top((SELECT nb_train(label, tokens) FROM docs x WHERE x.id <> d.id), d.tokens) t') AS correlated;

-- Generated rows: 300 documents of four classes, each with tokens from its
-- class's words and others', a numeric and a categorical column
CREATE TABLE top_rows AS
SELECT n AS id, 'c' || (n % 4) AS label,
       ARRAY(SELECT 'w' || ((n * 7 + k * 13 + (n % 4) * 5 * (k % 2)) % 23)
             FROM generate_series(1, 1 + n % 6) AS k) AS tokens,
       (n % 4) * 1.5 + ((n * 37) % 11) / 4.0 AS x,
       'v' || ((n * 3 + n % 4) % 5) AS cat
FROM generate_series(1, 300) AS n;
CREATE TABLE top_models AS
SELECT nb_train(label, tokens) FILTER (WHERE id % 3 <> 0) AS bag,
       nb_train(label, array_to_tsvector(tokens)) FILTER (WHERE id % 3 <> 0) AS lexemes,
       nb_train(label, jsonb_build_object('x', x, 'cat', cat, 'words', to_jsonb(tokens))) FILTER (WHERE id % 3 <> 0) AS mixed,
       nb_train(label, ARRAY[x, cardinality(tokens)]::float8[]) FILTER (WHERE id % 3 <> 0) AS vec
FROM top_rows;

-- on the held-out third, for each feature type and option set: the first
-- row is nb_predict's label, every class's probability is exactly
-- nb_predict_proba's, and the rows come most probable first, ties in byte
-- order of the labels
CREATE TABLE top_check AS
WITH opts(o) AS (VALUES (NULL::jsonb), ('{"alpha": 0.1}'), ('{"kind": "bernoulli"}'),
                        ('{"fit_prior": false, "alpha": 0}'), ('{"kind": "dcm"}')),
rows AS (
    SELECT 'text[]' AS input, r.id, o.o,
           nb_predict(m.bag, r.tokens, o.o) AS predicted, nb_predict_proba(m.bag, r.tokens, o.o) AS proba,
           t.label, t.probability, t.n
    FROM top_rows r, top_models m, opts o,
         LATERAL nb_predict_top(m.bag, r.tokens, NULL, o.o) WITH ORDINALITY AS t(label, probability, n)
    WHERE r.id % 3 = 0
    UNION ALL
    SELECT 'tsvector', r.id, o.o,
           nb_predict(m.lexemes, array_to_tsvector(r.tokens), o.o),
           nb_predict_proba(m.lexemes, array_to_tsvector(r.tokens), o.o), t.*
    FROM top_rows r, top_models m, opts o,
         LATERAL nb_predict_top(m.lexemes, array_to_tsvector(r.tokens), NULL, o.o) WITH ORDINALITY AS t
    WHERE r.id % 3 = 0
    UNION ALL
    SELECT 'jsonb', r.id, o.o, nb_predict(m.mixed, f.f, o.o), nb_predict_proba(m.mixed, f.f, o.o), t.*
    FROM top_rows r, top_models m, opts o,
         LATERAL (SELECT jsonb_build_object('x', r.x, 'cat', r.cat, 'words', to_jsonb(r.tokens)) AS f) f,
         LATERAL nb_predict_top(m.mixed, f.f, NULL, o.o) WITH ORDINALITY AS t
    WHERE r.id % 3 = 0
    UNION ALL
    SELECT 'float8[]', r.id, o.o, nb_predict(m.vec, v.v, o.o), nb_predict_proba(m.vec, v.v, o.o), t.*
    FROM top_rows r, top_models m, opts o,
         LATERAL (SELECT ARRAY[r.x, cardinality(r.tokens)]::float8[] AS v) v,
         LATERAL nb_predict_top(m.vec, v.v, NULL, o.o) WITH ORDINALITY AS t
    WHERE r.id % 3 = 0 AND (o.o IS NULL OR o.o = '{"fit_prior": false, "alpha": 0}'))
SELECT *, lag(label) OVER w AS prev_label, lag(probability) OVER w AS prev_probability
FROM rows WINDOW w AS (PARTITION BY input, id, o ORDER BY n);

SELECT input, coalesce(o::text, 'defaults') AS options,
       count(DISTINCT id) AS documents,
       count(*) = 4 * count(DISTINCT id) AS every_class,
       count(*) FILTER (WHERE n = 1 AND label <> predicted) AS first_not_predicted,
       count(*) FILTER (WHERE probability IS DISTINCT FROM (proba ->> label)::float8) AS probability_differs,
       count(*) FILTER (WHERE prev_probability < probability
                           OR (prev_probability = probability AND prev_label COLLATE "C" > label)) AS out_of_order,
       count(*) FILTER (WHERE prev_probability = probability) AS ties
FROM top_check GROUP BY 1, 2 ORDER BY 1, 2;

-- complement: no probability, the classes in the order of its scores
-- (nb_predict_proba's normalized ones), nb_predict's first
SELECT count(*) AS rows,
       count(*) FILTER (WHERE n = 1 AND label <> predicted) AS first_not_predicted,
       count(*) FILTER (WHERE probability IS NOT NULL) AS with_probability,
       count(*) FILTER (WHERE prev_score < score OR (prev_score = score AND prev_label COLLATE "C" > label)) AS out_of_order
FROM (SELECT t.*, nb_predict(m.bag, r.tokens, '{"kind": "complement"}') AS predicted,
             (nb_predict_proba(m.bag, r.tokens, '{"kind": "complement"}') ->> t.label)::float8 AS score,
             lag(t.label) OVER w AS prev_label,
             lag((nb_predict_proba(m.bag, r.tokens, '{"kind": "complement"}') ->> t.label)::float8) OVER w AS prev_score
      FROM top_rows r, top_models m,
           LATERAL nb_predict_top(m.bag, r.tokens, NULL, '{"kind": "complement"}') WITH ORDINALITY AS t(label, probability, n)
      WHERE r.id % 3 = 0
      WINDOW w AS (PARTITION BY r.id ORDER BY t.n)) c;

-- k rows are the first k of every class's
SELECT count(*) AS differ
FROM top_rows r, top_models m, generate_series(0, 4) AS k
WHERE r.id % 3 = 0
  AND ARRAY(SELECT t.label FROM nb_predict_top(m.bag, r.tokens, k) t) <>
      (ARRAY(SELECT t.label FROM nb_predict_top(m.bag, r.tokens, NULL) t))[1:k];

-- nb_probability: every class's probability is nb_predict_proba's number
-- for it, to the bit, for each feature type and option set (complement's
-- normalized scores and a temperature included)
WITH opts(o) AS (VALUES (NULL::jsonb), ('{"alpha": 0.1}'), ('{"kind": "bernoulli"}'),
                        ('{"fit_prior": false, "alpha": 0}'), ('{"kind": "dcm"}'),
                        ('{"kind": "complement"}'), ('{"temperature": 3}')),
classes AS (SELECT c.label FROM top_models m, nb_classes(m.bag) c),
pairs AS (
    SELECT 'text[]' AS input, o.o, nb_probability(m.bag, r.tokens, c.label, o.o) AS p,
           (nb_predict_proba(m.bag, r.tokens, o.o) ->> c.label)::float8 AS want
    FROM top_rows r, top_models m, opts o, classes c
    UNION ALL
    SELECT 'tsvector', o.o, nb_probability(m.lexemes, array_to_tsvector(r.tokens), c.label, o.o),
           (nb_predict_proba(m.lexemes, array_to_tsvector(r.tokens), o.o) ->> c.label)::float8
    FROM top_rows r, top_models m, opts o, classes c
    UNION ALL
    SELECT 'jsonb', o.o, nb_probability(m.mixed, f.f, c.label, o.o), (nb_predict_proba(m.mixed, f.f, o.o) ->> c.label)::float8
    FROM top_rows r, top_models m, opts o, classes c,
         LATERAL (SELECT jsonb_build_object('x', r.x, 'cat', r.cat, 'words', to_jsonb(r.tokens)) AS f) f
    WHERE o.o IS DISTINCT FROM '{"kind": "complement"}'
    UNION ALL
    SELECT 'float8[]', o.o, nb_probability(m.vec, v.v, c.label, o.o), (nb_predict_proba(m.vec, v.v, o.o) ->> c.label)::float8
    FROM top_rows r, top_models m, opts o, classes c,
         LATERAL (SELECT ARRAY[r.x, cardinality(r.tokens)]::float8[] AS v) v
    WHERE o.o IS NULL OR o.o IN ('{"fit_prior": false, "alpha": 0}', '{"temperature": 3}'))
SELECT input, count(*) AS pairs, count(*) FILTER (WHERE p IS DISTINCT FROM want) AS differ
FROM pairs GROUP BY input ORDER BY input;

DROP TABLE top_rows, top_models, top_check;

-- by hand as above: p(ham | money, lunch) = 256/481, p(spam) = 225/481
SELECT nb_probability(m, ARRAY['money', 'lunch'], 'ham') AS ham, 256 / 481.0 AS by_hand,
       nb_probability(m, ARRAY['money', 'lunch'], 'spam') + nb_probability(m, ARRAY['money', 'lunch'], 'ham') AS total
FROM (SELECT nb_train(label, tokens) AS m FROM docs) t;
-- a document of text, with the model's tokenizer
SELECT nb_probability(nb_train(label, array_to_string(tokens, ' ')), 'Money for LUNCH', 'ham') AS ham FROM docs;
-- NULL model, features or label: NULL; a label the model has no class of:
-- an error; the scoring functions' own errors
SELECT nb_probability(NULL::nb_model, ARRAY['a'], 'ham') IS NULL AS null_model,
       nb_probability(m, NULL::text[], 'ham') IS NULL AS null_features,
       nb_probability(m, ARRAY['a'], NULL) IS NULL AS null_label
FROM (SELECT nb_train(label, tokens) AS m FROM docs) t;
SELECT nb_probability(m, ARRAY['money'], 'eggs') FROM (SELECT nb_train(label, tokens) AS m FROM docs) t;
SELECT nb_probability(m, ARRAY['money'], 'ham', '{"kind": "other"}') FROM (SELECT nb_train(label, tokens) AS m FROM docs) t;
SELECT nb_probability(m, 'money', 'ham') FROM (SELECT nb_train(label, tokens) AS m FROM docs) t;
