-- nbc demo: a spam filter trained, evaluated, inspected and tuned in SQL.
--
-- Needs the extension and the SpamAssassin corpus in table
-- spamassassin(folder, msg_id, label 'ham'|'spam', body, split 'train'|'test');
-- test/demo.sh sets both up in a throwaway cluster and runs this file with
--   psql -X -v ON_ERROR_STOP=1 -P pager=off --echo-queries -f test/demo.sql

\echo
\echo '=============================================================='
\echo ' 1. The data: SpamAssassin public corpus, 75/25 train/test split'
\echo '=============================================================='
SELECT split, label, count(*) AS messages
FROM spamassassin GROUP BY split, label ORDER BY split, label;

\echo
\echo '=============================================================='
\echo ' 2. Features made in SQL: a bag of tokens (text[]) or a tsvector'
\echo '=============================================================='
\echo 'A text[] is a bag: a repeated token counts each time.'
\echo 'A tsvector counts a lexeme once per position (stemmed, stop words removed).'
SELECT ARRAY(SELECT m[1] FROM regexp_matches(lower('Win money now! Money back, guaranteed.'),
                                             '[a-z][a-z0-9''$-]{1,30}', 'g') AS m) AS tokens,
       to_tsvector('english', 'Win money now! Money back, guaranteed.') AS lexemes;

-- to_tsvector notes every over-long word (base64 attachments); hide the notices
SET client_min_messages = warning;
\timing on
CREATE TABLE emails AS
SELECT folder, msg_id, label, split,
       substring(body FROM '(?n)^Subject:[ \t]*(.*)$') AS subject,
       ARRAY(SELECT m[1] FROM regexp_matches(lower(body), '[a-z][a-z0-9''$-]{1,30}', 'g') AS m) AS tokens,
       to_tsvector('english', body) AS lexemes
FROM spamassassin;
\timing off
RESET client_min_messages;

SELECT label, cardinality(tokens) AS n_tokens, tokens[1:8] AS first_tokens
FROM emails WHERE split = 'test' ORDER BY folder, msg_id LIMIT 3;

\echo
\echo '=============================================================='
\echo ' 3. Training: one aggregate over the training rows'
\echo '=============================================================='
\timing on
CREATE TABLE spam_model AS
SELECT nb_train(label, tokens) AS model FROM emails WHERE split = 'train';

CREATE TABLE spam_model_tsv AS
SELECT nb_train(label, lexemes) AS model FROM emails WHERE split = 'train';
\timing off

\echo
\echo '--- nb_info: the size of the model'
SELECT jsonb_pretty(nb_info(model)) AS info FROM spam_model;

\echo
\echo '--- nb_classes: documents and prior of each class'
SELECT c.* FROM spam_model, nb_classes(model) AS c;

\echo
\echo '=============================================================='
\echo ' 4. Accuracy on the held-out test split, per event model'
\echo '    (the event model is chosen at prediction time: no retraining)'
\echo '=============================================================='
CREATE TABLE predictions AS
SELECT e.folder, e.msg_id, e.label, o.kind,
       nb_predict(m.model, e.tokens, o.options) AS predicted
FROM spam_model AS m
CROSS JOIN emails AS e
CROSS JOIN (VALUES ('multinomial', '{"kind": "multinomial"}'::jsonb),
                   ('bernoulli',   '{"kind": "bernoulli"}'),
                   ('complement',  '{"kind": "complement"}')) AS o(kind, options)
WHERE e.split = 'test';

SELECT kind AS event_model,
       count(*) FILTER (WHERE predicted = label) AS correct,
       count(*) AS messages,
       round(avg((predicted = label)::int), 4) AS accuracy
FROM predictions
GROUP BY kind
ORDER BY kind;

\echo
\echo '--- the same with tsvector features (multinomial, defaults)'
SELECT round(avg((nb_predict(m.model, e.lexemes) = e.label)::int), 4) AS accuracy
FROM spam_model_tsv AS m, emails AS e
WHERE e.split = 'test';

\echo
\echo '=============================================================='
\echo ' 5. Confusion table (multinomial, defaults)'
\echo '=============================================================='
SELECT label AS actual,
       count(*) FILTER (WHERE predicted = 'ham')  AS predicted_ham,
       count(*) FILTER (WHERE predicted = 'spam') AS predicted_spam
FROM predictions
WHERE kind = 'multinomial'
GROUP BY label
ORDER BY label;

\echo
\echo '=============================================================='
\echo ' 6. A few test messages with their spam probability'
\echo '=============================================================='
SELECT e.label AS actual,
       nb_predict(m.model, e.tokens) AS predicted,
       (nb_predict_proba(m.model, e.tokens) ->> 'spam')::float8 AS p_spam,
       left(e.subject, 50) AS subject
