--
-- signals: the messages that point an analyst the right way (issue #42),
-- each beside a correct use that stays quiet, and results laid out to read
-- in psql.
--
CREATE TABLE signal_mail (label text, body text);
INSERT INTO signal_mail
SELECT CASE WHEN i % 2 = 0 THEN 'spam' ELSE 'ham' END,
       CASE WHEN i % 2 = 0 THEN 'buy cheap pills now' ELSE 'meeting at noon today' END
FROM generate_series(1, 20) AS i;
CREATE TABLE signal_model AS
SELECT nb_train(label, string_to_array(body, ' ')) AS model FROM signal_mail;

-- the class in the options' place: the hint names against
SELECT * FROM signal_model, nb_explain(model, ARRAY['buy', 'noon'], 'spam');
-- (the hint quotes the class as a literal)
SELECT * FROM signal_model, nb_explain(model, ARRAY['buy'], 'it''s spam');
-- options given as a JSON string literal, and the class given as against
SELECT e.part, e.feature, e.predicted, e.compared_to
FROM signal_model, nb_explain(model, ARRAY['buy', 'noon'], '{"alpha": 0.5}') AS e;
SELECT e.part, e.feature, e.predicted, e.compared_to
FROM signal_model, nb_explain(model, ARRAY['buy', 'noon'], against => 'spam') AS e;
-- the literal's options are the jsonb options: the same contributions
SELECT (SELECT array_agg(contribution ORDER BY part, feature)
        FROM signal_model, nb_explain(model, ARRAY['buy', 'noon'], '{"alpha": 0.5}'))
     = (SELECT array_agg(contribution ORDER BY part, feature)
        FROM signal_model, nb_explain(model, ARRAY['buy', 'noon'], '{"alpha": 0.5}'::jsonb)) AS same;

-- a weight in the tokenizer's place (scikit-learn's sample_weight habit)
SELECT nb_train(label, body, '2.0') FROM signal_mail;
-- the weight before the tokenizer
SELECT nb_classes(nb_train(label, body, 2.0, NULL)) FROM signal_mail;

-- complement has no probabilities: refused before the folds are trained
-- (50 folds of 20 rows would otherwise fail there, for too few rows)
SELECT * FROM nb_calibrate('signal_mail', 'label', 'body', 50, '{"kind": "complement"}');
SELECT calibrated_options IS NOT NULL AS fitted
FROM nb_calibrate('signal_mail', 'label', 'body', 2, '{"kind": "multinomial"}');

-- character n-grams: a token with a space at either end is shown quoted, so
-- that "os " and " os" read apart (and a lone space is seen)
CREATE TABLE signal_chars AS
SELECT nb_train(label, body, '{"analyzer": "char", "ngram_range": [1, 3]}') AS model
FROM (VALUES ('a', 'kos os'), ('b', 'os osk')) AS v (label, body);
SELECT e.feature, e.value FROM signal_chars, nb_explain(model, 'os os') AS e
WHERE e.part = 'token' ORDER BY e.feature COLLATE "C";
-- a token beginning with a double quote, and the empty token, are quoted
-- too (and escaped); others, with spaces inside only, are shown as they are
SELECT e.feature
FROM (SELECT nb_train(label, tokens) AS model
      FROM (VALUES ('a', ARRAY['"q', '', 'x y']), ('b', ARRAY['z'])) AS v (label, tokens)) AS m,
     nb_explain(m.model, ARRAY['"q', '', 'x y', 'z']) AS e
WHERE e.part = 'token' ORDER BY e.feature COLLATE "C";

-- nb_live_create says what it made: the live model's name and the documents
-- and classes it counted (here: the rows with a label, and their labels)
INSERT INTO signal_mail VALUES (NULL, 'no label');
SELECT * FROM nb_live_create('signal_live', 'signal_mail', 'label', 'body');
SELECT count(label) AS documents, count(DISTINCT label) AS classes FROM signal_mail;
SELECT nb_live_drop('signal_live');

-- progress: on by default, a NOTICE at most every nbc.progress_interval
-- seconds (5), the first only that long after the start, so that a short
-- call stays quiet; client_min_messages silences them.  (The suites run with
-- nbc.progress off at the database level, see setup: a slow machine must not
-- add a NOTICE.)
SELECT name, boot_val, unit FROM pg_settings WHERE name IN ('nbc.progress', 'nbc.progress_interval') ORDER BY name;
-- the interval takes PostgreSQL's time units, as statement_timeout does
SET nbc.progress_interval = '1.5min';
SHOW nbc.progress_interval;
SET nbc.progress_interval = '250ms';
SHOW nbc.progress_interval;
SET nbc.progress = on;
SELECT count(*) FROM nb_calibrate('signal_mail', 'label', 'body', 2);
-- interval 0: every step (the DETAIL, the elapsed time, left out)
\set VERBOSITY terse
SET nbc.progress_interval = 0;
SELECT count(*) FROM nb_calibrate('signal_mail', 'label', 'body', 2);
SET client_min_messages = warning;
SELECT count(*) FROM nb_calibrate('signal_mail', 'label', 'body', 2);
RESET client_min_messages;
\set VERBOSITY default
RESET nbc.progress_interval;
RESET nbc.progress;
