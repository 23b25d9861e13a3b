--
-- prune: nb_prune(model, options) is the model trained on the same rows
-- without the tokens and features the options leave out.  Every check
-- compares with the model trained from rows filtered here in SQL, which is
-- the definition; the tokens each option keeps are worked out by hand from
-- the counts in the comments.
--
-- Rows (tokens: documents with the token per class, ham / spam):
--   agenda 1/0  cheap 0/1  lunch 1/0  meeting 1/0  money 1/2  now 0/1
--   offer 0/1  tomorrow 2/0  win 0/1
CREATE TABLE pr_docs (id int, label text, tokens text[]);
INSERT INTO pr_docs VALUES
  (1, 'spam', '{cheap,money,now,money}'),
  (2, 'spam', '{win,money,offer}'),
  (3, 'ham', '{meeting,tomorrow,agenda}'),
  (4, 'ham', '{lunch,tomorrow,money}');
CREATE TABLE pr_model AS SELECT nb_train(label, tokens) AS m FROM pr_docs;
-- the model trained on the rows with only the tokens of keep
CREATE FUNCTION pr_retrained(keep text[]) RETURNS nb_model LANGUAGE sql AS $$
  SELECT nb_train(label, ARRAY(SELECT t FROM unnest(tokens) t WHERE t = ANY (keep))) FROM pr_docs $$;
-- every count of a model but its document lengths: a pruned model that lost
-- some of a bag's tokens cannot know how long the documents then were, so it
-- keeps no lengths (and says so in its format version), where retraining
-- counts them
CREATE FUNCTION pr_counts(m nb_model) RETURNS text LANGUAGE sql AS $$
  SELECT regexp_replace(m::jsonb::text, '"lengths": \{[^{}]*\}, |"format_version": [0-9]+', '', 'g') $$;
-- the tokens of a model, in byte order
CREATE FUNCTION pr_tokens(m nb_model) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(t, ' ' ORDER BY t COLLATE "C") FROM jsonb_object_keys(m::jsonb -> 'tokens') t $$;

-- min_documents 2: money (3 documents) and tomorrow (2)
SELECT pr_tokens(nb_prune(m, '{"min_documents": 2}')) AS kept,
       pr_counts(nb_prune(m, '{"min_documents": 2}')) = pr_counts(pr_retrained('{money,tomorrow}')) AS same
FROM pr_model;
-- max_document_fraction 0.5 of 4 documents: all but money (in 3)
SELECT pr_tokens(nb_prune(m, '{"max_document_fraction": 0.5}')) AS kept,
       pr_counts(nb_prune(m, '{"max_document_fraction": 0.5}'))
         = pr_counts(pr_retrained('{agenda,cheap,lunch,meeting,now,offer,tomorrow,win}')) AS same
FROM pr_model;
-- top_k 3: tomorrow (log 2), then agenda and cheap, the first of the tie in byte order
SELECT pr_tokens(nb_prune(m, '{"top_k": 3}')) AS kept,
       pr_counts(nb_prune(m, '{"top_k": 3}')) = pr_counts(pr_retrained('{tomorrow,agenda,cheap}')) AS same
FROM pr_model;
-- combined: the document filters first, then the first k of what is left
-- (money, in 3 of 4 documents, fails max_document_fraction 0.6; the first two
-- of the rest are tomorrow and agenda; with min_documents 2 only money and
-- tomorrow are left)
SELECT pr_tokens(nb_prune(m, '{"top_k": 2, "min_documents": 1, "max_document_fraction": 0.6}')) AS kept
FROM pr_model;
SELECT pr_tokens(nb_prune(m, '{"top_k": 2, "min_documents": 2}')) AS kept FROM pr_model;
-- keeping everything, or nothing
SELECT nb_prune(m, '{}') = m AS no_options, nb_prune(m, '{"top_k": 100}') = m AS all_kept,
       pr_counts(nb_prune(m, '{"top_k": 0}')) = pr_counts(pr_retrained('{}')) AS none_kept
FROM pr_model;
-- a model that lost some of a bag's tokens has no document lengths: kind dcm
-- needs them; a prune that drops no token keeps them
SELECT nb_info(nb_prune(m, '{"top_k": 3}')) ->> 'format_version' AS pruned_version,
       nb_info(nb_prune(m, '{"top_k": 100}')) ->> 'format_version' AS unpruned_version
