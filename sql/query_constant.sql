--
-- query_constant: a model the query computes once (a scalar subquery, a
-- one-row CTE or derived table) is marked by the planner and prepared on
-- the first row only; nothing else is, and a mark never serves other bytes.
--
SET max_parallel_workers_per_gather = 0;

-- how the planner marked the model argument of the query's scoring calls:
-- 'any plan', 'serial plans', or 'none' (from EXPLAIN VERBOSE, whose
-- spelling of parameters differs between versions)
CREATE FUNCTION qc_mark(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  marks text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
    IF line LIKE '%nbc_query_constant(%, false)%' THEN
      marks := marks || 'any plan ';
    ELSIF line LIKE '%nbc_query_constant(%, true)%' THEN
      marks := marks || 'serial plans ';
    END IF;
  END LOOP;
  RETURN coalesce(nullif(rtrim(marks), ''), 'none');
END $$;

-- the same model stored, and computed in every shape
CREATE TABLE qc_stored AS SELECT nb_train(label, tokens) AS m FROM docs;
CREATE TABLE qc_docs AS SELECT row_number() OVER (ORDER BY label, tokens) AS id, label, tokens FROM docs;

SELECT qc_mark($q$SELECT nb_predict((SELECT nb_train(label, tokens) FROM docs), tokens) FROM qc_docs$q$) AS scalar_subquery,
       qc_mark($q$WITH m AS MATERIALIZED (SELECT nb_train(label, tokens) AS m FROM docs)
                  SELECT nb_predict(m.m, tokens) FROM qc_docs, m$q$) AS materialized_cte,
       qc_mark($q$WITH m AS (SELECT nb_train(label, tokens) AS m FROM docs)
                  SELECT nb_predict(m.m, tokens) FROM qc_docs, m$q$) AS inlined_cte,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_merge(m) AS m FROM qc_stored) m$q$) AS derived_table,
       qc_mark($q$SELECT nb_predict((SELECT nb_subtract(nb_merge(a.m, a.m), a.m) FROM qc_stored a), tokens) FROM qc_docs$q$) AS of_stored;
-- a derived table's model in any plan when every evaluation makes the same
-- bytes (nb_train of text[] or tsvector without weights: whole counts), else
-- in serial plans only (weights, jsonb values: sums that depend on the order)
SELECT qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(label, tokens, 0.1) AS m FROM docs) m$q$) AS weighted,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(label, array_to_tsvector(tokens)) AS m FROM docs) m$q$) AS tsvector,
       qc_mark($q$SELECT nb_predict(m.m, jsonb_build_object('n', cardinality(tokens))) FROM qc_docs,
                    (SELECT nb_train(label, ('{"n": ' || cardinality(tokens)::text || '}')::jsonb) AS m FROM docs) m$q$) AS jsonb_values;
-- a label of another type (nb_train's anynonarray form) counts the same whole numbers
SELECT qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(length(label), tokens) AS m FROM docs) m$q$) AS integer_label,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(label = 'spam', array_to_tsvector(tokens)) AS m FROM docs) m$q$) AS boolean_label;

-- the other scoring functions are marked too
SELECT qc_mark($q$SELECT nb_predict_proba((SELECT m FROM qc_stored), tokens, '{"alpha": 0.5}') FROM qc_docs$q$) AS proba,
       qc_mark($q$SELECT nb_predict_log_proba((SELECT m FROM qc_stored), tokens) FROM qc_docs$q$) AS log_proba,
       qc_mark($q$SELECT e.* FROM qc_docs, nb_explain((SELECT m FROM qc_stored), tokens) e$q$) AS explain_from,
       qc_mark($q$SELECT nb_explain((SELECT m FROM qc_stored), tokens) FROM qc_docs$q$) AS explain_select;

-- not marked: what can differ from row to row, or from one evaluation to the next
SELECT qc_mark($q$SELECT nb_predict((SELECT nb_train(label, tokens) FROM docs WHERE label <> d.label), tokens) FROM qc_docs d$q$) AS correlated,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs d JOIN (SELECT label, nb_train(label, tokens) AS m FROM docs GROUP BY label) m USING (label)$q$) AS per_group,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs d, LATERAL (SELECT nb_train(label, tokens) AS m FROM docs WHERE label = d.label) m$q$) AS lateral,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(label, tokens) AS m FROM docs WHERE random() >= 0) m$q$) AS volatile,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(label, tokens) AS m FROM docs TABLESAMPLE SYSTEM (100)) m$q$) AS tablesample,
       qc_mark($q$SELECT nb_predict(s.m, tokens) FROM qc_docs, qc_stored s$q$) AS table_of_models,
       qc_mark($q$SELECT nb_predict(nb_train(label, tokens) OVER (ORDER BY id), tokens) FROM qc_docs$q$) AS window;
