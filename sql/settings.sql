-- What a model keeps besides its counts (format version 4): the tokenizer
-- of its text and the prediction options nb_with_options stores.  Models of
-- unrelated rows, tokenizers or options are not merged or subtracted.
CREATE TABLE st_docs (id int, label text, body text);
INSERT INTO st_docs VALUES
    (1, 'spam', 'win money now money'), (2, 'spam', 'cheap money offer'),
    (3, 'ham', 'meeting tomorrow agenda'), (4, 'ham', 'lunch tomorrow money'),
    (5, 'spam', 'free offer now'), (6, 'ham', 'agenda for the meeting');
CREATE TABLE st_models AS
SELECT nb_train(label, body) AS text_model,
       nb_train(label, string_to_array(body, ' ')) AS array_model
FROM st_docs;

-- a model of text keeps its tokenizer and scores text with it: the same as
-- a model of the same tokens given as text[]
SELECT nb_info(text_model) ->> 'format_version' AS version, nb_info(text_model) ->> 'input' AS input,
       nb_info(array_model) ->> 'input' AS array_input, nb_info(array_model) ->> 'format_version' AS array_version
FROM st_models;
SELECT nb_predict_proba(text_model, 'lunch with the agenda') = nb_predict_proba(array_model, ARRAY['lunch', 'with', 'the', 'agenda']) AS same_as_tokens,
       nb_predict(text_model, 'cheap money') AS label
FROM st_models;
-- a bare literal is text: a model without a tokenizer says what to do
SELECT nb_predict(array_model, '{cheap,money}') FROM st_models;
-- training rows of one aggregate must share their tokenizer
SELECT nb_train(label, body, CASE WHEN id = 1 THEN '{"lowercase": false}'::jsonb END) FROM st_docs;
-- weighted rows of text; a NULL weight or body skips the row, as for other rows
SELECT nb_info(nb_train(label, body, CASE WHEN id = 2 THEN NULL ELSE 2.0 END, NULL)) ->> 'documents' AS weighted_documents
FROM st_docs;

-- nb_with_options: the stored options are every scoring call's defaults,
-- a call's own options override them key by key
CREATE TABLE st_opt AS SELECT nb_with_options(text_model, '{"alpha": 0.50, "fit_prior": false}') AS m FROM st_models;
SELECT nb_info(m) -> 'options' AS options, nb_info(m) ->> 'format_version' AS version FROM st_opt;
SELECT nb_predict_proba(m, 'money agenda') = nb_predict_proba(text_model, 'money agenda', '{"alpha": 0.5, "fit_prior": false}') AS stored_apply,
       nb_predict_proba(m, 'money agenda', '{"alpha": 2}') = nb_predict_proba(text_model, 'money agenda', '{"alpha": 2, "fit_prior": false}') AS call_overrides,
       nb_predict_log_proba(m, 'money agenda') = nb_predict_log_proba(text_model, 'money agenda', '{"alpha": 0.5, "fit_prior": false}') AS log_proba
FROM st_opt, st_models;
SELECT count(*) AS explained
FROM st_opt, nb_explain(m, 'money agenda') e
JOIN nb_explain((SELECT text_model FROM st_models), 'money agenda', '{"alpha": 0.5, "fit_prior": false}') r
  ON r.feature IS NOT DISTINCT FROM e.feature AND r.value IS NOT DISTINCT FROM e.value AND r.contribution = e.contribution;
-- equal options are equal bytes; removing them gives the model's own bytes back
SELECT nb_with_options(text_model, '{"alpha": 0.5}')::text = nb_with_options(text_model, '{"alpha": 5e-1}')::text AS canonical,
       nb_with_options(nb_with_options(text_model, '{"alpha": 2}'), NULL)::text = text_model::text AS removed,
       nb_with_options(nb_with_options(array_model, '{"alpha": 2}'), NULL)::text = array_model::text AS removed_v3,
       nb_with_options(NULL, '{"alpha": 2}') IS NULL AS null_model
