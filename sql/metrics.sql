--
-- metrics: nb_metrics, the evaluation aggregates, and nb_metrics_rows.
-- Expected numbers: scikit-learn 1.2.1 (sklearn.metrics with sample_weight,
-- see test/parity for the same on real predictions) or by hand as noted.
--

-- labels: x/x, x/y, y/y, z/y.  By hand: accuracy 1/2; x: P 1, R 1/2, F1 2/3;
-- y: P 1/3, R 1, F1 1/2; z never predicted: P 0 (zero_division), R 0, F1 0;
-- balanced (1/2 + 1 + 0)/3; macro P 4/9; weighted P 7/12
SELECT jsonb_pretty(nb_metrics(a, p))
FROM (VALUES ('x', 'x'), ('x', 'y'), ('y', 'y'), ('z', 'y')) AS v (a, p);

-- probabilities and weights 1, 2, 1, 1; y/{x 0.5, y 0.5} is a tie, which
-- goes to x (the first label in byte order, as nb_predict); z is named by
-- no row: probability 0, clipped to 2.2e-16 in the log loss.  Calibration
-- by hand: top probabilities 0.7 (right), 0.6 (wrong, weight 2), 0.5 (wrong),
-- 0.9 (wrong) in bins 7, 6, 5 and 9; ECE = (0.3 + 1.2 + 0.5 + 0.9) / 5 = 0.58
SELECT jsonb_pretty(nb_metrics(a, p::jsonb, w))
FROM (VALUES ('x', '{"x": 0.7, "y": 0.3}', 1.0), ('x', '{"x": 0.4, "y": 0.6}', 2),
             ('y', '{"x": 0.5, "y": 0.5}', 1), ('z', '{"x": 0.1, "y": 0.9}', 1)) AS v (a, p, w);

-- the same as rows
SELECT * FROM nb_metrics_rows((
  SELECT nb_metrics(a, p::jsonb, w)
  FROM (VALUES ('x', '{"x": 0.7, "y": 0.3}', 1.0), ('x', '{"x": 0.4, "y": 0.6}', 2),
               ('y', '{"x": 0.5, "y": 0.5}', 1), ('z', '{"x": 0.1, "y": 0.9}', 1)) AS v (a, p, w)));
SELECT kind, class, predicted, precision, count
FROM nb_metrics_rows((SELECT nb_metrics(a, p) FROM (VALUES ('b', 'a'), ('a', 'a')) AS v (a, p)));
SELECT count(*) FROM nb_metrics_rows(NULL);

-- sklearn's example of roc_auc_score / average_precision_score: AUC 0.75, AP 5/6;
-- ties share a threshold: n/0.5 p/0.5 p/0.5 n/0.2 gives AUC 0.75, AP 2/3
SELECT m -> 'roc_auc' AS roc_auc, m -> 'average_precision' AS average_precision
FROM (SELECT nb_metrics(a, jsonb_build_object('p', s, 'n', 1 - s)) AS m
      FROM (VALUES ('n', 0.1), ('n', 0.4), ('p', 0.35), ('p', 0.8)) AS v (a, s)) AS q;
SELECT m -> 'roc_auc' -> 'classes' -> 'p' AS roc_auc, m -> 'average_precision' -> 'classes' -> 'p' AS ap
FROM (SELECT nb_metrics(a, jsonb_build_object('p', s, 'n', 1 - s)) AS m
      FROM (VALUES ('p', 0.5), ('n', 0.5), ('p', 0.5), ('n', 0.2)) AS v (a, s)) AS q;

-- two classes: the macro AUC is sklearn's binary roc_auc_score, the AUC of the
-- second class (b).  The classes' AUCs differ when probabilities round to 1
-- and tie there: b's scores 1, 1, 0.4, 0.7 give (1/2 + 2)/4 = 0.625, a's
-- distinct 1e-20, 1e-30, 0.6, 0.3 give 3/4
SELECT nb_metrics(a, p::jsonb) -> 'roc_auc' AS roc_auc
FROM (VALUES ('a', '{"a": 1e-20, "b": 1}'), ('b', '{"a": 1e-30, "b": 1}'),
             ('a', '{"a": 0.6, "b": 0.4}'), ('b', '{"a": 0.3, "b": 0.7}')) AS v (a, p);

