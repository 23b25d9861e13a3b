-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- Unlearning: nb_subtract.



-- Evaluation: nb_metrics.



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