FROM pr_model;
\set VERBOSITY sqlstate
SELECT nb_predict(nb_prune(m, '{"top_k": 3}'), '{money}'::text[], '{"kind": "dcm"}') FROM pr_model;
\set VERBOSITY default
-- rows stay: document counts and priors are those of the unpruned model
SELECT c.* FROM pr_model, nb_classes(nb_prune(m, '{"top_k": 1}')) c;
-- class totals over the kept vocabulary: the probabilities of the retrained model
SELECT k.kind, nb_predict_proba(nb_prune(m, '{"top_k": 4}'), '{money,tomorrow,win}'::text[], k.o)
         = nb_predict_proba(pr_retrained('{tomorrow,agenda,cheap,lunch}'), '{money,tomorrow,win}'::text[], k.o) AS same
FROM pr_model, (VALUES ('multinomial', '{}'::jsonb), ('bernoulli', '{"kind": "bernoulli"}'),
                       ('complement', '{"kind": "complement"}')) k(kind, o);
-- an ordinary model: smaller, round-trips, inspects
SELECT (nb_info(nb_prune(m, '{"top_k": 3}')) ->> 'bytes')::int < (nb_info(m) ->> 'bytes')::int AS smaller,
       nb_prune(m, '{"top_k": 3}')::text::nb_model = nb_prune(m, '{"top_k": 3}') AS text_round_trip,
       nb_info(nb_prune(m, '{"top_k": 3}')) - 'bytes' AS info
FROM pr_model;
-- merging with the unpruned model cannot bring back what was pruned: it is
-- the union of the pruned rows and the full rows, not the full model twice
SELECT nb_merge(nb_prune(m, '{"top_k": 3}'), m) = nb_merge(m, m) AS restored,
       pr_counts(nb_merge(nb_prune(m, '{"top_k": 3}'), m))
         = pr_counts(nb_merge(pr_retrained('{tomorrow,agenda,cheap}'), m)) AS union_of_rows
FROM pr_model;

-- jsonb features: a categorical, boolean or Gaussian feature is one row of
-- nb_mutual_info and goes whole; a bag stays (rows that had it keep it)
CREATE TABLE pr_mixed (id int, label text, f jsonb);
INSERT INTO pr_mixed VALUES
  (1, 'yes', '{"outlook": "sunny", "temp": 20, "windy": false, "words": ["calm", "warm"]}'),
  (2, 'yes', '{"outlook": "overcast", "temp": 22, "windy": true, "words": ["warm"]}'),
  (3, 'yes', '{"outlook": "rainy", "temp": 18, "windy": false}'),
  (4, 'no', '{"outlook": "sunny", "temp": 30, "windy": true, "words": ["hot"]}'),
  (5, 'no', '{"outlook": "sunny", "temp": 28, "words": ["hot", "calm"]}'),
  (6, 'no', '{"outlook": "rainy"}');
CREATE TABLE pr_mixed_model AS SELECT nb_train(label, f) AS m FROM pr_mixed;
-- (rows with words: yes 2, no 2; hot only in no, warm only in yes: log 2;
-- calm in one of each: 0; temp as in the mixed test)
SELECT feature, round(mutual_info::numeric, 6) AS mutual_info
FROM pr_mixed_model, nb_mutual_info(m);
-- top_k 3 keeps temp, words:hot and words:warm: outlook, windy and words:calm go
SELECT nb_info(nb_prune(m, '{"top_k": 3}')) -> 'features' AS features,
       pr_counts(nb_prune(m, '{"top_k": 3}'))
         = pr_counts((SELECT nb_train(label, f - 'outlook' - 'windy'
                    || CASE WHEN f ? 'words' THEN jsonb_build_object('words',
                         (SELECT coalesce(jsonb_agg(w), '[]') FROM jsonb_array_elements(f -> 'words') w
                          WHERE w <> '"calm"')) ELSE '{}' END)
            FROM pr_mixed)) AS same