-- rows with other keys than the row before: the second and fourth rows' key
-- bytes ("xyzw") are the first and third rows', split into other keys.  By
-- hand: every row predicted right
SELECT m -> 'accuracy' AS accuracy, m -> 'confusion' AS confusion
FROM (SELECT nb_metrics(a, p::jsonb ORDER BY i) AS m
      FROM (VALUES (1, 'x', '{"x": 0.9, "yzw": 0.1}'), (2, 'zw', '{"xy": 0.2, "zw": 0.8}'),
                   (3, 'yzw', '{"x": 0.3, "yzw": 0.7}'), (4, 'xy', '{"xy": 0.6, "zw": 0.4}'),
                   (5, 'x', '{"x": 0.6, "xy": 0.1, "yzw": 0.1, "zw": 0.2}'))
           AS v (i, a, p)) AS q;

-- a class named by the probabilities but never actual or predicted: not a
-- report class (sklearn's labels=None); its AUC and AP are undefined (null),
-- and the macro averages leave it out.  Log loss by hand over the classes
-- a, b, c: -(log 0.6 + log 0.7) / 2
SELECT m -> 'classes' AS classes, m -> 'roc_auc' AS roc_auc,
       abs((m ->> 'log_loss')::float8 + (ln(0.6) + ln(0.7)) / 2) < 1e-15 AS log_loss_ok
FROM (SELECT nb_metrics(a, p::jsonb) AS m
      FROM (VALUES ('a', '{"a": 0.6, "b": 0.4, "c": 0}'), ('b', '{"a": 0.3, "b": 0.7, "c": 0}')) AS v (a, p)) AS q;

-- a probability of 0 for the actual class: clipped to eps = 2^-52, renormalised
-- over the row (1 + eps): -log(eps / (1 + eps)) = 36.04365338911715
SELECT nb_metrics('a', '{"a": 0, "b": 1}'::jsonb) ->> 'log_loss' AS log_loss;

-- the probabilities are read exactly as float8: one row per value p, as
-- {"a": 1, "b": p} for actual a, whose Brier score is p^2 (random values
-- down to 1e-150, and numerals of up to 20 digits)
SELECT count(*) AS values, count(*) FILTER (WHERE brier = p * p) AS exact
FROM (SELECT i, p, (nb_metrics('a', jsonb_build_object('a', 1, 'b', p)) ->> 'brier')::float8 AS brier
      FROM (SELECT i, random() * 10 ^ (-(i % 150)) AS p FROM generate_series(1, 5000) AS i
            UNION ALL
            SELECT 0, p FROM unnest(ARRAY[0, 1, 0.5, 1e-150, 0.1, 0.30000000000000004,
                                          0.99999999999999989]::float8[]) AS p) AS v
      GROUP BY i, p) AS q;
SELECT (nb_metrics('a', '{"a": 1, "b": 0.12345678901234567890}'::jsonb) ->> 'brier')::float8
         = 0.12345678901234567890::float8 ^ 2 AS exact_20_digits;

-- NULL actual, predicted, probabilities or weight: the row is skipped
SELECT nb_metrics(a, p) ->> 'rows' AS label_rows, nb_metrics(a, p, w) ->> 'rows' AS weighted_rows,
       nb_metrics(a, j) ->> 'rows' AS proba_rows
FROM (VALUES ('x', 'x', 1.0, '{"x": 1}'::jsonb), (NULL, 'x', 1, '{"x": 1}'), ('x', NULL, 1, NULL),
             ('x', 'y', NULL, '{"x": 0.2, "y": 0.8}')) AS v (a, p, w, j);
-- no rows, only NULLs: NULL, as other aggregates
SELECT nb_metrics(a, p) IS NULL AS empty, nb_metrics(a, j) IS NULL AS empty_proba
FROM (VALUES ('x', 'x', '{"x": 1}'::jsonb)) AS v (a, p, j) WHERE false;
SELECT nb_metrics(a, p) IS NULL AS all_null FROM (VALUES (NULL::text, 'x'), ('x', NULL)) AS v (a, p);
-- weight 0 everywhere: the classes are known, the ratios undefined (null),
-- the averages sklearn's zero_division value 0
SELECT nb_metrics(a, p, 0) FROM (VALUES ('x', 'y')) AS v (a, p);

-- as a window function: the final function leaves the state as it was, so the
-- running accuracy is 1, 1/2, 2/3; over the frame of rows 2 and 3 (both y)
-- neither class has both positive and negative rows: AUC null
SELECT i, nb_metrics(a, p) OVER (ORDER BY i) ->> 'accuracy' AS running_accuracy,
       nb_metrics(a, j) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) -> 'roc_auc' AS roc_auc
