-- nbc's objects, 20: scoring.  nb_predict, nb_predict_proba,
-- nb_predict_log_proba, nb_predict_top and nb_probability for every feature
-- type, with the planner support that prepares a model once per query.

-- nbc_query_constant(model, serial) is the mark the planner puts on a scoring call's
-- model argument when it proved that argument the same value for the whole
-- query (an uncorrelated scalar subquery, a one-row CTE that is not
-- inlined): the call then prepares the model on its first row and skips
-- comparing the model's bytes on the others.  Calls a user writes are
-- removed by the planner (its support function), so the mark cannot be
-- forged.
CREATE FUNCTION nbc_query_constant_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_query_constant_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nbc_query_constant(model nb_model, serial boolean) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_query_constant' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_query_constant_support;

-- the planner support function of every function that scores rows
CREATE FUNCTION nbc_scoring_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_scoring_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Scoring.  Not STRICT, so that NULL options mean the defaults; a NULL model
-- or NULL features give NULL.
CREATE FUNCTION nb_predict(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict(nb_model, text[], jsonb) IS 'most probable class of a bag of tokens';

CREATE FUNCTION nb_predict(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict(nb_model, tsvector, jsonb) IS 'most probable class of a tsvector';

CREATE FUNCTION nb_predict_proba(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_proba(nb_model, text[], jsonb) IS 'posterior probability of every class, as {label: p}';

CREATE FUNCTION nb_predict_proba(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_proba(nb_model, tsvector, jsonb) IS 'posterior probability of every class, as {label: p}';

CREATE FUNCTION nb_predict_log_proba(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, text[], jsonb) IS 'natural-log posterior of every class, as {label: log p}';

CREATE FUNCTION nb_predict_log_proba(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, tsvector, jsonb) IS 'natural-log posterior of every class, as {label: log p}';

CREATE FUNCTION nb_predict(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict(nb_model, jsonb, jsonb) IS 'most probable class of a row of named features (jsonb object)';

CREATE FUNCTION nb_predict(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict(nb_model, float8[], jsonb) IS 'most probable class of a vector of Gaussian features';

CREATE FUNCTION nb_predict_proba(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_proba(nb_model, jsonb, jsonb) IS 'posterior probability of every class, as {label: p}';

CREATE FUNCTION nb_predict_proba(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_proba(nb_model, float8[], jsonb) IS 'posterior probability of every class, as {label: p}';

CREATE FUNCTION nb_predict_log_proba(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, jsonb, jsonb) IS 'natural-log posterior of every class, as {label: log p}';

CREATE FUNCTION nb_predict_log_proba(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, float8[], jsonb) IS 'natural-log posterior of every class, as {label: log p}';

-- nb_predict_top: the k most probable classes of a row as rows of (label,
-- probability float8), most probable first, ties in byte order of the labels
-- (nb_predict's choice first), so that a view selects a label and its
-- probability with one call.  Not STRICT, as the other scoring functions:
-- NULL options are the defaults, NULL k every class; a NULL model or NULL
-- features give no rows.  Complement naive Bayes ranks the classes but has
-- no probabilities: its probability is NULL.
CREATE FUNCTION nb_predict_top(model nb_model, features text[], k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_top(nb_model, text[], integer, jsonb) IS 'the k most probable classes of a bag of tokens with their probabilities, most probable first';

CREATE FUNCTION nb_predict_top(model nb_model, features tsvector, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_top(nb_model, tsvector, integer, jsonb) IS 'the k most probable classes of a tsvector with their probabilities, most probable first';

CREATE FUNCTION nb_predict_top(model nb_model, features jsonb, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_top(nb_model, jsonb, integer, jsonb) IS 'the k most probable classes of a row of named features with their probabilities, most probable first';

CREATE FUNCTION nb_predict_top(model nb_model, features float8[], k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_top(nb_model, float8[], integer, jsonb) IS 'the k most probable classes of a vector of Gaussian features with their probabilities, most probable first';

CREATE FUNCTION nb_predict(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict(nb_model, text, jsonb) IS 'most probable class of a document of text, tokenized with the model''s tokenizer';

CREATE FUNCTION nb_predict_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_proba(nb_model, text, jsonb) IS 'posterior probability of every class of a document of text, as {label: p}';

CREATE FUNCTION nb_predict_log_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, text, jsonb) IS 'natural-log posterior of every class of a document of text, as {label: log p}';

CREATE FUNCTION nb_predict_top(model nb_model, body text, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_predict_top(nb_model, text, integer, jsonb) IS 'the k most probable classes of a document of text with their probabilities, most probable first';

-- One class's probability as float8 (#28): nb_probability gives the double
-- a view's column or a sum would read from nb_predict_proba's object,
-- without making the object of every class (a fifth of scoring a held-out
-- split end to end).
CREATE FUNCTION nb_probability(model nb_model, features text[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, text[], text, jsonb) IS 'posterior probability of one class of a bag of tokens, as nb_predict_proba gives it';

CREATE FUNCTION nb_probability(model nb_model, features tsvector, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, text, jsonb) IS 'posterior probability of one class of a tsvector, as nb_predict_proba gives it';

CREATE FUNCTION nb_probability(model nb_model, features jsonb, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, text, jsonb) IS 'posterior probability of one class of a row of named features, as nb_predict_proba gives it';

CREATE FUNCTION nb_probability(model nb_model, features float8[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, float8[], text, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, as nb_predict_proba gives it';

CREATE FUNCTION nb_probability(model nb_model, body text, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, text, text, jsonb) IS 'posterior probability of one class of a document of text, as nb_predict_proba gives it';

-- A label of any type (label::text, the form nb_train stores), as nb_train
-- and nb_metrics take one; STABLE, as the cast to text of some types is
-- (timestamptz).  A text literal or column chooses the text form above.
CREATE FUNCTION nb_probability(model nb_model, features text[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, text[], anynonarray, jsonb) IS 'posterior probability of one class of a bag of tokens, the class given as a label of any type (label::text)';

CREATE FUNCTION nb_probability(model nb_model, features tsvector, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, anynonarray, jsonb) IS 'posterior probability of one class of a tsvector, the class given as a label of any type (label::text)';

CREATE FUNCTION nb_probability(model nb_model, features jsonb, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, anynonarray, jsonb) IS 'posterior probability of one class of a row of named features, the class given as a label of any type (label::text)';

CREATE FUNCTION nb_probability(model nb_model, features float8[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, float8[], anynonarray, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, the class given as a label of any type (label::text)';

CREATE FUNCTION nb_probability(model nb_model, body text, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_probability(nb_model, text, anynonarray, jsonb) IS 'posterior probability of one class of a document of text, the class given as a label of any type (label::text)';
