-- nbc 0.8.0 -> 0.9.0: text in, with the tokenizer kept inside the model;
-- nothing silent (unknown features, unrelated merges); options that travel
-- with the model; results shaped for psql.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.9.0'" to load this file. \quit

-- Rows the model knows nothing of: nbc.unknown_features (a setting, see
-- pg_unknown.c) says what scoring does with them, and nb_coverage gives
-- the share of a row's features that the model knows (pg_coverage.c).
-- STRICT: a NULL model or features give NULL.
CREATE FUNCTION nb_coverage(model nb_model, features text[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features tsvector) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features jsonb) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_jsonb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features float8[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nb_scoring_support;

COMMENT ON FUNCTION nb_coverage(nb_model, text[]) IS 'share of the row''s tokens (each occurrence counted) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, tsvector) IS 'share of the row''s lexemes (each position counted) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, jsonb) IS 'share of the row''s features (bag tokens with their counts, categorical values, numbers, booleans; null values left out) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, float8[]) IS 'share of the row''s non-NULL elements that the model knows: 1, or 0 when every element is NULL';