FROM (VALUES (1, 'x', 'x', '{"x": 0.9, "y": 0.1}'::jsonb), (2, 'y', 'x', '{"x": 0.6, "y": 0.4}'),
             (3, 'y', 'y', '{"x": 0.2, "y": 0.8}')) AS v (i, a, p, j);

-- errors
SELECT nb_metrics('x', 'x', -1);
SELECT nb_metrics('x', 'x', 'NaN');
SELECT nb_metrics('x', '{"x": 1}'::jsonb, 'Infinity');
SELECT nb_metrics('x', '[0.5, 0.5]'::jsonb);
SELECT nb_metrics('x', '{}'::jsonb);
SELECT nb_metrics('x', '{"x": "0.5"}'::jsonb);
SELECT nb_metrics('x', '{"x": null}'::jsonb);
SELECT nb_metrics('x', '{"x": 1.5}'::jsonb);
SELECT nb_metrics('x', '{"x": -0.1}'::jsonb);
SELECT nb_metrics('c' || i, 'c0') FROM generate_series(1, 2049) AS i;
SELECT nb_metrics('x', '{"x": 1}'::jsonb, 1, '{"rank": false}'::jsonb);
SELECT nb_metrics('x', '{"x": 1}'::jsonb, 1, '{"ranked": "no"}'::jsonb);
SELECT nb_metrics('x', '{"x": 1}'::jsonb, 1, '[false]'::jsonb);
SELECT nb_metrics(a, '{"x": 1}'::jsonb, 1, o::jsonb)
FROM (VALUES ('x', '{"ranked": false}'), ('x', '{"ranked": true}')) AS v (a, o);
SELECT 'not base64!'::nb_metrics_state;
SELECT encode('not a state', 'base64')::nb_metrics_state;

--
-- Real predictions: a model trained on most of a synthetic corpus (token
-- k<n> says class c<n>, wrongly for a fifth of the rows), scored on all of
-- it.  The label form with nb_predict and the probability form with
-- nb_predict_proba agree on every key they share (the argmax is nb_predict's
-- label, ties included: without fit_prior the documents with no known token
-- have equal probabilities).
--
CREATE TABLE met_docs AS
SELECT i AS id, 'c' || (i % 3) AS label, i % 4 AS segment,
       CASE WHEN i % 97 = 0 THEN ARRAY['unseen' || i]
            ELSE ARRAY['k' || CASE WHEN i % 10 < 3 THEN (i + i % 10) % 3 ELSE i % 3 END,
                       't' || (i % 7), 't' || (i % 11), 'u' || ((i * i) % 101)] END AS tokens,
       (1 + i % 3)::float8 AS w
FROM generate_series(1, 20000) AS i;
CREATE TABLE met_model AS
SELECT nb_train(label, tokens) AS m FROM met_docs WHERE id % 97 <> 0 AND id % 5 <> 0;
CREATE TABLE met_pred AS
SELECT d.id, d.label, d.segment, d.w, nb_predict(m.m, d.tokens, '{"fit_prior": false}') AS predicted,
       nb_predict_proba(m.m, d.tokens, '{"fit_prior": false}') AS proba
