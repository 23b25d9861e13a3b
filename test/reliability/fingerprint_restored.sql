-- The objects of fixture.sql besides rel_models that a restore rebuilds: the
-- array of models, the materialized view, and the index on a prediction
-- (used with sequential scans off).
SELECT concat_ws(' ', 'array', id, md5(ms::text), array_length(ms, 1)) FROM rel_model_arrays ORDER BY id;
SELECT concat_ws(' ', 'per_label', label, md5(nbc_model_send(m))) FROM rel_per_label ORDER BY label;
SET enable_seqscan = off;
SELECT concat_ws(' ', 'indexed', string_agg(name || '=' || nb_predict(m, ARRAY['w1', 'w2', 'w3']), ',' ORDER BY name))
FROM rel_models WHERE kind = 'tokens' AND nb_predict(m, ARRAY['w1', 'w2', 'w3']) IS NOT NULL;
