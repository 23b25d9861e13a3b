\echo Use "CREATE EXTENSION nbc" to load this file. \quit

-- The model type.  Its text form is base64 of the versioned binary format, so
-- model::text::nb_model, pg_dump and Citus' text transport are exact.
CREATE TYPE nb_model;

CREATE FUNCTION nb_model_in(cstring) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model_out(nb_model) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model_recv(internal) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model_send(nb_model) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE nb_model (
	INPUT = nb_model_in,
	OUTPUT = nb_model_out,
	RECEIVE = nb_model_recv,
	SEND = nb_model_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);
COMMENT ON TYPE nb_model IS 'naive Bayes model: sparse per-class token statistics';

-- Transition functions.  Not STRICT: the first non-NULL row must create the
-- state, and rows with a NULL label or NULL features are skipped.
CREATE FUNCTION nb_train_transfn(nb_model, text, text[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, text[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, tsvector) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, tsvector, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;


-- Merging, also the combine function of every nbc aggregate and the
-- transition function of the aggregate nb_merge(nb_model).  Not STRICT:
-- NULL is the empty model, so merging in an empty batch keeps the model.
CREATE FUNCTION nb_merge(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label text, features text[]) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features text[], weight float8) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features tsvector) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features tsvector, weight float8) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_merge(nb_model) (
	SFUNC = nb_merge, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

-- Scoring.  Not STRICT, so that NULL options mean the defaults; a NULL model
-- or NULL features give NULL.
CREATE FUNCTION nb_predict(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_array' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_proba(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_array' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_proba(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_log_proba(model nb_model, features text[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_array' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_log_proba(model nb_model, features tsvector, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Inspection.
CREATE FUNCTION nb_mutual_info(model nb_model) RETURNS TABLE(feature text, mutual_info float8)
	AS 'MODULE_PATHNAME', 'nb_mutual_info_srf' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
CREATE FUNCTION nb_classes(model nb_model) RETURNS TABLE(label text, documents float8, prior float8)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;
CREATE FUNCTION nb_info(model nb_model) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nb_model_to_jsonb(nb_model) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (nb_model AS jsonb) WITH FUNCTION nb_model_to_jsonb(nb_model);

COMMENT ON FUNCTION nb_merge(nb_model, nb_model) IS 'model trained on the union of the rows of two models (NULL is the empty model)';
COMMENT ON FUNCTION nb_predict(nb_model, text[], jsonb) IS 'most probable class of a bag of tokens';
COMMENT ON FUNCTION nb_predict(nb_model, tsvector, jsonb) IS 'most probable class of a tsvector';
COMMENT ON FUNCTION nb_predict_proba(nb_model, text[], jsonb) IS 'posterior probability of every class, as {label: p}';
COMMENT ON FUNCTION nb_predict_proba(nb_model, tsvector, jsonb) IS 'posterior probability of every class, as {label: p}';
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, text[], jsonb) IS 'natural-log posterior of every class, as {label: log p}';
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, tsvector, jsonb) IS 'natural-log posterior of every class, as {label: log p}';
COMMENT ON FUNCTION nb_mutual_info(nb_model) IS 'mutual information (nats) between each token''s presence and the class, highest first';
COMMENT ON FUNCTION nb_classes(nb_model) IS 'classes with their (weighted) document counts and maximum-likelihood priors';
COMMENT ON FUNCTION nb_info(nb_model) IS 'summary of a model: classes, vocabulary, documents, tokens, format version, bytes';
COMMENT ON FUNCTION nb_model_to_jsonb(nb_model) IS 'every count of a model in readable form';