FROM met_docs d, met_model m;
ANALYZE met_pred;
-- log probabilities given for probabilities: the hint names the function to use
SELECT nb_metrics(d.label, nb_predict_log_proba(m.m, d.tokens)) FROM met_docs d, met_model m WHERE d.id < 10;
-- ties: the unseen documents have equal probabilities for c0, c1 and c2
SELECT predicted, count(*) FROM met_pred WHERE id % 97 = 0 GROUP BY 1;
SELECT (nb_metrics(label, proba) - '{log_loss,brier,calibration,roc_auc,average_precision}'::text[])
         = nb_metrics(label, predicted) AS same_label_metrics,
       (nb_metrics(label, proba, w) - '{log_loss,brier,calibration,roc_auc,average_precision}'::text[])
         = nb_metrics(label, predicted, w) AS same_weighted
FROM met_pred;

-- the lighter form ({"ranked": false}) keeps no rows: the same metrics but
-- ROC AUC and average precision, which it leaves out; NULL options are the
-- defaults
SELECT nb_metrics(label, proba, 1, '{"ranked": false}'::jsonb)
         = nb_metrics(label, proba) - '{roc_auc,average_precision}'::text[] AS same_unranked,
       nb_metrics(label, proba, w, '{"ranked": false}'::jsonb)
         = nb_metrics(label, proba, w) - '{roc_auc,average_precision}'::text[] AS same_weighted_unranked,
       nb_metrics(label, proba, w, NULL::jsonb) = nb_metrics(label, proba, w) AS null_options
FROM met_pred;

-- GROUP BY: the metrics of each segment in one pass equal those of each alone
CREATE TABLE met_serial AS
SELECT segment, nb_metrics(label, predicted) AS l, nb_metrics(label, proba, w) AS p
FROM met_pred GROUP BY segment;
SELECT g.segment, g.l = (SELECT nb_metrics(label, predicted) FROM met_pred WHERE segment = g.segment) AS same_labels,
       g.p = (SELECT nb_metrics(label, proba, w) FROM met_pred WHERE segment = g.segment) AS same_proba
FROM met_serial g ORDER BY 1;

-- Parallel: forced partial aggregation in the workers, combined in the leader,
-- serialized in between: the same bits as a serial plan, since counts and
-- these weights (multiples of 1/2) add exactly in any order and log loss and
-- Brier are exact sums (src/nb_exact.h), rounded once.  Each parallel result
-- is kept by CREATE TABLE AS, which runs the plan its EXPLAIN shows, and
-- compared afterwards.
CREATE FUNCTION met_same(a jsonb, b jsonb) RETURNS boolean LANGUAGE sql AS $$
  SELECT a::text = b::text $$;
CREATE TABLE met_whole AS
SELECT nb_metrics(label, predicted) AS l, nb_metrics(label, predicted, w) AS lw,
       nb_metrics(label, proba) AS p, nb_metrics(label, proba, w) AS pw
FROM met_pred;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT nb_metrics(label, predicted) AS l, nb_metrics(label, predicted, w) AS lw,
       nb_metrics(label, proba) AS p, nb_metrics(label, proba, w) AS pw
FROM met_pred;
CREATE TABLE met_parallel AS
SELECT nb_metrics(label, predicted) AS l, nb_metrics(label, predicted, w) AS lw,
       nb_metrics(label, proba) AS p, nb_metrics(label, proba, w) AS pw
FROM met_pred;
SELECT q.l = w.l AS same_labels, q.lw = w.lw AS same_weighted_labels,
       met_same(q.p, w.p) AS same_proba, met_same(q.pw, w.pw) AS same_weighted_proba