FROM st_models;
-- options are checked against the model when stored
SELECT nb_with_options(text_model, '{"alpha": -1}') FROM st_models;
SELECT nb_with_options(text_model, '{"class_prior": {"spam": 1}}') FROM st_models;
SELECT nb_with_options(text_model, '{"kind": "nonsense"}') FROM st_models;
SELECT nb_with_options(text_model, '[1]') FROM st_models;
-- stored options survive the text form
SELECT m::text::nb_model::text = m::text AS text_round_trip FROM st_opt;

-- merging and subtracting: same tokenizer and options, or an error
SELECT nb_info(nb_merge(a, b)) ->> 'documents' AS merged_documents,
       nb_merge(a, b)::text = (SELECT text_model::text FROM st_models) AS merge_is_training
FROM (SELECT nb_train(label, body) FILTER (WHERE id <= 3) AS a, nb_train(label, body) FILTER (WHERE id > 3) AS b FROM st_docs) s;
SELECT nb_merge(text_model, array_model) FROM st_models;
SELECT nb_merge(text_model, (SELECT nb_train(label, body, '{"ngram_range": [1, 2]}') FROM st_docs)) FROM st_models;
SELECT nb_merge(text_model, m) FROM st_models, st_opt;
SELECT nb_subtract(text_model, array_model) FROM st_models;
SELECT nb_subtract(m, text_model) FROM st_models, st_opt;
SELECT nb_info(nb_subtract(m, nb_with_options(nb_train(label, body), '{"alpha": 0.5, "fit_prior": false}'))) -> 'options' AS kept
FROM st_opt, st_docs WHERE id = 1 GROUP BY m;
SELECT nb_merge(x) FROM (SELECT nb_with_options(nb_train(label, body), '{"alpha": 2}') x FROM st_docs GROUP BY label
                         UNION ALL SELECT text_model FROM st_models) s;
SELECT nb_info(nb_merge(x)) -> 'options' AS merged_options
FROM (SELECT nb_with_options(nb_train(label, body), '{"alpha": 2}') x FROM st_docs GROUP BY label) s;
-- pruning keeps the settings
SELECT nb_info(nb_prune(m, '{"top_k": 2}')) -> 'options' AS pruned_options FROM st_opt;

