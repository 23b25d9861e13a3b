--
-- labels: a label column of any type trains and evaluates as its text form
-- (label::text), every nb_train form and nb_metrics alike; text columns and
-- unknown literals keep the text form.  And nb_metrics refuses a predicted
-- "label" that is an object of probabilities cast to text.
--

CREATE TYPE lab_mood AS ENUM ('sad', 'happy');
CREATE DOMAIN lab_stars AS smallint CHECK (VALUE BETWEEN 1 AND 5);
CREATE TABLE lab_rows (id int, stars int, good bool, mood lab_mood, rating lab_stars,
                       price numeric, day date, name varchar, tokens text[]);
INSERT INTO lab_rows VALUES
    (1, 5, true,  'happy', 5, 9.50, '2026-01-02', 'spam', '{win,money,now,money}'),
    (2, 5, true,  'happy', 4, 9.50, '2026-01-02', 'spam', '{cheap,money,offer}'),
    (3, 1, false, 'sad',   1, 0.10, '2026-01-03', 'ham',  '{meeting,tomorrow,agenda}'),
    (4, 2, false, 'sad',   2, 0.10, '2026-01-03', 'ham',  '{lunch,tomorrow,money}');

-- the classes are the labels' text: 'true' and 'false' as boolean's cast to
-- text writes them (not its output 't' and 'f'), an enum's value, a domain's
-- base type's text
SELECT 'stars' AS col, c.* FROM nb_classes((SELECT nb_train(stars, tokens) FROM lab_rows)) c
UNION ALL SELECT 'good', c.* FROM nb_classes((SELECT nb_train(good, tokens) FROM lab_rows)) c
UNION ALL SELECT 'mood', c.* FROM nb_classes((SELECT nb_train(mood, tokens) FROM lab_rows)) c
UNION ALL SELECT 'rating', c.* FROM nb_classes((SELECT nb_train(rating, tokens) FROM lab_rows)) c
UNION ALL SELECT 'price', c.* FROM nb_classes((SELECT nb_train(price, tokens) FROM lab_rows)) c
UNION ALL SELECT 'day', c.* FROM nb_classes((SELECT nb_train(day, tokens) FROM lab_rows)) c
ORDER BY 1, 2;

-- every form (text[], tsvector, jsonb, float8[]; with and without weight)
-- makes the bytes nb_train(label::text, ...) makes, for every label type
CREATE FUNCTION lab_same(col text) RETURNS TABLE (form text, same boolean) LANGUAGE plpgsql AS $$
DECLARE
  f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['tokens', 'tokens, id * 0.5', 'array_to_tsvector(tokens)',
                           'array_to_tsvector(tokens), id * 0.5',
                           'jsonb_build_object(''n'', id, ''b'', to_jsonb(tokens))',
                           'jsonb_build_object(''n'', id), 2', 'ARRAY[id, cardinality(tokens)]::float8[]',
                           'ARRAY[id]::float8[], id'] LOOP
    form := f;
    EXECUTE format('SELECT (SELECT nb_train(%1$I, %2$s) FROM lab_rows) = (SELECT nb_train(%1$I::text, %2$s) FROM lab_rows)',
                   col, f) INTO same;
    RETURN NEXT;
  END LOOP;
END $$;
SELECT col, count(*) AS forms, count(*) FILTER (WHERE same) AS same_bytes
FROM unnest(ARRAY['stars', 'good', 'mood', 'rating', 'price', 'day']) AS col, lab_same(col)
GROUP BY col ORDER BY col;

