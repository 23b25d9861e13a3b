--
-- null_labels: rows skipped for a NULL label are counted (nb_info's
-- rows_null_label): a row that a label would have trained (features not
-- NULL, a weight not NULL and above 0), once whatever its weight.  The
-- count goes through merges, subtractions, pruning, stored options,
-- parallel workers' partial states and live models; a model without such
-- rows keeps its bytes.  Expected counts are SQL's own count(*).
--
CREATE TABLE nl_rows AS
SELECT i AS id, CASE WHEN i % 4 = 0 THEN NULL ELSE 'c' || (i % 3) END AS label,
       CASE WHEN i % 10 = 7 THEN NULL ELSE ARRAY['t' || (i % 5), 'u' || (i % 7)] END AS tokens,
       't' || (i % 5) || ' u' || (i % 7) AS body,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 3)::float8 END AS w
FROM generate_series(1, 200) AS i;

SELECT nb_info(nb_train(label, tokens)) -> 'rows_null_label' AS counted,
       count(*) FILTER (WHERE label IS NULL AND tokens IS NOT NULL) AS sql
FROM nl_rows;
-- weighted: a NULL or zero weight skips the row whatever its label
SELECT nb_info(nb_train(label, tokens, w)) -> 'rows_null_label' AS counted,
       count(*) FILTER (WHERE label IS NULL AND tokens IS NOT NULL AND w > 0) AS sql
FROM nl_rows;
SELECT nb_info(nb_train(label, body)) -> 'rows_null_label' AS text_counted,
       nb_info(nb_train(label, jsonb_build_object('t', tokens))) -> 'rows_null_label' AS jsonb_counted,
       count(*) FILTER (WHERE label IS NULL) AS sql
FROM nl_rows;
-- without NULL labels: 0, and the model's bytes are those of the labelled rows alone
SELECT nb_info(m) -> 'rows_null_label' AS counted, nb_info(m) -> 'format_version' AS version,
       m = (SELECT nb_train(label, tokens) FROM nl_rows WHERE label IS NOT NULL) AS same
FROM (SELECT nb_train(label, tokens) FILTER (WHERE label IS NOT NULL) AS m FROM nl_rows) t;
-- with them: version 4 with the count, the rest as without (nb_subtract of the count alone gives it back)
SELECT nb_info(m) -> 'format_version' AS version, (m::jsonb) -> 'rows_null_label' AS in_jsonb,
       m::text::nb_model = m AS text_round_trip
FROM (SELECT nb_train(label, tokens) AS m FROM nl_rows) t;
-- rows that all have a NULL label: NULL, as over no rows
SELECT nb_train(label, tokens) IS NULL AS is_null FROM nl_rows WHERE label IS NULL;

-- merging adds the counts: the model of every group merged is the model of every row
SELECT nb_merge(m) = (SELECT nb_train(label, tokens) FROM nl_rows) AS merged_equal,
       nb_info(nb_merge(m)) -> 'rows_null_label' AS counted
FROM (SELECT nb_train(label, tokens) AS m FROM nl_rows GROUP BY id % 5) t;
-- subtracting subtracts them; more than the first model has is refused
SELECT nb_info(nb_subtract(a, b)) -> 'rows_null_label' AS counted,
       nb_subtract(a, b) = (SELECT nb_train(label, tokens) FROM nl_rows WHERE id % 2 = 1) AS same
FROM (SELECT nb_train(label, tokens) AS a, nb_train(label, tokens) FILTER (WHERE id % 2 = 0) AS b FROM nl_rows) t;
SELECT nb_subtract(nb_train(label, tokens) FILTER (WHERE label IS NOT NULL), nb_train(label, tokens))
FROM nl_rows WHERE id <= 8;
-- pruning and stored options keep the count
SELECT nb_info(nb_prune(m, '{"min_documents": 30}')) -> 'rows_null_label' AS pruned,
       nb_info(nb_with_options(m, '{"alpha": 0.5}')) -> 'rows_null_label' AS with_options,
       nb_info(nb_with_options(nb_with_options(m, '{"alpha": 0.5}'), NULL)) -> 'rows_null_label' AS options_removed
FROM (SELECT nb_train(label, tokens) AS m FROM nl_rows) t;
-- a model of no class (what remains when the labelled rows are subtracted)
-- merges with any model: its tokenizer is not compared with the other's
-- options or kind of rows, its count is added, and subtracted again
SELECT nb_info(nc) -> 'classes' AS classes, nb_info(nc) -> 'rows_null_label' AS counted,
       nb_info(nb_merge(nc, m)) -> 'rows_null_label' AS merged_counted,
       nb_merge(nc, m) = nb_merge(m, nc) AS either_order,
       nb_subtract(nb_merge(nc, m), nc) = m AS subtracted_back
FROM (SELECT nb_subtract(nb_train(label, body), nb_train(label, body) FILTER (WHERE label IS NOT NULL)) AS nc,
             nb_with_options(nb_train(label, tokens) FILTER (WHERE label IS NOT NULL), '{"alpha": 0.5}') AS m
      FROM nl_rows) t;

-- a user's trigger that calls nb_train over rows that all have a NULL
-- label gets NULL, as any other caller does
CREATE TABLE nl_trig_rows (label text, tokens text[]);
CREATE TABLE nl_trig_seen (all_null_labels boolean, model_is_null boolean);
CREATE FUNCTION nl_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO nl_trig_seen SELECT bool_and(label IS NULL), nb_train(label, tokens) IS NULL FROM new_rows;
	RETURN NULL;
