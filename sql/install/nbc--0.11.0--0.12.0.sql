-- nbc 0.11.0 -> 0.12.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.12.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- One class's probability as float8 (#28): a view's column or a sum reads
-- one class of nb_predict_proba's object, which made the object of every
-- class, wrote each number as numeric and read one back as text per row
-- (a fifth of scoring a held-out split end to end).  nb_probability gives
-- the same double without the object.
CREATE FUNCTION nb_probability(model nb_model, features text[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features tsvector, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features jsonb, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features float8[], label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, body text, label text, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_probability(nb_model, text[], text, jsonb) IS 'posterior probability of one class of a bag of tokens, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, text, jsonb) IS 'posterior probability of one class of a tsvector, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, text, jsonb) IS 'posterior probability of one class of a row of named features, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, float8[], text, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, as nb_predict_proba gives it';
COMMENT ON FUNCTION nb_probability(nb_model, text, text, jsonb) IS 'posterior probability of one class of a document of text, as nb_predict_proba gives it';
