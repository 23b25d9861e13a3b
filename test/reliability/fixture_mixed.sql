-- Models of the feature types nbc 0.2.0 added (jsonb: categorical, Gaussian,
-- boolean; float8[]: Gaussian), on top of fixture.sql.  Sums of floats
-- depend on the order of the rows: ORDER BY id fixes it.
SET max_parallel_workers_per_gather = 0;
INSERT INTO rel_models
SELECT 'jsonb', 'jsonb', nb_train(label, jsonb_strip_nulls(jsonb_build_object(
		'color', (ARRAY['red', 'green', 'blue', 'grün'])[1 + id % 4],
		'size', CASE WHEN id % 9 <> 0 THEN (id % 11) * 0.5 + sqrt(id) END,
		'ok', id % 4 = 0)) ORDER BY id)
FROM rel_docs
UNION ALL
SELECT 'float8', 'float8', nb_train(label, ARRAY[(id % 13)::float8, (id % 7) * 1.5, sqrt(id)], weight ORDER BY id)
FROM rel_docs;