-- a subquery of an outer level's row is correlated however deep it refers to it
SELECT qc_mark($q$SELECT (SELECT nb_predict((SELECT nb_train(label, tokens) FROM docs WHERE label <> d.label), ARRAY['x'])) FROM qc_docs d$q$) AS two_levels_up;
-- a CTE the subquery reads is proved too: constant if it is, else not
SELECT qc_mark($q$WITH t AS MATERIALIZED (SELECT * FROM docs)
                  SELECT nb_predict((SELECT nb_train(label, tokens) FROM t), tokens) FROM qc_docs$q$) AS of_constant_cte,
       qc_mark($q$SELECT (WITH t AS MATERIALIZED (SELECT * FROM docs WHERE label <> d.label)
                          SELECT nb_predict((SELECT nb_train(label, tokens) FROM t), d.tokens)) FROM qc_docs d$q$) AS of_correlated_cte;

-- a mark written by hand is removed by the planner: it proves nothing
SELECT qc_mark($q$SELECT nb_predict(nbc_query_constant(s.m, false), tokens) FROM qc_docs, qc_stored s$q$) AS by_hand;

-- session state: a derived table evaluated again (a rescan) runs under the
-- session's state of the time, so it is proved only when nothing in it can
-- depend on that state: every function, operator, aggregate and label
-- conversion to text immutable.  Not proved: a label whose text follows
-- TimeZone or DateStyle, a STABLE function anywhere, an aggregate whose
-- transition function is STABLE
SET qc.tag = 'one';
CREATE TABLE qc_ts (label text, ts timestamptz, tokens text[]);
INSERT INTO qc_ts VALUES ('x', '2026-01-01 12:00+00', '{a}'), ('yy', '2026-01-02 12:00+00', '{b}');
CREATE TABLE qc_ts_docs AS SELECT g AS id, ARRAY[(ARRAY['a', 'b'])[2 - g % 2]] AS tokens FROM generate_series(1, 4) g;
CREATE FUNCTION qc_stable_merge_step(a nb_model, b nb_model) RETURNS nb_model
  LANGUAGE sql STABLE AS 'SELECT nb_merge(a, b)';
CREATE AGGREGATE qc_stable_merge(nb_model) (SFUNC = qc_stable_merge_step, STYPE = nb_model);
SELECT qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_ts_docs, (SELECT nb_train(ts, tokens) AS m FROM qc_ts) m$q$) AS timestamptz_label,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_ts_docs,
                    (SELECT nb_train((ts AT TIME ZONE 'UTC')::date, tokens) AS m FROM qc_ts) m$q$) AS date_label,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs,
                    (SELECT nb_train(label || statement_timestamp(), tokens) AS m FROM docs) m$q$) AS statement_timestamp,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs,
                    (SELECT nb_train(label || current_user, tokens) AS m FROM docs) m$q$) AS current_user,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs,
                    (SELECT nb_train(label || current_setting('qc.tag'), tokens) AS m FROM docs) m$q$) AS current_setting,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs,
                    (SELECT nb_train(label, tokens) AS m FROM docs WHERE label <> current_setting('qc.tag')) m$q$) AS stable_filter,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT qc_stable_merge(m) AS m FROM qc_stored) m$q$) AS stable_aggregate;
-- (float8's text follows extra_float_digits, though its output function is
-- declared IMMUTABLE; jsonb_build_object is STABLE, as it writes values of
-- any type)
SELECT qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs, (SELECT nb_train(length(label)::float8, tokens) AS m FROM docs) m$q$) AS float8_label,
       qc_mark($q$SELECT nb_predict(m.m, jsonb_build_object('n', cardinality(tokens))) FROM qc_docs,
                    (SELECT nb_train(label, jsonb_build_object('n', cardinality(tokens))) AS m FROM docs) m$q$) AS jsonb_build_object;
