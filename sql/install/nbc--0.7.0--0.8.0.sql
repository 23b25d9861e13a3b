-- nbc 0.7.0 -> 0.8.0: a model the query computes once scores as fast as a
-- stored one.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.8.0'" to load this file. \quit

-- nb_query_constant(model) is the mark the planner puts on a scoring call's
-- model argument when it proved that argument the same value for the whole
-- query (an uncorrelated scalar subquery, a one-row CTE that is not
-- inlined): the call then prepares the model on its first row and skips
-- comparing the model's bytes on the others.  Calls a user writes are
-- removed by the planner (its support function), so the mark cannot be
-- forged.
CREATE FUNCTION nb_query_constant_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_query_constant(model nb_model, serial boolean) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_query_constant_support;

-- the planner support function of every function that scores rows
CREATE FUNCTION nb_scoring_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER FUNCTION nb_predict(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_proba(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, text[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, tsvector, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, jsonb, jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_predict_log_proba(nb_model, float8[], jsonb) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) SUPPORT nb_scoring_support;
ALTER FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) SUPPORT nb_scoring_support;