FROM spam_model AS m,
     ((SELECT * FROM emails WHERE split = 'test' AND label = 'ham'  ORDER BY folder, msg_id LIMIT 4)
      UNION ALL
      (SELECT * FROM emails WHERE split = 'test' AND label = 'spam' ORDER BY folder, msg_id LIMIT 4)) AS e
ORDER BY e.label, e.folder, e.msg_id;

\echo
\echo '--- nb_predict_proba and nb_predict_log_proba return every class'
SELECT nb_predict_proba(m.model, ARRAY['free', 'money', 'click', 'here']) AS proba,
       nb_predict_log_proba(m.model, ARRAY['free', 'money', 'click', 'here']) AS log_proba
FROM spam_model AS m;

\echo
\echo '=============================================================='
\echo ' 7. The 15 most informative tokens (mutual information, nats)'
\echo '=============================================================='
SELECT feature, round(mutual_info::numeric, 5) AS mutual_info
FROM nb_mutual_info((SELECT model FROM spam_model))
LIMIT 15;

\echo
\echo '=============================================================='
\echo ' 8. Models merge: one model per folder, merged, equals the whole'
\echo '=============================================================='
SELECT nb_merge(folder_model)::jsonb = (SELECT model::jsonb FROM spam_model) AS merged_equals_whole
FROM (SELECT nb_train(label, tokens) AS folder_model
      FROM emails WHERE split = 'train' GROUP BY folder) AS per_folder;

\echo
\echo '=============================================================='
\echo ' 9. Tuning: 5-fold cross-validation on the training split'
\echo '    chooses the event model and alpha (one training pass;'
\echo '    each fold''s model is the whole minus the fold, nb_subtract)'
\echo '=============================================================='
CREATE VIEW training_emails AS SELECT label, tokens FROM emails WHERE split = 'train';
\timing on
CREATE TABLE tuning AS
SELECT * FROM nb_cross_validate('training_emails', 'label', 'tokens',
                                grid => '{"kind": ["multinomial", "bernoulli", "complement"],
                                          "alpha": [0.01, 0.1, 0.5, 1]}');
\timing off
SELECT options, round(accuracy::numeric, 4) AS accuracy, round(accuracy_std::numeric, 4) AS std,
       round(macro_f1::numeric, 4) AS macro_f1, round(log_loss::numeric, 4) AS log_loss
FROM tuning;

\echo
\echo '--- the chosen options on the held-out test split: metrics and confusion matrix'
SELECT options AS chosen FROM tuning LIMIT 1 \gset
\echo chosen: :chosen
CREATE TABLE test_metrics AS
SELECT nb_metrics(e.label, nb_predict_proba(m.model, e.tokens, :'chosen')) AS m
FROM spam_model AS m, emails AS e
WHERE e.split = 'test';
SELECT round((m ->> 'accuracy')::numeric, 4) AS accuracy,
       round((m -> 'macro' ->> 'f1')::numeric, 4) AS macro_f1,
       round((m ->> 'log_loss')::numeric, 4) AS log_loss
FROM test_metrics;
SELECT r.class AS actual, r.predicted, r.count AS messages
FROM test_metrics, nb_metrics_rows(m) AS r
WHERE r.kind = 'confusion'
ORDER BY r.class, r.predicted;

\echo
\echo '=============================================================='
\echo '10. Straight from the text column: the model keeps its tokenizer'
\echo '    (scikit-learn''s CountVectorizer, here with word pairs and'
\echo '    English stop words), so scoring text can only tokenize the'
\echo '    way training did; the tuned options go into the model too'
\echo '=============================================================='
\timing on
CREATE TABLE text_model AS
SELECT nb_with_options(nb_train(label, body, '{"ngram_range": [1, 2], "stop_words": "english"}'), :'chosen') AS model
FROM spamassassin WHERE split = 'train';
\timing off
SELECT nb_info(model) -> 'tokenizer' AS tokenizer, nb_info(model) -> 'options' AS options,
       nb_info(model) ->> 'vocabulary' AS vocabulary
FROM text_model;
SELECT round((m ->> 'accuracy')::numeric, 4) AS accuracy, round((m -> 'macro' ->> 'f1')::numeric, 4) AS macro_f1
FROM (SELECT nb_metrics(s.label, nb_predict(t.model, s.body)) AS m
      FROM text_model AS t, spamassassin AS s WHERE s.split = 'test') AS r;
SELECT s.folder, s.msg_id, s.label AS actual, p.label AS predicted, round(p.probability::numeric, 4) AS probability
FROM (SELECT folder, msg_id, label, body FROM spamassassin WHERE split = 'test'
      ORDER BY md5(folder || msg_id) LIMIT 5) AS s,
     text_model, nb_predict_top(model, s.body) AS p
ORDER BY s.folder, s.msg_id;