FROM pr_mixed_model;
-- min_documents applies to bag tokens only (each word is in 2 documents)
SELECT n, nb_info(nb_prune(m, jsonb_build_object('min_documents', n))) -> 'features' AS features,
       (SELECT string_agg(w, ' ' ORDER BY w COLLATE "C")
        FROM jsonb_object_keys(nb_prune(m, jsonb_build_object('min_documents', n))::jsonb
                               -> 'features' -> 'words' -> 'tokens') w) AS words
FROM pr_mixed_model, (VALUES (2), (3)) v(n);
-- nothing kept: the bag stays, empty, with the rows that had it
SELECT pr_counts(nb_prune(m, '{"top_k": 0}'))
         = pr_counts((SELECT nb_train(label, CASE WHEN f ? 'words' THEN '{"words": []}'::jsonb ELSE '{}' END) FROM pr_mixed)) AS same
FROM pr_mixed_model;

-- float8[] positions stay, without statistics, as if every row had NULL
-- there: the model still takes the same float8[] rows
CREATE TABLE pr_flowers (label text, x float8[]);
INSERT INTO pr_flowers VALUES
  ('setosa', '{5.1, 3.5, 1.4}'), ('setosa', '{4.9, 3.0, 1.4}'), ('setosa', '{4.7, 3.2, 1.3}'),
  ('versicolor', '{7.0, 3.2, 4.7}'), ('versicolor', '{6.4, 3.2, 4.5}'), ('versicolor', '{6.9, 3.1, 4.9}');
SELECT feature FROM nb_mutual_info((SELECT nb_train(label, x) FROM pr_flowers));
SELECT nb_prune(m, '{"top_k": 1}') = (SELECT nb_train(label, ARRAY[NULL, NULL, x[3]]) FROM pr_flowers) AS same,
       nb_prune(m, '{"top_k": 1}')::jsonb -> 'features' -> '1' AS position_1,
       nb_predict(nb_prune(m, '{"top_k": 1}'), '{5.0, 3.4, 4.6}'::float8[]) AS predicted
FROM (SELECT nb_train(label, x) AS m FROM pr_flowers) s;

-- progress: at nbc.progress_interval 0 a NOTICE from each cancellation
-- point of the pruner's loops (the DETAIL, the elapsed time, left out); at
-- the default interval (5 s) a short call says nothing.  Tokens t0..t14999,
-- those below 5000 in two documents: min_documents 2 keeps those.
CREATE TABLE pr_big AS
SELECT nb_train(CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, ARRAY['t' || (i % 15000)]) AS m
FROM generate_series(0, 19999) AS i;
SET nbc.progress = on;
SET nbc.progress_interval = 0;
\set VERBOSITY terse
SELECT nb_info(nb_prune(m, '{"min_documents": 2}')) ->> 'vocabulary' AS vocabulary FROM pr_big;
\set VERBOSITY default
RESET nbc.progress_interval;
SELECT nb_info(nb_prune(m, '{"min_documents": 2}')) ->> 'vocabulary' AS vocabulary FROM pr_big;
RESET nbc.progress;
DROP TABLE pr_big;

-- errors
SELECT nb_prune(m, '[]') FROM pr_model;
SELECT nb_prune(m, '{"top": 1}') FROM pr_model;
SELECT nb_prune(m, '{"top_k": 1.5}') FROM pr_model;
SELECT nb_prune(m, '{"top_k": -1}') FROM pr_model;
SELECT nb_prune(m, '{"top_k": "3"}') FROM pr_model;
SELECT nb_prune(m, '{"top_k": 1e400}') FROM pr_model;
SELECT nb_prune(m, '{"min_documents": -1}') FROM pr_model;
SELECT nb_prune(m, '{"min_documents": null}') FROM pr_model;
SELECT nb_prune(m, '{"max_document_fraction": 1.5}') FROM pr_model;
SELECT nb_prune(m, '{"max_document_fraction": true}') FROM pr_model;
-- NULL gives NULL (STRICT)
SELECT nb_prune(NULL, '{"top_k": 1}') IS NULL AS null_model, nb_prune(m, NULL) IS NULL AS null_options
FROM pr_model;

DROP TABLE pr_docs, pr_model, pr_mixed, pr_mixed_model, pr_flowers;
DROP FUNCTION pr_retrained(text[]), pr_counts(nb_model), pr_tokens(nb_model);
