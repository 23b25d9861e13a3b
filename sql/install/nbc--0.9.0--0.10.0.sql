-- nbc 0.9.0 -> 0.10.0: live models, learning from unlabelled rows,
-- calibrated probabilities, evaluation that distributes.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.10.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Evaluation that distributes: nb_metrics and nb_grid_metrics keep their
-- state in a real type, nb_metrics_state (pg_metrics_state.c), with a
-- combine function, instead of internal: Citus ships a partial state only
-- through its type's input and output, so that it runs the partial
-- aggregation on the workers (worker_partial_agg) instead of fetching every
-- row.  The state is updated in place (an expanded object), as nb_train's
-- nb_model is.  The probability form adds the calibration bins and the
-- expected calibration error.  An aggregate's state type cannot be altered:
-- the aggregates are made anew (a view that uses one must be dropped first).
DROP AGGREGATE nb_metrics(text, text);
DROP AGGREGATE nb_metrics(text, text, float8);
DROP AGGREGATE nb_metrics(text, jsonb);
DROP AGGREGATE nb_metrics(text, jsonb, float8);
DROP AGGREGATE nb_metrics(anynonarray, text);
DROP AGGREGATE nb_metrics(anynonarray, text, float8);
DROP AGGREGATE nb_metrics(anynonarray, jsonb);
DROP AGGREGATE nb_metrics(anynonarray, jsonb, float8);
DROP AGGREGATE nb_grid_metrics(nb_model, text[], text, jsonb[]);
DROP AGGREGATE nb_grid_metrics(nb_model, tsvector, text, jsonb[]);
DROP AGGREGATE nb_grid_metrics(nb_model, jsonb, text, jsonb[]);
DROP AGGREGATE nb_grid_metrics(nb_model, float8[], text, jsonb[]);
DROP AGGREGATE nb_grid_metrics(nb_model, text, text, jsonb[]);
DROP FUNCTION nbc_metrics_label_transfn(internal, text, text);
DROP FUNCTION nbc_metrics_label_transfn(internal, text, text, float8);
DROP FUNCTION nbc_metrics_proba_transfn(internal, text, jsonb);
DROP FUNCTION nbc_metrics_proba_transfn(internal, text, jsonb, float8);
DROP FUNCTION nbc_metrics_label_transfn(internal, anynonarray, text);
DROP FUNCTION nbc_metrics_label_transfn(internal, anynonarray, text, float8);
DROP FUNCTION nbc_metrics_proba_transfn(internal, anynonarray, jsonb);
DROP FUNCTION nbc_metrics_proba_transfn(internal, anynonarray, jsonb, float8);
DROP FUNCTION nbc_metrics_combine(internal, internal);
DROP FUNCTION nbc_metrics_serialize(internal);
DROP FUNCTION nbc_metrics_deserialize(bytea, internal);
DROP FUNCTION nbc_metrics_final(internal);
DROP FUNCTION nbc_grid_metrics_transfn(internal, nb_model, text[], text, jsonb[]);
DROP FUNCTION nbc_grid_metrics_transfn(internal, nb_model, tsvector, text, jsonb[]);
DROP FUNCTION nbc_grid_metrics_transfn(internal, nb_model, jsonb, text, jsonb[]);
DROP FUNCTION nbc_grid_metrics_transfn(internal, nb_model, float8[], text, jsonb[]);
DROP FUNCTION nbc_grid_metrics_transfn(internal, nb_model, text, text, jsonb[]);
DROP FUNCTION nbc_grid_metrics_final(internal);

CREATE TYPE nb_metrics_state;

CREATE FUNCTION nbc_metrics_state_in(cstring) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_state_out(nb_metrics_state) RETURNS cstring
	AS 'MODULE_PATHNAME', 'nb_metrics_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_state_recv(internal) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_state_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_state_send(nb_metrics_state) RETURNS bytea
	AS 'MODULE_PATHNAME', 'nb_metrics_state_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE nb_metrics_state (
	INPUT = nbc_metrics_state_in,
	OUTPUT = nbc_metrics_state_out,
	RECEIVE = nbc_metrics_state_recv,
	SEND = nbc_metrics_state_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);

COMMENT ON TYPE nb_metrics_state IS 'partial state of nb_metrics and nb_grid_metrics: the counts and sums of the rows seen so far, which combine';

-- Not STRICT: the first row makes the state, rows with NULLs are skipped.
CREATE FUNCTION nbc_metrics_label_transfn(nb_metrics_state, text, text) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_label_transfn(nb_metrics_state, text, text, float8) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, text, jsonb) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, text, jsonb, float8) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_label_transfn(nb_metrics_state, anynonarray, text) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_label_transfn(nb_metrics_state, anynonarray, text, float8) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_label_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, anynonarray, jsonb) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, anynonarray, jsonb, float8) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, text, jsonb, float8, jsonb) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_options_transfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_proba_transfn(nb_metrics_state, anynonarray, jsonb, float8, jsonb) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_proba_options_transfn' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_combine(nb_metrics_state, nb_metrics_state) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_metrics_combine' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_metrics_final(nb_metrics_state) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_metrics_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_metrics(actual text, predicted text) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, predicted text, weight float8) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text, weight float8) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb, weight float8) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);

-- With options ({"ranked": false}: the lighter form that keeps no rows, without
-- ROC AUC and average precision), after a weight (1 for none): a form with
-- options but no weight would make nb_metrics('x', 'y', '1') ambiguous.
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8, options jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb, weight float8, options jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_metrics(text, text) IS 'classification metrics of predicted labels against actual ones: accuracy, precision, recall, F1, confusion matrix';
COMMENT ON AGGREGATE nb_metrics(text, text, float8) IS 'classification metrics of predicted labels against actual ones, each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(text, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, with log loss, Brier score, calibration, ROC AUC and average precision';
COMMENT ON AGGREGATE nb_metrics(text, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(anynonarray, text) IS 'classification metrics of predicted labels against actual labels of any type (as label::text)';
COMMENT ON AGGREGATE nb_metrics(anynonarray, text, float8) IS 'classification metrics of predicted labels against actual labels of any type (as label::text), each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text)';
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text), each row counted weight times';
COMMENT ON AGGREGATE nb_metrics(text, jsonb, float8, jsonb) IS 'classification metrics of predicted probabilities with options, each row counted weight times: {"ranked": false} keeps no rows, without ROC AUC and average precision';
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb, float8, jsonb) IS 'classification metrics of predicted probabilities with options, against actual labels of any type (as label::text), each row counted weight times';

CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, text[], text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_array' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, tsvector, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_tsvector' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, jsonb, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_jsonb' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, float8[], text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_float8' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_transfn(nb_metrics_state, nb_model, text, text, jsonb[]) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_text' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_combine(nb_metrics_state, nb_metrics_state) RETURNS nb_metrics_state
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_combine' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_grid_metrics_final(nb_metrics_state) RETURNS jsonb[]
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_grid_metrics(model nb_model, features text[], actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_grid_metrics(model nb_model, features tsvector, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_grid_metrics(model nb_model, features jsonb, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_grid_metrics(model nb_model, features float8[], actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);
CREATE AGGREGATE nb_grid_metrics(model nb_model, body text, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_grid_metrics_final,
	COMBINEFUNC = nbc_grid_metrics_combine, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, tsvector, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, jsonb, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, float8[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';
COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text, text, jsonb[]) IS 'nb_metrics of the model''s predictions of documents of text under each option set of the array (without roc_auc and average_precision), each row scored once per option set';