-- which form a call chooses (EXPLAIN shows the text form's cast): a text or
-- varchar column and an unknown literal take the text form, other types the
-- anynonarray form; a NULL literal is a text NULL, skipped as any NULL label
EXPLAIN (VERBOSE, COSTS OFF)
SELECT nb_train(name, tokens), nb_train('spam', tokens), nb_train(stars, tokens), nb_train(mood, tokens)
FROM lab_rows;
SELECT nb_train(NULL, tokens) IS NULL AS skipped FROM lab_rows;
-- an array label has no form: most likely the features given first
SELECT nb_train(tokens, name) FROM lab_rows;

-- predictions are text: compare with the label as text, or cast back
SELECT id, stars, nb_predict(m, tokens) AS predicted, nb_predict(m, tokens)::int = stars AS same
FROM lab_rows, (SELECT nb_train(stars, tokens) AS m FROM lab_rows) s ORDER BY id;

-- nb_metrics takes the actual label of any type too.  By hand: the model of
-- every row predicts 5, 5, 1, 2 (each row's own class) so accuracy 1; with
-- good, the same four rows: 1 as well
SELECT nb_metrics(stars, nb_predict(m, tokens)) -> 'accuracy' AS stars_accuracy,
       nb_metrics(stars, nb_predict(m, tokens), 2.0) -> 'confusion' -> '5' AS weighted_confusion_5
FROM lab_rows, (SELECT nb_train(stars, tokens) AS m FROM lab_rows) s;
SELECT nb_metrics(good, nb_predict_proba(m, tokens)) - 'roc_auc' - 'average_precision' - 'log_loss' - 'brier'
       = nb_metrics(good::text, nb_predict_proba(m, tokens)) - 'roc_auc' - 'average_precision' - 'log_loss' - 'brier' AS same_as_text,
       nb_metrics(good, nb_predict_proba(m, tokens), 1 + id) -> 'log_loss'
       = nb_metrics(good::text, nb_predict_proba(m, tokens), 1 + id) -> 'log_loss' AS same_weighted
FROM lab_rows, (SELECT nb_train(good, tokens) AS m FROM lab_rows) s;

-- probabilities cast to text are refused on the first such row, with a hint
-- (this built a "label" per distinct object before: 1,079 rows made 154 MB)
SELECT nb_metrics(name, nb_predict_proba(m, tokens)::text)
FROM lab_rows, (SELECT nb_train(name, tokens) AS m FROM lab_rows) s;
SELECT nb_metrics(stars, nb_predict_log_proba(m, tokens)::text, 1)
FROM lab_rows, (SELECT nb_train(stars, tokens) AS m FROM lab_rows) s;
SELECT nb_metrics('a', ' {"a label that is long enough to be cut short": 0.25, "b": 0.75}');
-- a label that is not an object of numbers is a label, braces or not
SELECT nb_metrics(a, p) -> 'confusion' AS confusion
FROM (VALUES ('{x}', '{x}'), ('{"a": "b"}', '{"a": "b"}'), ('{}', '{}'), ('{"a": 1', '{"a": 1')) v(a, p);

-- a message quotes a label (or a feature or option name) of up to 64 bytes
-- whole, a longer one cut at a character boundary within 64 bytes, with
-- "..." (as PostgreSQL cuts a value in "Failing row contains"): a label of
-- 1 MB makes no 1 MB log line
SELECT nb_probability(nb_train(name, tokens), '{money}'::text[], repeat('x', 64)) FROM lab_rows;
SELECT nb_probability(nb_train(name, tokens), '{money}'::text[], repeat('x', 1000000)) FROM lab_rows;
SELECT nb_probability(nb_train(name, tokens), '{money}'::text[], 'a' || repeat('é', 100)) FROM lab_rows;  -- 'a' and 31 'é': 63 bytes
SELECT nb_predict(nb_train(name, tokens), '{money}'::text[], jsonb_build_object(repeat('o', 100), 1)) FROM lab_rows;
SELECT nb_train(label, features)
FROM (VALUES ('a', jsonb_build_object(repeat('f', 100), 1)), ('b', jsonb_build_object(repeat('f', 100), 'red'))) v(label, features);
SELECT nb_metrics(actual, predicted)
FROM (VALUES ('a', jsonb_build_object(repeat('p', 100), 2))) v(actual, predicted);

-- nb_probability and nb_explain's against take a class of any type, as
-- label::text: the same number as the text form and as nb_predict_proba's
-- object; a misspelled class is an error, where ->> gives NULL
SELECT nb_probability(m, '{money}'::text[], 5) = nb_probability(m, '{money}'::text[], '5') AS same_as_text,
       nb_probability(m, '{money}'::text[], 5) = (nb_predict_proba(m, '{money}'::text[]) ->> '5')::float8 AS same_as_proba
FROM (SELECT nb_train(stars, tokens) AS m FROM lab_rows) t;
SELECT nb_probability(m, '{money}'::text[], true) = nb_probability(m, '{money}'::text[], 'true') AS bool_class
FROM (SELECT nb_train(good, tokens) AS m FROM lab_rows) t;
SELECT nb_predict_proba(m, '{money}'::text[]) ->> 'Spam' AS misspelled_proba FROM (SELECT nb_train(name, tokens) AS m FROM lab_rows) t;
SELECT nb_probability(m, '{money}'::text[], 'Spam') FROM (SELECT nb_train(name, tokens) AS m FROM lab_rows) t;
SELECT nb_probability(m, '{money}'::text[], 3) FROM (SELECT nb_train(stars, tokens) AS m FROM lab_rows) t;
SELECT nb_probability(m, '{money}'::text[], NULL::int) IS NULL AS null_class FROM (SELECT nb_train(stars, tokens) AS m FROM lab_rows) t;
-- against an integer class: the rows of the text form
SELECT (SELECT array_agg(e ORDER BY e.part, e.feature) FROM nb_explain(m, '{money,tomorrow}'::text[], NULL, 1) e)
     = (SELECT array_agg(e ORDER BY e.part, e.feature) FROM nb_explain(m, '{money,tomorrow}'::text[], NULL, '1') e) AS same_rows,
       (SELECT DISTINCT compared_to FROM nb_explain(m, '{money,tomorrow}'::text[], NULL, 1)) AS compared_to
FROM (SELECT nb_train(stars, tokens) AS m FROM lab_rows) t;
SELECT * FROM nb_explain((SELECT nb_train(stars, tokens) FROM lab_rows), '{money}'::text[], NULL, 3);

DROP FUNCTION lab_same(text);
DROP TABLE lab_rows;
DROP DOMAIN lab_stars;
DROP TYPE lab_mood;