FROM met_parallel q, met_whole w;
EXPLAIN (COSTS OFF)
SELECT segment, nb_metrics(label, predicted) AS l, nb_metrics(label, proba, w) AS p
FROM met_pred GROUP BY segment;
CREATE TABLE met_parallel_segments AS
SELECT segment, nb_metrics(label, predicted) AS l, nb_metrics(label, proba, w) AS p
FROM met_pred GROUP BY segment;
SELECT q.segment, q.l = s.l AS same_labels, met_same(q.p, s.p) AS same_proba
FROM met_parallel_segments q JOIN met_serial s USING (segment)
ORDER BY 1;
-- States of more rows than a segment of the columns (262144 rows): each
-- worker's is serialized and read back in pieces, and the leader's copies
-- them across segment boundaries.  Scores on a grid of 1000 values (ties).
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE met_large AS
SELECT i, 'c' || (i % 3) AS label,
       jsonb_build_object('c0', ((i * 7919) % 1000 + 500 * (i % 3 = 0)::int) / 1500.0,
                          'c1', ((i * 104729) % 1000 + 500 * (i % 3 = 1)::int) / 1500.0,
                          'c2', ((i * 15485863) % 1000) / 1000.0) AS proba,
       (i % 4)::float8 / 2 AS w
FROM generate_series(1::bigint, 600000) AS i;
CREATE TABLE met_large_serial AS SELECT nb_metrics(label, proba, w) AS pw FROM met_large;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT nb_metrics(label, proba, w) AS pw FROM met_large;
CREATE TABLE met_large_parallel AS SELECT nb_metrics(label, proba, w) AS pw FROM met_large;
SELECT met_same(q.pw, s.pw) AS same_large FROM met_large_parallel q, met_large_serial s;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- and in every order: the rows sorted three ways, and as the table gives them
SELECT count(DISTINCT p) AS probability_results, count(DISTINCT pw) AS weighted_results
FROM (SELECT md5(nb_metrics(label, proba ORDER BY i)::text) AS p,
             md5(nb_metrics(label, proba, w ORDER BY i)::text) AS pw FROM met_large
      UNION ALL
      SELECT md5(nb_metrics(label, proba ORDER BY i DESC)::text),
             md5(nb_metrics(label, proba, w ORDER BY i DESC)::text) FROM met_large
      UNION ALL
      SELECT md5(nb_metrics(label, proba ORDER BY md5(i::text))::text),
             md5(nb_metrics(label, proba, w ORDER BY md5(i::text))::text) FROM met_large
      UNION ALL
      SELECT NULL, md5(pw::text) FROM met_large_serial) r;

-- The shape Citus distributes (its AggregateEnabledCustom): every nb_metrics
-- and nb_grid_metrics aggregate has a combine function and a state type
-- that is not a pseudo-type (internal), so that Citus runs the partial
-- aggregation on the workers and ships the states as text.
SELECT p.proname, count(*) AS forms,
       bool_and(a.aggcombinefn <> 0 AND t.typtype <> 'p') AS distributable,
       string_agg(DISTINCT t.typname, ', ') AS state_type
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_type t ON t.oid = a.aggtranstype
WHERE p.proname IN ('nb_metrics', 'nb_grid_metrics') GROUP BY 1 ORDER BY 1;

-- Partial states the way Citus moves them: each segment's state made on its
-- own (an aggregate without a final function returns the state itself, as
-- Citus's worker_partial_agg), through its text form (the type's output and
-- input functions, as Citus sends it), then combined in two orders (as
-- coord_combine_agg): the same metrics as one pass, bit for bit.  The large
-- table's states hold more rows than a segment of the columns.
CREATE AGGREGATE met_partial(text, text) (SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state);
CREATE AGGREGATE met_partial(text, text, float8) (SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state);
CREATE AGGREGATE met_partial(text, jsonb) (SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state);
CREATE AGGREGATE met_partial(text, jsonb, float8) (SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state);
CREATE AGGREGATE met_combine(nb_metrics_state) (SFUNC = nbc_metrics_combine, STYPE = nb_metrics_state,
	FINALFUNC = nbc_metrics_final);
CREATE TABLE met_states AS
SELECT segment, met_partial(label, predicted)::text AS l, met_partial(label, predicted, w)::text AS lw,
       met_partial(label, proba)::text AS p, met_partial(label, proba, w)::text AS pw
