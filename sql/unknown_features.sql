--
-- unknown_features: the share of a statement's feature occurrences that
-- the model knows (nbc.unknown_features, nbc.unknown_features_threshold),
-- and nb_coverage.  Each statement is judged once, when it ends: below the
-- threshold (default 75%), one warning says the share; a statement of
-- fewer than 30 feature occurrences is not judged.
--
-- The model of setup's four documents: its vocabulary is win, money, now,
-- cheap, offer (spam) and meeting, tomorrow, agenda, lunch, money (ham).
CREATE TABLE uf_model AS SELECT nb_train(label, tokens) AS m FROM docs;
SHOW nbc.unknown_features;
SHOW nbc.unknown_features_threshold;

-- 100 documents of 5 tokens, 4 of them known (80%), and the same in upper
-- case (another tokenizer: none known)
CREATE TABLE uf_docs AS
SELECT i AS id, ARRAY['money', 'meeting', 'cheap', 'lunch', 'w' || i] AS tokens,
       ARRAY['MONEY', 'MEETING', 'CHEAP', 'LUNCH', 'W' || i] AS upper_tokens
FROM generate_series(1, 100) AS i;
ANALYZE uf_model, uf_docs;
-- as trained: 400 of 500 known, above 75%: quiet
SELECT nb_predict(m, tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
-- pruned to its 4 most informative tokens (tomorrow, agenda, cheap, lunch:
-- nb_mutual_info's first rows), the model knows 2 of each row's 5 (40%):
-- the query is right and warns, and the hint says pruning can be why
WITH p AS MATERIALIZED (SELECT nb_prune(m, '{"top_k": 4}') AS m FROM uf_model)
SELECT count(nb_predict(p.m, tokens)) FROM p, uf_docs;
-- another tokenizer: one warning for the whole query, 0 of 500; the rows
-- get the prior (ham sorts first)
SELECT nb_predict(m, upper_tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
-- half and half: 200 of 500 known (40%)
SELECT count(nb_predict(m, CASE WHEN id % 2 = 0 THEN tokens ELSE upper_tokens END)) FROM uf_model, uf_docs;
-- the threshold is a setting: at 90%, the correct query's 80% warns; at 0,
-- nothing does
SET nbc.unknown_features_threshold = 0.9;
SELECT count(nb_predict(m, tokens)) FROM uf_model, uf_docs;
SET nbc.unknown_features_threshold = 0;
SELECT count(nb_predict(m, upper_tokens)) FROM uf_model, uf_docs;
RESET nbc.unknown_features_threshold;
SET nbc.unknown_features_threshold = 1.5;
-- a short statement is not judged: 2 unknown occurrences say nothing of
-- the features made (a tweet that is only "@handle"); 30 do
SELECT nb_predict(m, ARRAY['ZZZ', 'QQQ']) FROM uf_model;
SELECT count(nb_predict(m, upper_tokens)) FROM uf_model, uf_docs WHERE id <= 5;
SELECT count(nb_predict(m, upper_tokens)) FROM uf_model, uf_docs WHERE id <= 6;
-- NULL features are not scored and rows without features add nothing:
-- 1 row of 30 unknown occurrences, the others none
SELECT count(nb_predict(m, t)) FROM uf_model,
    (VALUES (NULL::text[]), ('{}'), (array_fill('ZZZ'::text, ARRAY[30]))) v(t);

-- every scoring function counts its rows
SELECT count(nb_predict_proba(m, upper_tokens)) FROM uf_model, uf_docs;
SELECT count(nb_predict_log_proba(m, upper_tokens, '{"kind": "bernoulli"}')) FROM uf_model, uf_docs;
SELECT count(nb_probability(m, upper_tokens, 'spam')) FROM uf_model, uf_docs;
SELECT count(*) FROM uf_model, uf_docs, nb_predict_top(m, upper_tokens, 1);
-- nb_explain: the prior is all there is to explain (30 unknown tokens)
SELECT count(*) FROM nb_explain((SELECT m FROM uf_model), array_fill('ZZZ'::text, ARRAY[30]));
-- nb_grid_metrics looks each row up once, whatever the number of option sets
SELECT array_length(nb_grid_metrics(m, upper_tokens, 'spam', ARRAY['{}'::jsonb, '{"alpha": 0.5}', '{"kind": "bernoulli"}']), 1)
FROM uf_model, uf_docs;
-- two functions scoring the same row with the same model count it once:
-- 500 occurrences in 100 rows, one warning
SELECT count(nb_predict(m, upper_tokens)), count(nb_predict_proba(m, upper_tokens) ->> 'ham')
FROM uf_model, uf_docs;
-- different features are different rows: 400 of 1,000 in 200 rows
SELECT count(nb_predict(m, upper_tokens)), count(nb_predict(m, tokens)) FROM uf_model, uf_docs;

-- a model that tokenizes text, given tokens made otherwise: the hint
-- names its tokenizer.  Trained on text, "meetings running offers lunches
-- agenda" is five tokens; stemmed by the english configuration only
-- "agenda" stays as it was: 10 of 50 known.  The same text, or tokens of
-- the simple configuration (the same words), is quiet.
CREATE TABLE uf_text AS
SELECT nb_train(label, body) AS m
FROM (VALUES ('ham', 'meetings running offers lunches agenda'), ('spam', 'cheap money offers now')) t(label, body);
SELECT count(nb_predict(m, to_tsvector('english', 'meetings running offers lunches agenda')))
FROM uf_text, generate_series(1, 10);
SELECT count(nb_predict(m, 'meetings running offers lunches agenda')) FROM uf_text, generate_series(1, 10);
SELECT count(nb_predict(m, tsvector_to_array(to_tsvector('simple', 'meetings running offers lunches agenda'))))
FROM uf_text, generate_series(1, 10);

-- jsonb: a key the model does not have, a categorical value it never saw,
-- a bag's unseen tokens are unknown; a known Gaussian or boolean key is a
-- known feature whatever its value
CREATE TABLE uf_weather AS
SELECT nb_train(label, jsonb_build_object('outlook', outlook, 'temp', temp, 'windy', windy,
                                          'subject', to_jsonb(subject))) AS m
FROM (VALUES ('play', 'sunny', 24, false, ARRAY['fun']), ('play', 'overcast', 21, true, ARRAY['fun', 'park']),
             ('stay', 'rainy', 15, true, ARRAY['wet']), ('stay', 'sunny', 31, true, ARRAY['hot'])) t(label, outlook, temp, windy, subject);
-- 10 of each row below: known 1 + 0 + 1 + 1 + 1 + 2 + 2 = 8 of 2 + 2 + 2
-- + 1 + 1 + 3 + 2 = 13 per round, 61.5%
SELECT count(nb_predict(m, f)) FROM uf_weather, generate_series(1, 10), (VALUES
    ('{"outlook": "foggy", "windy": true}'::jsonb),        -- unknown value, known boolean
    ('{"Outlook": "sunny", "Temp": 20}'),                   -- unknown keys
    ('{"subject": ["FUN"], "temp": 1000}'),                 -- unknown token, known Gaussian
    ('{"windy": false}'),                                   -- known
    ('{"outlook": "sunny"}'),                               -- known
    ('{"outlook": "sunny", "subject": ["zzz"], "windy": true}'),  -- unknown token
    ('{"subject": {"park": 2}}')) v(f);                     -- known: a token counted twice
-- a misspelled key: "Temp" for "temp" in every row, where the model's
-- "temp" is missing, is named, in a statement of any size (the share
-- alone, 2 of 3 here, would not say which key)
SELECT nb_predict(m, '{"outlook": "sunny", "Temp": 20, "windy": true}'::jsonb) FROM uf_weather;
SELECT count(nb_predict(m, jsonb_build_object('outlook', 'sunny', 'Windy', i % 2 = 0, 'temp', i)))
FROM uf_weather, generate_series(1, 3) i;
-- quiet: rows missing a key (a missing value) with no unknown key; an
-- unknown key that looks like none of the model's ("id"); a misspelling
-- in some rows only
SELECT count(nb_predict(m, f)) FROM uf_weather, (VALUES
    ('{"outlook": "sunny", "temp": 20}'::jsonb), ('{"outlook": "rainy", "windy": false}')) v(f);
SELECT count(nb_predict(m, '{"id": 7, "outlook": "sunny", "temp": 20}'::jsonb)) FROM uf_weather;
SELECT count(nb_predict(m, f)) FROM uf_weather, (VALUES
    ('{"outlook": "sunny", "Temp": 20}'::jsonb), ('{"outlook": "rainy", "temp": 20}')) v(f);
-- a key that every training row had, missing from every one of ten rows
-- or more (no unknown key: f - 'temp'), is named though the rows' share is
-- 100%; quiet for nine rows, or when some rows have it
SELECT count(nb_predict(m, jsonb_build_object('outlook', 'sunny', 'windy', i % 2 = 0, 'subject', '["fun"]'::jsonb)))
FROM uf_weather, generate_series(1, 10) i;
SELECT count(nb_predict(m, jsonb_build_object('outlook', 'sunny', 'windy', i % 2 = 0, 'subject', '["fun"]'::jsonb)))
FROM uf_weather, generate_series(1, 9) i;
SELECT count(nb_predict(m, jsonb_build_object('outlook', 'sunny', 'windy', true) || CASE WHEN i = 1 THEN '{"temp": 20}' ELSE '{}' END::jsonb))
FROM uf_weather, generate_series(1, 10) i;
-- float8[]: every non-NULL element is known
CREATE TABLE uf_vec AS SELECT nb_train(label, v) AS m
FROM (VALUES ('a', '{1, 2}'::float8[]), ('b', '{3, 5}')) t(label, v);
SELECT count(nb_predict(m, '{NULL, 2}'::float8[])) FROM uf_vec, generate_series(1, 40);

-- error: a row whose own share is below the threshold is refused (22023)
-- where it is scored; rows above it, and rows without features, pass
SET nbc.unknown_features = error;
SELECT count(nb_predict(m, tokens)) FROM uf_model, uf_docs;
SELECT nb_predict(m, '{}'::text[]) FROM uf_model;
SELECT nb_predict(m, upper_tokens) FROM uf_model, uf_docs ORDER BY id;
SELECT nb_predict(m, ARRAY['money', 'ZZZ']) FROM uf_model;
SELECT * FROM nb_explain((SELECT m FROM uf_model), ARRAY['ZZZ']);
SELECT nb_grid_metrics(m, upper_tokens, 'spam', ARRAY['{}'::jsonb]) FROM uf_model, uf_docs;
SELECT nb_predict(m, ARRAY['meetings', 'running']) FROM uf_text;
SELECT nb_predict(m, to_tsvector('english', 'meetings running offers lunches agenda')) FROM uf_text;
\set VERBOSITY sqlstate
SELECT nb_predict(m, '{"outlook": "foggy"}'::jsonb) FROM uf_weather;
\set VERBOSITY default
-- ignore: scored as they are, nothing said
SET nbc.unknown_features = ignore;
SELECT nb_predict(m, upper_tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
SELECT nb_predict(m, '{"outlook": "sunny", "Temp": 20, "windy": true}'::jsonb) FROM uf_weather;
RESET nbc.unknown_features;
-- the setting has three values
SET nbc.unknown_features = notice;

--
-- Once per statement, whoever scores: functions, SPI, PL/pgSQL
--
-- a PL/pgSQL function scoring in simple expressions, called per row: one
-- warning for the calling query, 100 rows
CREATE FUNCTION uf_label(model nb_model, tokens text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    label text;
BEGIN
    label := nb_predict(model, tokens);
    RETURN label;
END $$;
SELECT uf_label(m, upper_tokens) AS label, count(*) FROM uf_model, uf_docs GROUP BY 1 ORDER BY 1;
-- a function running a query (SPI) per call: one warning, 10 rows
CREATE FUNCTION uf_spi(i int) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN (SELECT nb_predict(m, d.upper_tokens) FROM uf_model, uf_docs d WHERE d.id = i);
END $$;
SELECT count(uf_spi(i)) FROM generate_series(1, 10) AS i;
-- a DO block's loop: one warning when it ends
DO $$
DECLARE
    model nb_model := (SELECT m FROM uf_model);
BEGIN
    FOR i IN 1 .. 10 LOOP
        PERFORM nb_predict(model, ARRAY['Q' || i, 'R', 'S']);
    END LOOP;
END $$;
-- a FOR loop over a query runs that query in a portal of its own: the
-- rows it scores are reported when the loop ends (10 rows, 50
-- occurrences), those of the loop's body with the block (10 rows, 30)
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT nb_predict(m, upper_tokens) AS label FROM uf_model, uf_docs WHERE id <= 10 LOOP
        PERFORM nb_predict(m, ARRAY['Q', 'R', 'S']) FROM uf_model;
    END LOOP;
    RAISE NOTICE 'loop over';
END $$;
-- a procedure that commits inside: one warning when the CALL ends, 20 rows
CREATE PROCEDURE uf_commits() LANGUAGE plpgsql AS $$
DECLARE
    model nb_model;
    label text;
BEGIN
    FOR i IN 1 .. 20 LOOP
        SELECT m INTO model FROM uf_model;
        label := nb_predict(model, ARRAY['Q' || i, 'R']);
        COMMIT;
    END LOOP;
    RAISE NOTICE 'procedure over';
END $$;
CALL uf_commits();
-- CREATE TABLE AS runs its query inside the utility statement: one warning
CREATE TEMP TABLE uf_labels AS SELECT id, nb_predict(m, upper_tokens) AS label FROM uf_model, uf_docs;
-- a function with SET nbc.unknown_features = ignore leaves its rows out of
-- its caller's count: 500 occurrences of the 100 rows scored outside it
CREATE FUNCTION uf_quiet(model nb_model, tokens text[]) RETURNS text LANGUAGE sql
SET nbc.unknown_features = ignore AS 'SELECT nb_predict(model, tokens)';
SELECT count(nb_predict(m, upper_tokens)), count(uf_quiet(m, tokens)) FROM uf_model, uf_docs;
-- an error caught inside a function: the statement goes on; the rows
-- refused are not counted (their error said it), those scored outside
-- are: 10 rows, 50 occurrences
CREATE FUNCTION uf_try(model nb_model, tokens text[]) RETURNS text LANGUAGE plpgsql
SET nbc.unknown_features = error AS $$
BEGIN
    RETURN nb_predict(model, tokens);
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN 'refused';
END $$;
SELECT count(nb_predict(m, upper_tokens)) AS scored, count(*) FILTER (WHERE uf_try(m, upper_tokens) = 'refused') AS refused
FROM uf_model, uf_docs WHERE id <= 10;
RESET nbc.unknown_features;

-- nb_cross_validate scores each row once, in its fold, in SPI queries: one
-- warning when the call ends.  Rows 7 to 10 have 5 tokens of their own,
-- which no out-of-fold model knows: 12 of 32 known.
CREATE TABLE uf_cv AS
SELECT i AS id, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS label,
       CASE WHEN i <= 6 THEN ARRAY['t' || (i % 2), 'shared']
            ELSE ARRAY(SELECT 'own' || i || '_' || k FROM generate_series(1, 5) k) END AS tokens
FROM generate_series(1, 10) AS i;
SELECT options FROM nb_cross_validate('uf_cv', 'label', 'tokens', grid => '{"alpha": 1}', fold_column => 'id');

-- a statement that fails reports nothing: its error is what is said
SELECT nb_predict(m, upper_tokens), 1 / (id - 50) FROM uf_model, uf_docs ORDER BY id;
-- the same in a transaction block, after ROLLBACK TO SAVEPOINT
BEGIN;
SAVEPOINT s;
SELECT nb_predict(m, upper_tokens), 1 / (id - 50) FROM uf_model, uf_docs ORDER BY id;
ROLLBACK TO SAVEPOINT s;
SELECT count(nb_predict(m, tokens)) FROM uf_model, uf_docs;
-- each statement of a block reports when it ends, not at COMMIT
SELECT count(nb_predict(m, upper_tokens)) FROM uf_model, uf_docs;
COMMIT;
-- a cursor's rows are reported once, when it is closed (two FETCHes of 10
-- rows: 20 rows scored), or at the end of its transaction if it is not
-- (7 rows).  No ORDER BY: a sort would score every row at the first FETCH.
BEGIN;
DECLARE uf_cursor CURSOR FOR SELECT d.id, nb_predict(s.m, d.upper_tokens) FROM uf_docs d, uf_model s;
FETCH 10 FROM uf_cursor;
FETCH 10 FROM uf_cursor;
CLOSE uf_cursor;
DECLARE uf_cursor CURSOR FOR SELECT d.id, nb_predict(s.m, d.upper_tokens) FROM uf_docs d, uf_model s;
FETCH 7 FROM uf_cursor;
COMMIT;
-- a cursor of a transaction that aborts reports nothing
BEGIN;
DECLARE uf_cursor CURSOR FOR SELECT d.id, nb_predict(s.m, d.upper_tokens) FROM uf_docs d, uf_model s;
FETCH 7 FROM uf_cursor;
ROLLBACK;

-- a parallel plan: a worker judges the rows it scored and reports them,
-- and the leader relays its warning (with CONTEXT "parallel worker",
-- which psql shows for errors only).  Here the whole plan runs in one
-- worker (the leader instead if none can start): one warning of 100 rows.
-- With several processes scoring, each judges and reports its own rows.
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS parallel;
EXPLAIN (COSTS OFF) SELECT count(nb_predict(s.m, d.upper_tokens)) FROM uf_docs d, uf_model s;
SELECT count(nb_predict(s.m, d.upper_tokens)) FROM uf_docs d, uf_model s;
-- an error in a worker is the query's error
SET nbc.unknown_features = error;
\set VERBOSITY terse
SELECT count(nb_predict(s.m, d.upper_tokens)) FROM uf_docs d, uf_model s;
\set VERBOSITY default
RESET nbc.unknown_features;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS parallel;

-- nb_coverage counts nothing: it looks rows up, it does not score them
SELECT count(*) FILTER (WHERE nb_coverage(m, upper_tokens) = 0) AS unknown_rows FROM uf_model, uf_docs;

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
-- and a table's coverage finds the mismatch: the share of tokens known
SELECT round(avg(nb_coverage(m, CASE WHEN id % 2 = 0 THEN tokens ELSE upper_tokens END))::numeric, 4) AS mean_coverage
FROM uf_model, uf_docs;
-- errors as scoring gives them: a value of the wrong type, a float8[] of
-- the wrong length, text[] for a model without text features
SELECT nb_coverage(m, '{"temp": "hot"}'::jsonb) FROM uf_weather;
SELECT nb_coverage(m, '{1, 2, 3}'::float8[]) FROM uf_vec;
SELECT nb_coverage(m, ARRAY['a']) FROM uf_weather;
-- counts whose sum passes float8's range (22003), not NaN
SELECT nb_coverage(m, '{"subject": {"fun": 1e308, "zzz": 1e308}}'::jsonb) FROM uf_weather;


--
-- Loaded in the middle of a statement (a DO block's first call): nothing
-- depends on when nbc was loaded, the block reports when it ends
--
\c
DO $$
DECLARE
    model nb_model := (SELECT m FROM uf_model);
    label text;
BEGIN
    FOR i IN 1 .. 10 LOOP
        label := nb_predict(model, ARRAY['Q' || i, 'R', 'S']);
    END LOOP;
END $$;
