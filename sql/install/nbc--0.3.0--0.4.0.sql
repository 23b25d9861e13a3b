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



-- Evaluation: nb_metrics.



-- Cross-validation and tuning.



-- Explaining and inspecting: nb_explain, nb_feature_log_prob.



-- Smaller models: nb_prune.



