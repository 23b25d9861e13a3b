-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- The casts to and from text: the same conversions as the type's output
-- and input functions, written straight into (and read in slices from) the
-- text value, so that a big model's text form is made and read with checks
-- for a cancel throughout.  Assignment and explicit, as the I/O conversion
-- casts they replace.
CREATE FUNCTION nb_model_text(nb_model) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_model_to_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model(text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_model_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (nb_model AS text) WITH FUNCTION nb_model_text(nb_model) AS ASSIGNMENT;
CREATE CAST (text AS nb_model) WITH FUNCTION nb_model(text);

-- Unlearning: nb_subtract.
-- The model of the rows of a without those of b (which must be among them),
-- the inverse of nb_merge.  Not STRICT: NULL b gives a (and NULL a, NULL).
CREATE FUNCTION nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_subtract(nb_model, nb_model) IS 'model of the rows of the first model without those of the second (the inverse of nb_merge; NULL when nothing is left)';


-- Evaluation: nb_metrics.
-- Classification metrics of any query's predictions as jsonb (pg_metrics.c):
-- from labels, or from nb_predict_proba's probabilities (adding log loss,
-- Brier score, ROC AUC and average precision).  Internal state, so
-- parallel aggregation serializes partial states.
CREATE FUNCTION nb_metrics_label_transfn(internal, text, text) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_label_transfn(internal, text, text, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nb_metrics_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION nb_metrics_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION nb_metrics_final(internal) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_metrics(actual text, predicted text) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, predicted text, weight float8) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

-- A metrics value as rows for psql: one per class (kind 'class'), the
-- macro and weighted averages, then the confusion matrix (kind
-- 'confusion': class is the actual label, predicted the predicted one).
CREATE FUNCTION nb_metrics_rows(metrics jsonb)
	RETURNS TABLE (kind text, class text, predicted text, "precision" float8, recall float8,
				   f1 float8, support float8, roc_auc float8, average_precision float8,
				   count float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$
	SELECT kind, class, predicted, precision, recall, f1, support, roc_auc,
		   average_precision, count
	FROM (
		SELECT 1 AS part, 'class' AS kind, c.key AS class, NULL::text AS predicted,
			   (c.value ->> 'precision')::float8 AS precision,
			   (c.value ->> 'recall')::float8 AS recall,
			   (c.value ->> 'f1')::float8 AS f1,
			   (c.value ->> 'support')::float8 AS support,
			   (metrics -> 'roc_auc' -> 'classes' ->> c.key)::float8 AS roc_auc,
			   (metrics -> 'average_precision' -> 'classes' ->> c.key)::float8 AS average_precision,
			   NULL::float8 AS count
		FROM jsonb_each(metrics -> 'classes') AS c
		UNION ALL
		SELECT 2, a.kind, NULL, NULL, (a.value ->> 'precision')::float8,
			   (a.value ->> 'recall')::float8, (a.value ->> 'f1')::float8,
			   (SELECT sum((c.value ->> 'support')::float8)
				FROM jsonb_each(metrics -> 'classes') AS c),
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'roc_auc' ->> 'macro')::float8 END,
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'average_precision' ->> 'macro')::float8 END,
			   NULL
		FROM (VALUES ('macro', metrics -> 'macro'), ('weighted', metrics -> 'weighted'))
			AS a (kind, value)
		UNION ALL
		SELECT 3, 'confusion', a.key, p.key, NULL, NULL, NULL, NULL, NULL, NULL,
			   p.value::text::float8
		FROM jsonb_each(metrics -> 'confusion') AS a, jsonb_each(a.value) AS p
	) AS r
	ORDER BY part, kind, class COLLATE "C", predicted COLLATE "C"
	$$;



-- Cross-validation and tuning.



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.
-- Not STRICT, as the scoring functions: NULL options mean the defaults, NULL
-- against the runner-up, NULL top_k every row; a NULL model or NULL features
-- give no rows.
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;
CREATE FUNCTION nb_feature_log_prob(model nb_model, options jsonb DEFAULT NULL)
	RETURNS TABLE(feature text, value text, label text, log_prob float8)
	AS 'MODULE_PATHNAME', 'nb_feature_log_prob' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;

COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) IS 'contribution of each token and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) IS 'contribution of each lexeme and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) IS 'contribution of each feature and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) IS 'contribution of each element and the prior to the log odds of the predicted class against the runner-up, largest first';
COMMENT ON FUNCTION nb_feature_log_prob(nb_model, jsonb) IS 'smoothed log probability of every token or value per class (Gaussian: mean and variance) as the scorer uses it';



-- Smaller models: nb_prune.
CREATE FUNCTION nb_prune(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_prune' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_prune(nb_model, jsonb) IS 'the model trained on the same rows without the tokens and features that options top_k, min_documents and max_document_fraction leave out';