FROM met_pred GROUP BY segment;
SELECT met_same(met_combine(q.l::nb_metrics_state ORDER BY segment), w.l) AS same_labels,
       met_same(met_combine(q.lw::nb_metrics_state ORDER BY segment DESC), w.lw) AS same_weighted_labels,
       met_same(met_combine(q.p::nb_metrics_state ORDER BY segment), w.p) AS same_proba,
       met_same(met_combine(q.p::nb_metrics_state ORDER BY segment DESC), w.p) AS same_proba_reversed,
       met_same(met_combine(q.pw::nb_metrics_state ORDER BY segment % 2, segment DESC), w.pw) AS same_weighted_proba
FROM met_states q, met_whole w GROUP BY w.l, w.lw, w.p, w.pw;
CREATE TABLE met_large_states AS
SELECT i % 3 AS part, met_partial(label, proba, w)::text AS pw FROM met_large GROUP BY 1;
SELECT met_same(met_combine(q.pw::nb_metrics_state ORDER BY part), s.pw) AS same_large,
       met_same(met_combine(q.pw::nb_metrics_state ORDER BY part DESC), s.pw) AS same_large_reversed
FROM met_large_states q, met_large_serial s GROUP BY s.pw;
-- nb_grid_metrics' states the same way: one per segment through the text
-- form, combined in two orders, equal to one pass; a grid's state is not
-- nb_metrics' own
CREATE AGGREGATE met_grid_partial(nb_model, text[], text, jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state);
CREATE AGGREGATE met_grid_combine(nb_metrics_state) (SFUNC = nbc_grid_metrics_combine,
	STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final);
SET nbc.unknown_features = 'ignore';
CREATE TABLE met_grid_states AS
SELECT d.segment, met_grid_partial(m.m, d.tokens, d.label,
         '{"{\"alpha\": 0.5}", "{\"kind\": \"bernoulli\"}", "{\"kind\": \"complement\"}"}')::text AS s
FROM met_docs d, met_model m GROUP BY d.segment;
SELECT (SELECT met_grid_combine(s::nb_metrics_state ORDER BY segment) FROM met_grid_states)::text = w.a::text AS same_grid,
       (SELECT met_grid_combine(s::nb_metrics_state ORDER BY segment DESC) FROM met_grid_states)::text = w.a::text AS same_grid_reversed
FROM (SELECT nb_grid_metrics(m.m, d.tokens, d.label,
        '{"{\"alpha\": 0.5}", "{\"kind\": \"bernoulli\"}", "{\"kind\": \"complement\"}"}') AS a
      FROM met_docs d, met_model m) w;
RESET nbc.unknown_features;
SELECT met_combine(s::nb_metrics_state) FROM met_grid_states;
-- states of other forms do not combine
SELECT met_combine(s) FROM (SELECT l::nb_metrics_state AS s FROM met_states
                            UNION ALL SELECT p::nb_metrics_state FROM met_states) u;

-- the whole corpus's metrics, as sklearn 1.2.1 gives them for these rows (exported;
-- parity on real corpora to 1e-12: test/parity)
SELECT kind, class, predicted, round(precision::numeric, 6) AS precision, round(recall::numeric, 6) AS recall,
       round(f1::numeric, 6) AS f1, support, round(roc_auc::numeric, 6) AS roc_auc,
       round(average_precision::numeric, 6) AS average_precision, count
FROM nb_metrics_rows((SELECT p FROM met_whole));

