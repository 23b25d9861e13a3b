--
-- nonfinite: no jsonb result of nbc holds NaN or an infinity (JSON has
-- neither: such a value cannot be read back, and a dump that holds it cannot
-- be restored).  Counts, values and weights so large that float8 overflows
-- give an error, 22003, never a silently wrong number.
--

-- what a query's jsonb column gives: every value the same after a round trip
-- through text, or the error's SQLSTATE
CREATE FUNCTION nf_check(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r record;
  n int := 0;
BEGIN
  FOR r IN EXECUTE format('SELECT (q.*)::text AS t, to_jsonb(q.*) AS j FROM (%s) q', query) LOOP
    IF (r.j::text)::jsonb IS DISTINCT FROM r.j THEN
      RETURN 'changed by a round trip';
    END IF;
    n := n + 1;
  END LOOP;
  RETURN format('%s rows, every one the same after a round trip', n);
EXCEPTION WHEN OTHERS THEN
  RETURN 'error ' || SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE nf_rows (label text, bag jsonb, mixed jsonb);
INSERT INTO nf_rows VALUES
  ('a', '{"bag": {"x": 2, "y": 1}}'::jsonb, '{"v": 1.5, "k": "p"}'::jsonb),
  ('a', '{"bag": {"x": 1, "z": 1}}'::jsonb, '{"v": 2.5, "k": "q"}'::jsonb),
  ('b', '{"bag": {"y": 3, "z": 1}}'::jsonb, '{"v": 7.0, "k": "p"}'::jsonb),
  ('b', '{"bag": {"y": 1}}'::jsonb, '{"v": 9.0, "k": "q"}'::jsonb);
CREATE TABLE nf_models AS
SELECT (SELECT nb_train(label, bag) FROM nf_rows) AS bag,
       (SELECT nb_train(label, mixed) FROM nf_rows) AS mixed;

-- scoring: counts and values near the top of float8
SELECT nf_check($$SELECT nb_predict_proba(bag, '{"bag": {"x": 1e308}}'::jsonb, '{"kind": "dcm"}'::jsonb) FROM nf_models$$) AS dcm_huge_count;
SELECT nf_check($$SELECT nb_predict(bag, '{"bag": {"x": 1e308}}'::jsonb, '{"kind": "dcm"}'::jsonb) FROM nf_models$$) AS dcm_predict;
SELECT nf_check($$SELECT nb_predict_proba(bag, '{"bag": {"x": 1e308, "y": 1e308}}'::jsonb) FROM nf_models$$) AS multinomial_sum_overflows;
SELECT nf_check($$SELECT nb_predict_log_proba(bag, '{"bag": {"x": 1e308, "y": 1e308}}'::jsonb, '{"kind": "complement"}'::jsonb) FROM nf_models$$) AS complement;
SELECT nf_check($$SELECT nb_predict_proba(bag, '{"bag": {"x": 1e300}}'::jsonb) FROM nf_models$$) AS multinomial_finite;
SELECT nf_check($$SELECT nb_predict_proba(bag, '{"bag": {"x": 1e300}}'::jsonb, '{"kind": "bernoulli"}'::jsonb) FROM nf_models$$) AS bernoulli;
SELECT nf_check($$SELECT nb_predict_proba(mixed, '{"v": 1e308, "k": "p"}'::jsonb) FROM nf_models$$) AS gaussian_huge_value;
SELECT nf_check($$SELECT nb_predict_log_proba(mixed, '{"v": -1e300}'::jsonb) FROM nf_models$$) AS gaussian_log;
SELECT nf_check($$SELECT nb_predict_proba(bag, '{"bag": {"x": 1e308}}'::jsonb, '{"class_prior": {"a": 0.5, "b": 0.5}}'::jsonb) FROM nf_models$$) AS with_class_prior;
SELECT nf_check($$SELECT e.* FROM nf_models, nb_explain(bag, '{"bag": {"x": 1e308, "y": 1e308}}'::jsonb) e$$) AS explain;

-- evaluation: weights whose sums overflow
SELECT nf_check($$SELECT nb_metrics(a, b, 1e308) FROM (VALUES ('a', 'a'), ('a', 'b'), ('b', 'b')) v(a, b)$$) AS metrics_labels;
SELECT nf_check($$SELECT nb_metrics(a, p::jsonb, 1e308)
                  FROM (VALUES ('a', '{"a": 0.5, "b": 0.5}'::jsonb), ('a', '{"a": 1, "b": 0}'::jsonb),
                               ('b', '{"a": 0, "b": 1}'::jsonb)) v(a, p)$$) AS metrics_probabilities;
SELECT nf_check($$SELECT nb_metrics(a, b, 1e307) FROM (VALUES ('a', 'a'), ('a', 'b'), ('b', 'b')) v(a, b)$$) AS metrics_finite;
SELECT nf_check($$SELECT nb_grid_metrics(m.bag, r.bag, r.label, ARRAY['{}'::jsonb, '{"kind": "dcm"}'])
                  FROM nf_models m, (VALUES ('a', '{"bag": {"x": 1e308, "y": 1e308}}'::jsonb)) r(label, bag)$$) AS grid;
SELECT nf_check($$SELECT nb_grid_metrics(m.bag, r.bag, r.label, ARRAY['{}'::jsonb, '{"kind": "dcm"}'])
                  FROM nf_models m, nf_rows r$$) AS grid_finite;
CREATE TABLE nf_cv AS SELECT label, bag FROM nf_rows, generate_series(1, 3);
INSERT INTO nf_cv VALUES ('a', '{"bag": {"x": 1e308, "y": 1e308}}'::jsonb);
SELECT nf_check($$SELECT options, accuracy, log_loss FROM nb_cross_validate('nf_cv', 'label', 'bag', 3)$$) AS cross_validate;

-- models: training refuses what overflows; what it keeps reads back
SELECT nf_check($$SELECT nb_train(label, bag, 1e308) FROM nf_rows$$) AS train_weights_overflow;
-- and what underflows: half a token in a row of weight 5e-324 is no float8 but 0
SELECT nf_check($$SELECT nb_train(label, '{"bag": {"x": 0.5}}'::jsonb, 5e-324) FROM nf_rows$$) AS train_weights_underflow;
SELECT nf_check($$SELECT nb_train(label, bag, 5e-324)::jsonb FROM nf_rows$$) AS tiny_weights_as_jsonb;
SELECT nf_check($$SELECT nb_info(nb_train(label, bag, 1e307)) FROM nf_rows$$) AS info;
SELECT nf_check($$SELECT nb_train(label, bag, 1e307)::jsonb FROM nf_rows$$) AS model_as_jsonb;
SELECT nf_check($$SELECT nb_train(label, mixed, 1e307)::jsonb FROM nf_rows$$) AS mixed_as_jsonb;
SELECT nf_check($$SELECT nb_info(nb_train(label, mixed)) FROM (VALUES ('a', '{"v": 1e308}'::jsonb), ('a', '{"v": -1e308}'::jsonb)) v(label, mixed)$$) AS gaussian_variance_overflows;
SELECT nf_check($$SELECT nb_grid_default(nb_train(label, mixed, 1e307)) FROM nf_rows$$) AS grid_default;

DROP FUNCTION nf_check(text);
DROP TABLE nf_rows, nf_models, nf_cv;
