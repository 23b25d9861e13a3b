-- nbc 0.3.0 -> 0.4.0: the analyst's loop (unlearning, evaluation,
-- cross-validation), explaining and pruning models.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.4.0'" to load this file. \quit

-- Unlearning: nb_subtract.
-- The model of the rows of a without those of b (which must be among them),
-- the inverse of nb_merge.  Not STRICT: NULL b gives a (and NULL a, NULL).
CREATE FUNCTION nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_subtract(nb_model, nb_model) IS 'model of the rows of the first model without those of the second (the inverse of nb_merge; NULL when nothing is left)';


-- Evaluation: nb_metrics.



-- Cross-validation and tuning.



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.



-- Smaller models: nb_prune.