-- proved: immutable expressions of the same columns, and the shapes
-- evaluated once whatever they call (the query without nbc also keeps what
-- the first evaluation made)
SELECT qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_ts_docs,
                    (SELECT nb_train(extract(year FROM ts AT TIME ZONE 'UTC')::int, tokens) AS m FROM qc_ts) m$q$) AS year_label,
       qc_mark($q$SELECT nb_predict(m.m, tokens) FROM qc_docs,
                    (SELECT nb_train(upper(label), tokens) AS m FROM docs WHERE label <> 'x') m$q$) AS immutable_filter,
       qc_mark($q$SELECT nb_predict((SELECT nb_train(ts, tokens) FROM qc_ts), tokens) FROM qc_ts_docs$q$) AS scalar_subquery,
       qc_mark($q$WITH m AS MATERIALIZED (SELECT nb_train(ts, tokens) AS m FROM qc_ts)
                  SELECT nb_predict(m.m, tokens) FROM qc_ts_docs, m$q$) AS materialized_cte;

-- and each prediction is what PostgreSQL makes without nbc's caching: the
-- expected label is computed for every row, under the settings of the
-- time.  Without Materialize the join evaluates its derived table again for
-- every document, and a cursor's FETCH runs under the settings of its own
SET enable_material = off;
SET TimeZone = 'UTC';
EXPLAIN (COSTS OFF)
SELECT d.id, nb_predict(m.m, d.tokens) FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(ts, tokens) AS m FROM qc_ts) m ON true;
BEGIN;
DECLARE qc_cursor CURSOR FOR
SELECT d.id, nb_predict(m.m, d.tokens) AS predicted,
       (SELECT t.ts::text FROM qc_ts t WHERE t.tokens = d.tokens) AS expected
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(ts, tokens) AS m FROM qc_ts) m ON true;
FETCH 2 FROM qc_cursor;
SET TimeZone = 'Asia/Tokyo';
FETCH 2 FROM qc_cursor;
COMMIT;
-- a setting changed by the query itself, between two rows
SET TimeZone = 'UTC';
SELECT d.id, nb_predict(m.m, d.tokens) AS predicted,
       (SELECT t.ts::text FROM qc_ts t WHERE t.tokens = d.tokens) AS expected,
       set_config('TimeZone', CASE WHEN d.id = 2 THEN 'Asia/Tokyo' ELSE current_setting('TimeZone') END, true) AS zone_after
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(ts, tokens) AS m FROM qc_ts) m ON true;
-- a float8 label after SET extra_float_digits
BEGIN;
DECLARE qc_cursor CURSOR FOR
SELECT d.id, nb_predict(m.m, d.tokens) AS predicted,
       (SELECT (length(t.label) / 3.0::float8)::text FROM qc_ts t WHERE t.tokens = d.tokens) AS expected
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(length(label) / 3.0::float8, tokens) AS m FROM qc_ts) m ON true;
FETCH 2 FROM qc_cursor;
SET extra_float_digits = 0;
FETCH 2 FROM qc_cursor;
COMMIT;
RESET extra_float_digits;
-- statement_timestamp() is each FETCH's own
BEGIN;
DECLARE qc_cursor CURSOR FOR
SELECT d.id, nb_predict(m.m, d.tokens) =
             (SELECT t.label FROM qc_ts t WHERE t.tokens = d.tokens) || ' ' || statement_timestamp() AS same
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(label || ' ' || statement_timestamp(), tokens) AS m FROM qc_ts) m ON true;
FETCH 2 FROM qc_cursor;
SELECT pg_sleep(0.001);
FETCH 2 FROM qc_cursor;
COMMIT;
-- current_user after SET ROLE
CREATE ROLE regress_qc_reader;
BEGIN;
DECLARE qc_cursor CURSOR FOR
SELECT d.id, nb_predict(m.m, d.tokens) =
             (SELECT t.label FROM qc_ts t WHERE t.tokens = d.tokens) || ' ' || current_user AS same,
       current_user = 'regress_qc_reader' AS as_reader
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(label || ' ' || current_user, tokens) AS m FROM qc_ts) m ON true;
FETCH 2 FROM qc_cursor;
SET ROLE regress_qc_reader;
FETCH 2 FROM qc_cursor;
RESET ROLE;
COMMIT;
DROP ROLE regress_qc_reader;
-- current_setting() of a setting SET between two FETCHes
BEGIN;
DECLARE qc_cursor CURSOR FOR
SELECT d.id, nb_predict(m.m, d.tokens) AS predicted,
       (SELECT t.label FROM qc_ts t WHERE t.tokens = d.tokens) || ' ' || current_setting('qc.tag') AS expected
