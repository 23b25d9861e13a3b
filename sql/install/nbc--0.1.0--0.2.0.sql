-- nbc 0.1.0 -> 0.2.0: mixed feature types (jsonb and float8[] features).
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.2.0'" to load this file. \quit

COMMENT ON TYPE nb_model IS 'naive Bayes model: per-class statistics of token bags, categorical, Gaussian and boolean features';

CREATE FUNCTION nb_train_transfn(nb_model, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, jsonb, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, float8[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_train_transfn(nb_model, text, float8[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label text, features jsonb) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features jsonb, weight float8) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features float8[]) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label text, features float8[], weight float8) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE FUNCTION nb_predict(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_proba(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_proba(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_log_proba(model nb_model, features jsonb, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION nb_predict_log_proba(model nb_model, features float8[], options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION nb_predict(nb_model, jsonb, jsonb) IS 'most probable class of a row of named features (jsonb object)';
COMMENT ON FUNCTION nb_predict(nb_model, float8[], jsonb) IS 'most probable class of a vector of Gaussian features';
COMMENT ON FUNCTION nb_predict_proba(nb_model, jsonb, jsonb) IS 'posterior probability of every class, as {label: p}';
COMMENT ON FUNCTION nb_predict_proba(nb_model, float8[], jsonb) IS 'posterior probability of every class, as {label: p}';
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, jsonb, jsonb) IS 'natural-log posterior of every class, as {label: log p}';
COMMENT ON FUNCTION nb_predict_log_proba(nb_model, float8[], jsonb) IS 'natural-log posterior of every class, as {label: log p}';
COMMENT ON FUNCTION nb_mutual_info(nb_model) IS 'mutual information (nats) between each token''s presence, or each categorical or boolean feature, and the class, highest first';
COMMENT ON FUNCTION nb_info(nb_model) IS 'summary of a model: classes, vocabulary, documents, tokens, features, format version, bytes';
