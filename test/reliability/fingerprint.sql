-- Everything a restored or updated database must reproduce exactly: each
-- model's bytes (binary, text and jsonb forms), its summary, classes and
-- mutual information, and its predictions for a probe set.  One line per
-- model and aspect, in a fixed order, so two runs compare with diff.
SET max_parallel_workers_per_gather = 0;
SELECT concat_ws(' ', 'model', name, kind, md5(nbc_model_send(m)), md5(m::text), md5(m::jsonb::text), nb_info(m))
FROM rel_models ORDER BY name;
SELECT concat_ws(' ', 'classes', name, md5(string_agg(concat_ws(' ', c.label, c.documents, c.prior), '|' ORDER BY c.label)))
FROM rel_models, nb_classes(m) c GROUP BY name ORDER BY name;
SELECT concat_ws(' ', 'mutual_info', name, md5(string_agg(concat_ws(' ', i.feature, i.mutual_info), '|' ORDER BY i.mutual_info DESC, i.feature)))
FROM rel_models, nb_mutual_info(m) i GROUP BY name ORDER BY name;
WITH probes AS (
	SELECT g, ARRAY['w' || g, 'w' || (g * 7), 'unseen' || g, 'naïve'] AS toks,
		jsonb_build_object('color', (ARRAY['red', 'green', 'violet'])[1 + g % 3], 'size', g * 0.3, 'ok', g % 2 = 0) AS doc,
		ARRAY[g::float8, g * 0.7, sqrt(g)] AS vec
	FROM generate_series(0, 29) g)
SELECT concat_ws(' ', 'predict', name, md5(string_agg(
	CASE r.kind
	WHEN 'tokens' THEN concat_ws(' ', nb_predict(m, toks), nb_predict_proba(m, toks),
		nb_predict_log_proba(m, toks, '{"alpha": 0.5}'))
	WHEN 'tsvector' THEN concat_ws(' ', nb_predict(m, to_tsvector('simple', array_to_string(toks, ' '))),
		nb_predict_proba(m, to_tsvector('simple', array_to_string(toks, ' '))))
	WHEN 'jsonb' THEN concat_ws(' ', nb_predict(m, doc), nb_predict_proba(m, doc), nb_predict_log_proba(m, doc))
	WHEN 'float8' THEN concat_ws(' ', nb_predict(m, vec), nb_predict_proba(m, vec), nb_predict_log_proba(m, vec))
	END, '|' ORDER BY g)))
FROM rel_models r, probes GROUP BY name ORDER BY name;
