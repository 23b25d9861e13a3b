-- nbc 0.8.0 -> 0.9.0: text in, with the tokenizer kept inside the model;
-- nothing silent (unknown features, unrelated merges); options that travel
-- with the model; results shaped for psql.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.9.0'" to load this file. \quit

-- Support functions out of the nb_ prefix: \df nb_* lists what users call.
-- nb_* is for users; nbc_* (the extension's name, as PostGIS keeps ST_* for
-- users and postgis_*/pgis_* for its machinery) is for what PostgreSQL calls:
-- type I/O, casts, comparison and hashing, aggregate support, the planner's
-- support and its mark.  The C symbols do not change (prosrc keeps them), so
-- a full script creates these as nbc_x(...) AS 'MODULE_PATHNAME', 'nb_x'.
ALTER FUNCTION nb_model_in(cstring) RENAME TO nbc_model_in;
ALTER FUNCTION nb_model_out(nb_model) RENAME TO nbc_model_out;
ALTER FUNCTION nb_model_recv(internal) RENAME TO nbc_model_recv;
ALTER FUNCTION nb_model_send(nb_model) RENAME TO nbc_model_send;
ALTER FUNCTION nb_model_text(nb_model) RENAME TO nbc_model_to_text;
ALTER FUNCTION nb_model_eq(nb_model, nb_model) RENAME TO nbc_model_eq;
ALTER FUNCTION nb_model_ne(nb_model, nb_model) RENAME TO nbc_model_ne;
ALTER FUNCTION nb_model_lt(nb_model, nb_model) RENAME TO nbc_model_lt;
ALTER FUNCTION nb_model_le(nb_model, nb_model) RENAME TO nbc_model_le;
ALTER FUNCTION nb_model_gt(nb_model, nb_model) RENAME TO nbc_model_gt;
ALTER FUNCTION nb_model_ge(nb_model, nb_model) RENAME TO nbc_model_ge;
ALTER FUNCTION nb_model_cmp(nb_model, nb_model) RENAME TO nbc_model_cmp;
ALTER FUNCTION nb_model_hash(nb_model) RENAME TO nbc_model_hash;
ALTER FUNCTION nb_model_hash_extended(nb_model, bigint) RENAME TO nbc_model_hash_extended;
ALTER FUNCTION nb_train_transfn(nb_model, text, text[]) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, text[], float8) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, tsvector) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, tsvector, float8) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, jsonb) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, jsonb, float8) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, float8[]) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_train_transfn(nb_model, text, float8[], float8) RENAME TO nbc_train_transfn;
ALTER FUNCTION nb_metrics_label_transfn(internal, text, text) RENAME TO nbc_metrics_label_transfn;
ALTER FUNCTION nb_metrics_label_transfn(internal, text, text, float8) RENAME TO nbc_metrics_label_transfn;
ALTER FUNCTION nb_metrics_proba_transfn(internal, text, jsonb) RENAME TO nbc_metrics_proba_transfn;
ALTER FUNCTION nb_metrics_proba_transfn(internal, text, jsonb, float8) RENAME TO nbc_metrics_proba_transfn;
ALTER FUNCTION nb_metrics_combine(internal, internal) RENAME TO nbc_metrics_combine;
ALTER FUNCTION nb_metrics_serialize(internal) RENAME TO nbc_metrics_serialize;
ALTER FUNCTION nb_metrics_deserialize(bytea, internal) RENAME TO nbc_metrics_deserialize;
ALTER FUNCTION nb_metrics_final(internal) RENAME TO nbc_metrics_final;
ALTER FUNCTION nb_grid_metrics_transfn(internal, nb_model, text[], text, jsonb[]) RENAME TO nbc_grid_metrics_transfn;
ALTER FUNCTION nb_grid_metrics_transfn(internal, nb_model, tsvector, text, jsonb[]) RENAME TO nbc_grid_metrics_transfn;
ALTER FUNCTION nb_grid_metrics_transfn(internal, nb_model, jsonb, text, jsonb[]) RENAME TO nbc_grid_metrics_transfn;
ALTER FUNCTION nb_grid_metrics_transfn(internal, nb_model, float8[], text, jsonb[]) RENAME TO nbc_grid_metrics_transfn;
ALTER FUNCTION nb_grid_metrics_final(internal) RENAME TO nbc_grid_metrics_final;
ALTER FUNCTION nb_query_constant(nb_model, boolean) RENAME TO nbc_query_constant;
ALTER FUNCTION nb_query_constant_support(internal) RENAME TO nbc_query_constant_support;
ALTER FUNCTION nb_scoring_support(internal) RENAME TO nbc_scoring_support;