--
-- labels that cannot be compared (#42): numeric(3,1) labels at training and
-- integer ones at evaluation never meet ("1.0" against "1"), a WARNING with
-- the labels of both sides; an actual label no row's probabilities name
-- (the wrong actual column) is one the model never had; the probabilities
-- on the actual side (the arguments swapped) are an error by their type,
-- jsonb; cast to text they are labels that never meet the predicted ones
--
CREATE TABLE metrics_mix AS
SELECT (i % 2)::numeric(3,1) AS y, i % 2 AS yi, ARRAY['w' || (i % 2), 'x' || (i % 5)] AS f
FROM generate_series(1, 50) i;
CREATE TABLE metrics_mix_model AS SELECT nb_train(y, f) AS model FROM metrics_mix;
-- never meet: accuracy 0, with the WARNING, for labels and probabilities alike
SELECT nb_metrics(yi, nb_predict(model, f)) ->> 'accuracy' AS accuracy FROM metrics_mix, metrics_mix_model;
SELECT nb_metrics(yi, nb_predict_proba(model, f)) ->> 'accuracy' AS accuracy FROM metrics_mix, metrics_mix_model;
-- the same column of the same type: quiet (the model predicts every row's label)
SELECT nb_metrics(y, nb_predict(model, f)) ->> 'accuracy' AS accuracy FROM metrics_mix, metrics_mix_model;
SELECT nb_metrics(y, nb_predict_proba(model, f)) ->> 'accuracy' AS accuracy FROM metrics_mix, metrics_mix_model;
-- half the rows with an actual label the model never had: the 25 rows of
-- "zz" count as wrong, accuracy 0.5, with the WARNING naming "zz"
SELECT nb_metrics(CASE WHEN yi = 0 THEN 'zz' ELSE y::text END, nb_predict_proba(model, f)) ->> 'accuracy' AS accuracy
FROM metrics_mix, metrics_mix_model;
-- the lighter form keeps no rows: it cannot tell, and stays quiet
SELECT nb_metrics(CASE WHEN yi = 0 THEN 'zz' ELSE y::text END, nb_predict_proba(model, f), 1, '{"ranked": false}') ->> 'accuracy' AS accuracy
FROM metrics_mix, metrics_mix_model;
-- swapped: probabilities as the actual label, as jsonb (an error) or as
-- their text (labels that are never predicted: the WARNING)
SELECT nb_metrics(nb_predict_proba(model, f), y::text) FROM metrics_mix, metrics_mix_model;
SELECT nb_metrics(nb_predict_proba(model, f)::text, y::text) ->> 'accuracy' AS accuracy FROM metrics_mix, metrics_mix_model;
DROP TABLE metrics_mix, metrics_mix_model;

--
-- rows of a NULL actual label are skipped, as SQL's aggregates skip NULLs,
-- and counted beside rows (#42): 1 row in 10 here, in a parallel plan too
-- (the count travels in the partial states); NULL over no other row
--
SELECT nb_metrics(a, p) -> 'rows' AS rows, nb_metrics(a, p) -> 'rows_null_actual' AS rows_null_actual
FROM (VALUES ('x', 'x'), (NULL, 'x'), ('y', 'x'), (NULL, NULL)) v(a, p);
SELECT nb_metrics(a, p) IS NULL AS no_metrics FROM (VALUES (NULL::text, 'x')) v(a, p);
-- none skipped: no key
SELECT nb_metrics(a, p) ? 'rows_null_actual' AS has_key FROM (VALUES ('x', 'x')) v(a, p);
CREATE TABLE metrics_nulls AS
SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE 'c' || (i % 3) END AS a, 'c' || (i % 2) AS p,
       ('{"c0": 0.4, "c1": 0.3, "c2": 0.3}')::jsonb AS proba
FROM generate_series(1, 20000) i;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ALTER TABLE metrics_nulls SET (parallel_workers = 2);
EXPLAIN (COSTS OFF) SELECT nb_metrics(a, p) FROM metrics_nulls;
SELECT nb_metrics(a, p) -> 'rows' AS rows, nb_metrics(a, p) -> 'rows_null_actual' AS rows_null_actual,
       (SELECT count(*) FROM metrics_nulls WHERE a IS NULL) AS null_rows
FROM metrics_nulls;
SELECT nb_metrics(a, proba) -> 'rows_null_actual' AS ranked,
       nb_metrics(a, proba, 1, '{"ranked": false}') -> 'rows_null_actual' AS unranked
FROM metrics_nulls;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE metrics_nulls;