END
$$;
CREATE TRIGGER nl_trig AFTER INSERT ON nl_trig_rows REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION nl_trig();
INSERT INTO nl_trig_rows VALUES (NULL, '{x}'), (NULL, '{y}');
INSERT INTO nl_trig_rows VALUES ('a', '{x}'), (NULL, '{y}');
SELECT * FROM nl_trig_seen;
DROP TABLE nl_trig_rows, nl_trig_seen;
DROP FUNCTION nl_trig();

-- EM uses the rows of NULL label: its model skipped none
CREATE TABLE nl_em AS SELECT label, tokens FROM nl_rows WHERE tokens IS NOT NULL;
SELECT nb_info(nb_train_em('nl_em', 'label', 'tokens', '{"iterations": 2}')) -> 'rows_null_label' AS em_counted;
DROP TABLE nl_em;

-- parallel workers: NULL labels in the second half of the table, so that a
-- worker's partial state may hold no class; the count is the serial one
CREATE TABLE nl_par AS
SELECT i AS id, CASE WHEN i > 10000 THEN NULL ELSE 'c' || (i % 3) END AS label,
       ARRAY['t' || (i % 7), 'u' || (i % 11)] AS tokens
FROM generate_series(1, 20000) AS i;
ANALYZE nl_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT nb_train(label, tokens) FROM nl_par;
SELECT nb_info(nb_train(label, tokens)) -> 'rows_null_label' AS counted FROM nl_par;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT nb_info(nb_train(label, tokens)) -> 'rows_null_label' AS serial FROM nl_par;
DROP TABLE nl_par;

-- a live model: statements of NULL labels alone, labels set and cleared, rows deleted
CREATE TABLE nl_live_docs (id serial PRIMARY KEY, label text, tokens text[]);
INSERT INTO nl_live_docs (label, tokens) VALUES ('a', '{x,y}'), (NULL, '{x}');
SELECT live_model FROM nb_live_create('nl_live', 'nl_live_docs', 'label', 'tokens');
INSERT INTO nl_live_docs (label, tokens) VALUES (NULL, '{y}'), (NULL, '{z}');
UPDATE nl_live_docs SET label = 'b' WHERE id = 2;
INSERT INTO nl_live_docs (label, tokens) VALUES ('a', '{z}'), (NULL, '{x}');
UPDATE nl_live_docs SET label = NULL WHERE id = 1;
DELETE FROM nl_live_docs WHERE id = 3;
SELECT nb_info(nb_live('nl_live')) -> 'rows_null_label' AS live_counted,
       nb_live('nl_live') = (SELECT nb_train(label, tokens) FROM nl_live_docs) AS same_as_source,
       (SELECT count(*) FROM nl_live_docs WHERE label IS NULL) AS sql;
SELECT nb_live_fold('nl_live');
SELECT nb_live('nl_live') = (SELECT nb_train(label, tokens) FROM nl_live_docs) AS same_after_fold;
-- every label gone: NULL, as nb_train over the source gives
UPDATE nl_live_docs SET label = NULL;
SELECT nb_live('nl_live') IS NULL AS live_null, (SELECT nb_train(label, tokens) FROM nl_live_docs) IS NULL AS source_null;
UPDATE nl_live_docs SET label = 'a' WHERE id = 2;
SELECT nb_live('nl_live') = (SELECT nb_train(label, tokens) FROM nl_live_docs) AS same_relabelled,
       nb_info(nb_live('nl_live')) -> 'rows_null_label' AS live_counted;
SELECT nb_live_drop('nl_live');
DROP TABLE nl_live_docs;

-- a live model of text with a tokenizer and weights: a statement of NULL
-- labels alone makes a delta of their count alone, as nb_train counts them
-- (weight above 0), which merges with the deltas of the tokenizer's rows
CREATE TABLE nl_live_text (id serial PRIMARY KEY, label text, body text, w float8);
SELECT live_model FROM nb_live_create('nl_live_t', 'nl_live_text', 'label', 'body', 'w',
                                      '{"tokenizer": {"lowercase": false}}');
INSERT INTO nl_live_text (label, body, w) VALUES (NULL, 'Free money', 2), (NULL, 'lunch', 0), (NULL, 'x', NULL);
SELECT nb_live('nl_live_t') IS NULL AS live_null,
       (SELECT nb_train(label, body, w, '{"lowercase": false}') FROM nl_live_text) IS NULL AS source_null;
INSERT INTO nl_live_text (label, body, w) VALUES ('spam', 'Free money now', 1.5), ('ham', 'Lunch at noon', 1);
SELECT nb_live('nl_live_t') = (SELECT nb_train(label, body, w, '{"lowercase": false}') FROM nl_live_text) AS same_as_source,
       nb_info(nb_live('nl_live_t')) -> 'rows_null_label' AS live_counted,
       (SELECT count(*) FROM nl_live_text WHERE label IS NULL AND w > 0) AS sql;
DELETE FROM nl_live_text WHERE label IS NULL;
SELECT nb_live('nl_live_t') = (SELECT nb_train(label, body, w, '{"lowercase": false}') FROM nl_live_text) AS same_without_them,
       nb_info(nb_live('nl_live_t')) -> 'rows_null_label' AS live_counted;
SELECT nb_live_drop('nl_live_t');
DROP TABLE nl_live_text;
DROP TABLE nl_rows;
