--
-- unknown_features: rows scored that have no feature the model knows
-- (nbc.unknown_features), and nb_coverage.  Before 0.9.0 every such row
-- got a prediction from nothing it holds, and no query said so.
--
-- The model of setup's four documents: its vocabulary is win, money, now,
-- cheap, offer (spam) and meeting, tomorrow, agenda, lunch, money (ham).
CREATE TABLE uf_model AS SELECT nb_train(label, tokens) AS m FROM docs;
SHOW nbc.unknown_features;

-- 100 documents, three in four tokenized with another tokenizer (upper
-- case): one warning for the whole query, 75 of 100 rows, where the
-- query used to be silent; the 75 get the tied prior (ham sorts first)
CREATE TABLE uf_docs AS
SELECT i AS id,
       CASE WHEN i % 4 = 0 THEN ARRAY['money', 'x' || i] ELSE ARRAY['MONEY', 'X' || i] END AS tokens
FROM generate_series(1, 100) AS i;
ANALYZE uf_model, uf_docs;
SELECT nb_predict(m, tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
-- every row with a known token: no warning
SELECT count(nb_predict(m, tokens)) FROM uf_model, uf_docs WHERE id % 4 = 0;
-- NULL features are not scored and do not count: 1 of 2 rows
SELECT nb_predict(m, t) FROM uf_model, (VALUES (1, NULL::text[]), (2, ARRAY['cheap']), (3, ARRAY['CHEAP'])) v(i, t)
ORDER BY i;

-- every scoring function counts its rows, each call once
SELECT nb_predict_proba(m, ARRAY['zzz']) FROM uf_model;
SELECT nb_predict_log_proba(m, ARRAY['zzz'], '{"kind": "bernoulli"}') FROM uf_model;
SELECT nb_predict(m, tokens), nb_predict_proba(m, tokens) ->> 'ham' AS p_ham
FROM uf_model, uf_docs WHERE id IN (1, 4) ORDER BY id;
-- nb_explain: the prior is all there is to explain
SELECT * FROM nb_explain((SELECT m FROM uf_model), ARRAY['ZZZ', 'QQQ']);
-- nb_grid_metrics looks each row up once, whatever the number of option sets
SELECT array_length(nb_grid_metrics(m, tokens, 'spam', ARRAY['{}'::jsonb, '{"alpha": 0.5}', '{"kind": "bernoulli"}']), 1)
FROM uf_model, uf_docs;

-- a row with no features at all counts too: empty array, empty tsvector,
-- empty jsonb object, only null values, float8[] of NULLs
SELECT nb_predict(m, '{}'::text[]) FROM uf_model;
SELECT nb_predict(m, ''::tsvector) FROM uf_model;
SELECT nb_predict(m, f) FROM uf_model, (VALUES ('{}'::jsonb), ('{"": null}'), ('{"": []}')) v(f);

-- jsonb: a key the model does not have, a categorical value it never saw,
-- a bag's unseen tokens are unknown; a known Gaussian or boolean key is a
-- known feature whatever its value
CREATE TABLE uf_weather AS
SELECT nb_train(label, jsonb_build_object('outlook', outlook, 'temp', temp, 'windy', windy,
                                          'subject', to_jsonb(subject))) AS m
FROM (VALUES ('play', 'sunny', 24, false, ARRAY['fun']), ('play', 'overcast', 21, true, ARRAY['fun', 'park']),
             ('stay', 'rainy', 15, true, ARRAY['wet']), ('stay', 'sunny', 31, true, ARRAY['hot'])) t(label, outlook, temp, windy, subject);
SELECT i, nb_predict(m, f) FROM uf_weather, (VALUES
    (1, '{"outlook": "foggy"}'::jsonb),                     -- unknown value
    (2, '{"Outlook": "sunny", "Temp": 20}'),               -- unknown keys
    (3, '{"subject": ["FUN"], "other": true}'),            -- unknown token, unknown key
    (4, '{"temp": 1000}'),                                  -- known: a Gaussian value
    (5, '{"windy": false}'),                                -- known: a boolean value
    (6, '{"outlook": "sunny", "subject": ["zzz"]}'),       -- known: a categorical value
    (7, '{"subject": {"park": 2}}')) v(i, f)               -- known: a token
ORDER BY i;
-- float8[]: a row with a non-NULL element is known; all NULL is not
CREATE TABLE uf_vec AS SELECT nb_train(label, v) AS m
FROM (VALUES ('a', '{1, 2}'::float8[]), ('b', '{3, 5}')) t(label, v);
SELECT nb_predict(m, v) FROM uf_vec, (VALUES (1, '{NULL, 2}'::float8[]), (2, '{NULL, NULL}')) t(i, v) ORDER BY i;

-- error: the first such row is refused (22023), naming what happened
SET nbc.unknown_features = error;
SELECT nb_predict(m, tokens) FROM uf_model, uf_docs WHERE id IN (4, 8) ORDER BY id;
SELECT nb_predict(m, tokens) FROM uf_model, uf_docs ORDER BY id;
SELECT nb_predict(m, '{}'::text[]) FROM uf_model;
SELECT * FROM nb_explain((SELECT m FROM uf_model), ARRAY['ZZZ']);
SELECT nb_grid_metrics(m, tokens, 'spam', ARRAY['{}'::jsonb]) FROM uf_model, uf_docs;
\set VERBOSITY sqlstate
SELECT nb_predict(m, '{"outlook": "foggy"}'::jsonb) FROM uf_weather;
\set VERBOSITY default
-- ignore: scored as they are, nothing said
SET nbc.unknown_features = ignore;
SELECT nb_predict(m, tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
RESET nbc.unknown_features;
-- the setting has three values
SET nbc.unknown_features = notice;

-- nb_coverage counts nothing: it looks rows up, it does not score them
SELECT count(*) FILTER (WHERE nb_coverage(m, tokens) = 0) AS unknown_rows FROM uf_model, uf_docs;

--
-- Once per statement, whoever scores: functions, SPI, PL/pgSQL
--
-- a PL/pgSQL function scoring in simple expressions, called per row: one
-- warning for the calling query, 75 rows
CREATE FUNCTION uf_label(model nb_model, tokens text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    label text;
BEGIN
    label := nb_predict(model, tokens);
    RETURN label;
END $$;
SELECT uf_label(m, tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
-- a function running a query (SPI) per call: one warning, 3 of 4 rows
CREATE FUNCTION uf_spi(i int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN (SELECT nb_predict(m, d.tokens) FROM uf_model, uf_docs d WHERE d.id = i);
END $$;
SELECT i, uf_spi(i) FROM generate_series(1, 4) AS i ORDER BY i;
-- a DO block's loop: one warning when it ends
DO $$
DECLARE
    model nb_model := (SELECT m FROM uf_model);
BEGIN
    FOR i IN 1 .. 5 LOOP
        PERFORM nb_predict(model, ARRAY['Q' || i]);
    END LOOP;
END $$;
-- CREATE TABLE AS runs its query inside the utility statement: one warning
CREATE TEMP TABLE uf_labels AS SELECT id, nb_predict(m, tokens) AS label FROM uf_model, uf_docs;
-- a function with SET nbc.unknown_features = ignore leaves its rows out of
-- its caller's count: 2 of 3 rows counted, 1 unknown
CREATE FUNCTION uf_quiet(model nb_model, tokens text[]) RETURNS text LANGUAGE sql
SET nbc.unknown_features = ignore AS 'SELECT nb_predict(model, tokens)';
SELECT nb_predict(m, ARRAY['ZZZ']), nb_predict(m, ARRAY['money']), uf_quiet(m, ARRAY['QQQ']) FROM uf_model;
-- an error caught inside a function: the statement goes on, and its rows
-- count, the one refused too: 2 of 3
CREATE FUNCTION uf_try(model nb_model, tokens text[]) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    SET LOCAL nbc.unknown_features = error;
    RETURN nb_predict(model, tokens);
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN 'refused: ' || SQLERRM;
END $$;
SELECT nb_predict(m, ARRAY['ZZZ']) AS first, uf_try(m, ARRAY['money']) AS known, uf_try(m, ARRAY['QQQ']) AS unknown
FROM uf_model;
RESET nbc.unknown_features;

-- nb_cross_validate scores each row once, in its fold, in SPI queries (two
-- passes of 8 folds here): one warning when the call ends.  Rows 7 to 10
-- have tokens of their own, which no out-of-fold model knows: 4 of 10.
CREATE TABLE uf_cv AS
SELECT i AS id, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS label,
       CASE WHEN i <= 6 THEN ARRAY['t' || (i % 2), 'shared'] ELSE ARRAY['own' || i] END AS tokens
FROM generate_series(1, 10) AS i;
SELECT options FROM nb_cross_validate('uf_cv', 'label', 'tokens', grid => '{"alpha": 1}', fold_column => 'id');

-- a statement that fails reports nothing: its error is what is said, and
-- its rows are not reported later (the next query has none)
SELECT nb_predict(m, tokens), 1 / (id - 50) FROM uf_model, uf_docs ORDER BY id;
SELECT nb_predict(m, ARRAY['money']) FROM uf_model;
-- the same in a transaction block, after ROLLBACK TO SAVEPOINT
BEGIN;
SAVEPOINT s;
SELECT nb_predict(m, tokens), 1 / (id - 50) FROM uf_model, uf_docs ORDER BY id;
ROLLBACK TO SAVEPOINT s;
SELECT nb_predict(m, ARRAY['money']) FROM uf_model;
-- each statement of a block reports when it ends, not at COMMIT
SELECT nb_predict(m, ARRAY['ZZZ']) FROM uf_model;
COMMIT;
-- a cursor: each FETCH is a statement, reporting the rows it scored
-- (ids 1 to 4, then 5 to 8: 3 of 4 each time)
BEGIN;
DECLARE uf_cursor CURSOR FOR SELECT d.id, nb_predict(s.m, d.tokens) FROM uf_docs d, uf_model s;
FETCH 4 FROM uf_cursor;
FETCH 4 FROM uf_cursor;
CLOSE uf_cursor;
COMMIT;

-- a parallel plan: a worker counts its own rows and reports them, and the
-- leader relays its warning (with CONTEXT "parallel worker", which psql
-- shows for errors only).  Here the whole plan runs in one worker (the
-- leader instead if none can start): one warning of 75 rows.  With
-- several processes scoring, each reports its own rows.
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS parallel;
EXPLAIN (COSTS OFF) SELECT count(nb_predict(s.m, d.tokens)) FROM uf_docs d, uf_model s;
SELECT count(nb_predict(s.m, d.tokens)) FROM uf_docs d, uf_model s;
-- an error in a worker is the query's error
SET nbc.unknown_features = error;
\set VERBOSITY terse
SELECT count(nb_predict(s.m, d.tokens)) FROM uf_docs d, uf_model s;
\set VERBOSITY default
RESET nbc.unknown_features;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS parallel;

--
-- nb_coverage: the share of a row's features the model knows
--
-- text[]: each occurrence counts; NULL elements are not features.
-- money 1 of 2; money twice of 3; money and lunch of 4; 1 of 2 (NULL
-- skipped); all unknown 0; none 0
SELECT i, nb_coverage(m, t) FROM uf_model, (VALUES
    (1, ARRAY['money', 'ZZZ']), (2, ARRAY['money', 'money', 'ZZZ']), (3, ARRAY['money', 'x', 'x', 'lunch']),
    (4, ARRAY['money', NULL, 'ZZZ']), (5, ARRAY['ZZZ', 'QQQ']), (6, '{}'::text[])) v(i, t)
ORDER BY i;
-- NULL in, NULL out (STRICT)
SELECT nb_coverage(m, NULL::text[]) IS NULL AS null_features, nb_coverage(NULL, ARRAY['money']) IS NULL AS null_model
FROM uf_model;
-- tsvector: each position counts, once when stripped: 'money':1,2 'zzz':3
-- is 2 of 3, stripped 1 of 2
SELECT nb_coverage(m, to_tsvector('simple', 'money money zzz')) AS positions,
       nb_coverage(m, strip(to_tsvector('simple', 'money money zzz'))) AS stripped,
       nb_coverage(m, ''::tsvector) AS empty
FROM uf_model;
-- jsonb: every key with a non-null value is a feature, a bag's tokens
-- counted with their counts
SELECT i, nb_coverage(m, f) FROM uf_weather, (VALUES
    (1, '{"outlook": "sunny", "temp": 22, "windy": false, "subject": ["fun"]}'::jsonb),  -- 4 of 4
    (2, '{"outlook": "foggy", "temp": 22}'),                     -- 1 of 2
    (3, '{"outlook": "sunny", "other": 1, "more": true}'),      -- 1 of 3
    (4, '{"subject": {"fun": 3, "zzz": 1}}'),                   -- 3 of 4
    (5, '{"subject": ["fun", "fun", "zzz"], "nope": ["a", "b", "c"]}'),  -- 2 of 6
    (6, '{"temp": null, "subject": []}'),                       -- none: 0
    (7, '{"Outlook": "sunny"}')) v(i, f)                        -- 0 of 1
ORDER BY i;
-- a text[] model's bag is "": {"": [...]} is its tokens
SELECT nb_coverage(m, '{"": ["money", "ZZZ", "QQQ"], "x": 1}'::jsonb) FROM uf_model;
-- float8[]: every non-NULL element is known
SELECT nb_coverage(m, '{NULL, 2}'::float8[]) AS one, nb_coverage(m, '{NULL, NULL}'::float8[]) AS none
FROM uf_vec;
-- the rows whose coverage is 0 are those the warning counts
SELECT count(*) FILTER (WHERE nb_coverage(m, tokens) = 0) AS coverage_0, count(*) AS scored,
       count(nb_predict(m, tokens)) AS predicted
FROM uf_model, uf_docs;
-- and a table's coverage finds the mismatch: the share of tokens known
SELECT round(avg(nb_coverage(m, tokens))::numeric, 4) AS mean_coverage FROM uf_model, uf_docs;
-- errors as scoring gives them: a value of the wrong type, a float8[] of
-- the wrong length, text[] for a model without text features
SELECT nb_coverage(m, '{"temp": "hot"}'::jsonb) FROM uf_weather;
SELECT nb_coverage(m, '{1, 2, 3}'::float8[]) FROM uf_vec;
SELECT nb_coverage(m, ARRAY['a']) FROM uf_weather;
-- counts whose sum passes float8's range (22003), not NaN
SELECT nb_coverage(m, '{"subject": {"fun": 1e308, "zzz": 1e308}}'::jsonb) FROM uf_weather;

--
-- Loaded in the middle of a statement: nbc's hooks missed its start, so
-- what it counts is reported when its transaction commits (right after it
-- outside a transaction block)
--
\c
DO $$
DECLARE
    model nb_model := (SELECT m FROM uf_model);
    label text;
BEGIN
    FOR i IN 1 .. 3 LOOP
        label := nb_predict(model, ARRAY['Q' || i]);
    END LOOP;
END $$;
SELECT nb_predict(m, ARRAY['ZZZ']) FROM uf_model;
\c
BEGIN;
DO $$
DECLARE
    model nb_model := (SELECT m FROM uf_model);
    label text;
BEGIN
    label := nb_predict(model, ARRAY['Q']);
END $$;
SELECT nb_predict(m, ARRAY['money']) FROM uf_model;
COMMIT;
