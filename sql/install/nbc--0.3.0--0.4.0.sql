-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- Unlearning: nb_subtract.



-- Evaluation: nb_metrics.



-- Cross-validation and tuning.



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.



-- Smaller models: nb_prune.
CREATE FUNCTION nb_prune(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_prune' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_prune(nb_model, jsonb) IS 'the model trained on the same rows without the tokens and features that options top_k, min_documents and max_document_fraction leave out';