FROM qc_ts_docs d LEFT JOIN (SELECT nb_train(label || ' ' || current_setting('qc.tag'), tokens) AS m FROM qc_ts) m ON true;
FETCH 2 FROM qc_cursor;
SET qc.tag = 'two';
FETCH 2 FROM qc_cursor;
COMMIT;
RESET TimeZone;
RESET enable_material;
RESET qc.tag;
DROP AGGREGATE qc_stable_merge(nb_model);
DROP FUNCTION qc_stable_merge_step(nb_model, nb_model);
DROP TABLE qc_ts, qc_ts_docs;

-- every shape scores exactly as the stored model does, with every function
CREATE TABLE qc_expected AS
SELECT d.id, nb_predict(s.m, d.tokens) AS label, nb_predict_proba(s.m, d.tokens)::text AS proba,
       nb_predict_log_proba(s.m, d.tokens, '{"alpha": 0.5}')::text AS log_proba,
       (SELECT array_agg(e ORDER BY e) FROM nb_explain(s.m, d.tokens) e)::text AS explained
FROM qc_docs d, qc_stored s;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE r.label = e.label AND r.proba = e.proba AND r.log_proba = e.log_proba
                        AND r.explained = e.explained) AS same
FROM (SELECT d.id,
             nb_predict((SELECT nb_train(label, tokens) FROM docs), d.tokens) AS label,
             nb_predict_proba((SELECT nb_train(label, tokens) FROM docs), d.tokens)::text AS proba,
             nb_predict_log_proba((SELECT nb_train(label, tokens) FROM docs), d.tokens, '{"alpha": 0.5}')::text AS log_proba,
             (SELECT array_agg(e ORDER BY e)
              FROM nb_explain((SELECT nb_train(label, tokens) FROM docs), d.tokens) e)::text AS explained
      FROM qc_docs d) r JOIN qc_expected e USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE r.proba = e.proba) AS same
FROM (WITH m AS MATERIALIZED (SELECT nb_train(label, tokens) AS m FROM docs)
      SELECT d.id, nb_predict_proba(m.m, d.tokens)::text AS proba FROM qc_docs d, m) r
JOIN qc_expected e USING (id);
SELECT count(*) AS rows, count(*) FILTER (WHERE r.proba = e.proba) AS same
FROM (WITH m AS (SELECT nb_train(label, tokens) AS m FROM docs)
      SELECT d.id, nb_predict_proba(m.m, d.tokens)::text AS proba FROM qc_docs d, m) r
JOIN qc_expected e USING (id);

-- the colliding pair of collision.sql (one size, one checksum; A predicts
-- a for {x}, B predicts b), computed in the query in every marked shape,
-- side by side: each call serves its own bytes
CREATE TABLE qc_pair (id int, m nb_model);
INSERT INTO qc_pair SELECT 1, nb_train(l, t::text[])
  FROM (VALUES ('a', '{x,x,y}'), ('b', '{y,z}')) v(l, t);
INSERT INTO qc_pair SELECT 2, translate(encode(overlay(decode(m::text, 'base64')
  PLACING '\x00000000000022403d3d74d084c07740' FROM 49), 'base64'), E'\n', '')::nb_model
  FROM qc_pair WHERE id = 1;
SELECT count(DISTINCT m::text) AS models,
       count(DISTINCT octet_length(decode(m::text, 'base64'))) AS sizes,
       count(DISTINCT substr(decode(m::text, 'base64'), 25, 8)) AS checksums
FROM qc_pair;
-- (m::text::nb_model: a value in memory, as a computed model is)
SELECT g, nb_predict((SELECT m::text::nb_model FROM qc_pair WHERE id = 1), ARRAY['x']) AS a,
          nb_predict((SELECT m::text::nb_model FROM qc_pair WHERE id = 2), ARRAY['x']) AS b
FROM generate_series(1, 2) g;
WITH a AS MATERIALIZED (SELECT min(m::text)::nb_model AS m FROM qc_pair WHERE id = 1),
     b AS MATERIALIZED (SELECT min(m::text)::nb_model AS m FROM qc_pair WHERE id = 2)