-- the settings in the bytes: hand-made values are validated
CREATE TABLE st_bytes AS SELECT nbc_model_send(m) AS b FROM st_opt;
SELECT nbt_text(nbt_fix(set_byte(b, 6, 16)))::nb_model FROM st_bytes;                       -- unknown flag
SELECT nbt_text(nbt_fix(set_byte(b, 48, 15)))::nb_model FROM st_bytes;                       -- tokenizer size
SELECT nbt_text(nbt_fix(set_byte(b, position('\x22616c706861'::bytea IN b), 0)))::nb_model
FROM st_bytes;                                                                              -- zero byte in the options
SELECT nbt_text(nbt_fix(set_byte(b, position('\x22616c706861'::bytea IN b) - 1, ascii('['))))::nb_model
FROM st_bytes;                                                                              -- options that are not JSON
-- stored options are checked when read as scoring checks them, so that no
-- value is accepted that every call would refuse: st_stored(b, options) is
-- the model with other options in place of its 34 bytes of them (padded
-- with blanks, which JSON ignores)
CREATE FUNCTION st_stored(b bytea, options text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT nbt_fix(overlay(b PLACING convert_to(rpad(options, 34), 'UTF8')
                         FROM position(convert_to('{"alpha"', 'UTF8') IN b) FOR 34))
$$;
SELECT nb_predict_proba(nbt_text(st_stored(b, '{"alpha": 2}'))::nb_model, 'cheap money')
       = nb_predict_proba(nb_with_options(m, '{"alpha": 2}'), 'cheap money') AS valid_accepted
FROM st_bytes, st_opt;
SELECT nbt_text(st_stored(b, '[1]'))::nb_model FROM st_bytes;                                  -- not an object
SELECT nbt_text(st_stored(b, '{"alpha": -1}'))::nb_model FROM st_bytes;                        -- invalid value
SELECT nbt_text(st_stored(b, '{"alhpa": 0.5}'))::nb_model FROM st_bytes;                       -- unrecognized option
SELECT nbt_text(st_stored(b, '{"class_prior": {"nobody": 1}}'))::nb_model FROM st_bytes;       -- a class the model lacks
SELECT nbt_text(st_stored(b, '{"estimator":"map","alpha":0.5}'))::nb_model FROM st_bytes;      -- invalid with another option
-- the binary form (nb_model's receive function) checks them the same way
COPY (SELECT st_stored(b, '{"alpha": -1}') FROM st_bytes) TO '/tmp/nbc_regress_settings.bin' WITH (FORMAT binary);
CREATE TABLE st_received (m nb_model);
COPY st_received FROM '/tmp/nbc_regress_settings.bin' WITH (FORMAT binary);
COPY (SELECT st_stored(b, '{"alpha": 2}') FROM st_bytes) TO '/tmp/nbc_regress_settings.bin' WITH (FORMAT binary);
COPY st_received FROM '/tmp/nbc_regress_settings.bin' WITH (FORMAT binary);
SELECT nb_predict_proba(r.m, 'cheap money') = nb_predict_proba(nb_with_options(o.m, '{"alpha": 2}'), 'cheap money') AS received
FROM st_received r, st_opt o;
SELECT nbt_text(nbt_fix(set_byte(set_byte(b, 48, 0), 52, 0)))::nb_model FROM st_bytes;      -- version 4 without settings

-- parallel training of text gives the bytes of serial training
CREATE TABLE st_many AS SELECT i AS id, CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END AS label,
       'word' || (i % 17) || ' other' || (i % 5) || ' and more' AS body
FROM generate_series(1, 30000) i;
ANALYZE st_many;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TABLE st_parallel AS SELECT nb_train(label, body) AS m FROM st_many;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SELECT nb_info(p.m) ->> 'documents' AS documents,
       nb_predict_proba(p.m, 'word3 other1') = nb_predict_proba(s.m, 'word3 other1') AS parallel_equals_serial
FROM st_parallel p, (SELECT nb_train(label, body ORDER BY id) AS m FROM st_many) s;

-- jsonb rows whose key "" is a bag make the bag of text[] rows and are
-- jsonb rows too: a part of such a training that saw only that key still
-- goes with a part that saw only other keys (as parallel workers' parts
-- may), and with a model of text[] rows
SELECT nb_info(a) ->> 'input' AS input, nb_info(a) ->> 'format_version' AS version,
       nb_info(nb_merge(a, b)) ->> 'input' AS merged_input,
       nb_merge(a, b)::text = (SELECT nb_train(l, f) FROM (VALUES ('a', '{"": ["x"]}'::jsonb), ('b', '{"k": "v"}'::jsonb)) v(l, f))::text AS merge_is_training,
       nb_info(nb_merge((SELECT nb_train('c', ARRAY['y'])), a)) ->> 'classes' AS with_text_array
FROM (SELECT nb_train('a', '{"": ["x"]}'::jsonb) AS a, nb_train('b', '{"k": "v"}'::jsonb) AS b) s;

-- text the model's tokenizer finds nothing known in: nb_coverage says how
-- much it knows; a statement of so few tokens is too short for
-- nbc.unknown_features to judge (see unknown_features.sql)
SELECT round(nb_coverage(text_model, 'Money for lunch, all of it'::text)::numeric, 4) AS coverage,
       nb_coverage(text_model, 'zzz qqq') AS none_known
FROM st_models;
SELECT count(nb_predict(text_model, body)) AS scored
FROM st_models, (VALUES ('zzz qqq'), ('money now'), ('')) v(body);