-- A comment for every function, aggregate and type users call or see
-- (\df+ and \da show them; the catalog test lists any without one).
COMMENT ON AGGREGATE nb_train(text, text[]) IS 'naive Bayes model of the rows: each a document of class label with a bag of tokens';
COMMENT ON AGGREGATE nb_train(text, text[], float8) IS 'naive Bayes model of the rows: each a document of class label with a bag of tokens, counted weight times';
COMMENT ON AGGREGATE nb_train(text, tsvector) IS 'naive Bayes model of the rows: each a document of class label with the lexemes of a tsvector';
COMMENT ON AGGREGATE nb_train(text, tsvector, float8) IS 'naive Bayes model of the rows: each a document of class label with the lexemes of a tsvector, counted weight times';
COMMENT ON AGGREGATE nb_train(text, jsonb) IS 'naive Bayes model of the rows: each a document of class label with named features (jsonb object)';
COMMENT ON AGGREGATE nb_train(text, jsonb, float8) IS 'naive Bayes model of the rows: each a document of class label with named features (jsonb object), counted weight times';
COMMENT ON AGGREGATE nb_train(text, float8[]) IS 'naive Bayes model of the rows: each a document of class label with a vector of Gaussian features';
COMMENT ON AGGREGATE nb_train(text, float8[], float8) IS 'naive Bayes model of the rows: each a document of class label with a vector of Gaussian features, counted weight times';
COMMENT ON AGGREGATE nb_merge(nb_model) IS 'model trained on the union of the rows of the models';
COMMENT ON AGGREGATE nb_metrics(text, text) IS 'classification metrics of predicted labels against actual ones: accuracy, precision, recall, F1, confusion matrix';
COMMENT ON AGGREGATE nb_metrics(text, text, float8) IS 'classification metrics of predicted labels against actual ones, each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(text, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, with log loss, Brier score, ROC AUC and average precision';
COMMENT ON AGGREGATE nb_metrics(text, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, each row counted weight times';
COMMENT ON FUNCTION nb_metrics_rows(jsonb) IS 'an nb_metrics value as rows: per class, the macro and weighted averages, then the confusion matrix';
COMMENT ON FUNCTION nb_model(text) IS 'model from its text form (the cast text::nb_model)';

-- Labels of any type: nb_train and nb_metrics take a label column of a type
-- other than text (integer stars, a boolean) as label::text makes it.  Each
-- has a second form with the label anynonarray, on the same C function,
-- which reads the label through nb_label_arg (src/pg_label.c).  A text
-- column or an unknown literal ('spam') still chooses the text form: an
-- exact match wins, and an unknown literal goes to a string type.  The
-- transition functions of the second form are STABLE, as anytextcat is: a
-- type's text form may depend on settings (DateStyle, TimeZone,
-- extra_float_digits).  An array label has no form: it is most likely the
-- features given first.
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, tsvector) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, tsvector, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, jsonb, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, float8[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, float8[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label anynonarray, features text[]) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features text[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features tsvector) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features tsvector, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features jsonb, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features float8[]) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE AGGREGATE nb_train(label anynonarray, features float8[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_train(anynonarray, text[]) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, text[], float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, tsvector) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, tsvector, float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, jsonb) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, jsonb, float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, float8[]) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';
COMMENT ON AGGREGATE nb_train(anynonarray, float8[], float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE FUNCTION nbc_metrics_label_transfn(internal, anynonarray, text) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_label_transfn(internal, anynonarray, text, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(internal, anynonarray, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(internal, anynonarray, jsonb, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text) (
	SFUNC = nbc_metrics_label_transfn, STYPE = internal, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, SERIALFUNC = nbc_metrics_serialize,
	DESERIALFUNC = nbc_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text, weight float8) (
	SFUNC = nbc_metrics_label_transfn, STYPE = internal, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, SERIALFUNC = nbc_metrics_serialize,
	DESERIALFUNC = nbc_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = internal, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, SERIALFUNC = nbc_metrics_serialize,
	DESERIALFUNC = nbc_metrics_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb, weight float8) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = internal, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, SERIALFUNC = nbc_metrics_serialize,
	DESERIALFUNC = nbc_metrics_deserialize, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_metrics(anynonarray, text) IS 'classification metrics of predicted labels against actual labels of any type (as label::text)';
COMMENT ON AGGREGATE nb_metrics(anynonarray, text, float8) IS 'classification metrics of predicted labels against actual labels of any type (as label::text), each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text)';
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text), each row counted weight times';

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
CREATE FUNCTION nb_predict_top(model nb_model, features tsvector, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_predict_top(model nb_model, features jsonb, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_predict_top(model nb_model, features float8[], k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_predict_top(nb_model, text[], integer, jsonb) IS 'the k most probable classes of a bag of tokens with their probabilities, most probable first';
COMMENT ON FUNCTION nb_predict_top(nb_model, tsvector, integer, jsonb) IS 'the k most probable classes of a tsvector with their probabilities, most probable first';
COMMENT ON FUNCTION nb_predict_top(nb_model, jsonb, integer, jsonb) IS 'the k most probable classes of a row of named features with their probabilities, most probable first';
COMMENT ON FUNCTION nb_predict_top(nb_model, float8[], integer, jsonb) IS 'the k most probable classes of a vector of Gaussian features with their probabilities, most probable first';

-- nb_explain names its rows and the classes it compares: part ('prior',
-- 'token', 'value', 'absent' for a Bernoulli bag's absent tokens, 'length'
-- for a DCM bag's length) instead of a blank feature, and on every row the
-- predicted class and the class it is compared to (against, else the
-- runner-up).  New result columns need the functions dropped and made again.
DROP FUNCTION nb_explain(nb_model, text[], jsonb, text, integer);
DROP FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer);
DROP FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer);
DROP FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer);

CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) IS 'contribution of each token, the prior and the absent tokens to the log odds of the predicted class against the runner-up or a given class, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) IS 'contribution of each lexeme, the prior and the absent lexemes to the log odds of the predicted class against the runner-up or a given class, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) IS 'contribution of each feature, token and the prior to the log odds of the predicted class against the runner-up or a given class, largest first';
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) IS 'contribution of each element and the prior to the log odds of the predicted class against the runner-up or a given class, largest first';