SELECT g, nb_predict(a.m, ARRAY['x']) AS a, nb_predict(b.m, ARRAY['x']) AS b
FROM generate_series(1, 2) g, a, b;
SELECT g, nb_predict(a.m, ARRAY['x']) AS a, nb_predict(b.m, ARRAY['x']) AS b
FROM generate_series(1, 2) g,
     (SELECT min(m::text)::nb_model AS m FROM qc_pair WHERE id = 1) a,
     (SELECT min(m::text)::nb_model AS m FROM qc_pair WHERE id = 2) b;
-- and in the shapes that are not marked: a VALUES list of the two, a join,
-- a subquery per row, a derived table rescanned under another row each time
SELECT v.i, nb_predict(v.m::nb_model, ARRAY['x'])
FROM (VALUES (1, (SELECT m::text FROM qc_pair WHERE id = 1)),
             (2, (SELECT m::text FROM qc_pair WHERE id = 2)),
             (3, (SELECT m::text FROM qc_pair WHERE id = 1))) v(i, m);
SELECT g.i, nb_predict(p.m::text::nb_model, ARRAY['x'])
FROM (VALUES (1), (2), (1), (2)) g(i) JOIN qc_pair p ON p.id = g.i;
SELECT g.i, nb_predict((SELECT p.m::text::nb_model FROM qc_pair p WHERE p.id = g.i), ARRAY['x'])
FROM (VALUES (1), (2), (1), (2)) g(i);
SELECT g.i, (SELECT nb_predict(m.m, ARRAY['x'])
             FROM (SELECT min(p.m::text)::nb_model AS m FROM qc_pair p WHERE p.id = g.i) m)
FROM (VALUES (1), (2), (1), (2)) g(i);
-- an aggregate's model (nb_grid_metrics) is proved from the plan at run
-- time: an uncorrelated scalar subquery's InitPlan; the two models side by
-- side, and per group (a correlated subquery, not proved)
SELECT (nb_grid_metrics((SELECT m::text::nb_model FROM qc_pair WHERE id = 1), ARRAY['x'], 'a',
                        ARRAY['{}'::jsonb]))[1] ->> 'accuracy' AS a_right,
       (nb_grid_metrics((SELECT m::text::nb_model FROM qc_pair WHERE id = 2), ARRAY['x'], 'a',
                        ARRAY['{}'::jsonb]))[1] ->> 'accuracy' AS b_right
FROM generate_series(1, 3);
SELECT g.i, (nb_grid_metrics((SELECT p.m::text::nb_model FROM qc_pair p WHERE p.id = g.i), ARRAY['x'], 'a',
                             ARRAY['{}'::jsonb]))[1] ->> 'accuracy' AS accuracy
FROM (VALUES (1), (2), (1), (2)) g(i) GROUP BY g.i ORDER BY g.i;
SELECT (nb_grid_metrics((SELECT nb_train(label, tokens) FROM docs), d.tokens, d.label,
                        ARRAY['{}'::jsonb, '{"alpha": 0.5}']))::text =
       (SELECT (nb_grid_metrics(s.m, d.tokens, d.label, ARRAY['{}'::jsonb, '{"alpha": 0.5}']))::text
        FROM qc_docs d, qc_stored s) AS grid_same_as_stored
FROM qc_docs d;

-- a mark written by hand over rows of both models
SELECT p.id, nb_predict(nbc_query_constant(p.m::text::nb_model, false), ARRAY['x'])
FROM (VALUES (1), (2), (1)) g(i) JOIN qc_pair p ON p.id = g.i ORDER BY g.i, p.id;

-- in parallel plans too: the scalar subquery's value comes to the workers
-- from the leader
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE TABLE qc_parallel AS
SELECT d.id, nb_predict_proba((SELECT nb_train(label, tokens) FROM docs), d.tokens)::text AS proba
FROM qc_docs d;
SELECT count(*) AS rows, count(*) FILTER (WHERE r.proba = e.proba) AS same
FROM qc_parallel r JOIN qc_expected e USING (id);
CREATE TABLE qc_parallel_derived AS
SELECT d.id, nb_predict_proba(m.m, d.tokens)::text AS proba
FROM qc_docs d, (SELECT nb_train(label, tokens) AS m FROM docs) m;
SELECT count(*) AS rows, count(*) FILTER (WHERE r.proba = e.proba) AS same
FROM qc_parallel_derived r JOIN qc_expected e USING (id);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP FUNCTION qc_mark(text);
DROP TABLE qc_stored, qc_docs, qc_expected, qc_pair, qc_parallel, qc_parallel_derived;
RESET max_parallel_workers_per_gather;
