-- nbc's objects, 50: evaluation.  The aggregate nb_metrics over (actual,
-- predicted label or probabilities) with its state type nb_metrics_state,
-- and nb_metrics_rows, its result as rows.

-- nb_metrics_state, the state of nb_metrics and nb_grid_metrics: a type of
-- its own rather than internal, so that Citus ships a partial state through
-- its input and output and runs the partial aggregation on the workers
-- (worker_partial_agg) instead of fetching every row; updated in place (an
-- expanded object, src/pg_metrics_state.c), as nb_train's nb_model is.
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
COMMENT ON AGGREGATE nb_metrics(text, text) IS 'classification metrics of predicted labels against actual ones: accuracy, precision, recall, F1, confusion matrix';

CREATE AGGREGATE nb_metrics(actual text, predicted text, weight float8) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(text, text, float8) IS 'classification metrics of predicted labels against actual ones, each row counted weight times';

CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(text, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, with log loss, Brier score, calibration, ROC AUC and average precision';

CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(text, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels, each row counted weight times';

CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(anynonarray, text) IS 'classification metrics of predicted labels against actual labels of any type (as label::text)';

CREATE AGGREGATE nb_metrics(actual anynonarray, predicted text, weight float8) (
	SFUNC = nbc_metrics_label_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(anynonarray, text, float8) IS 'classification metrics of predicted labels against actual labels of any type (as label::text), each row counted weight times';

CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text)';

CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb, weight float8) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb, float8) IS 'classification metrics of predicted probabilities ({label: p}) against actual labels of any type (as label::text), each row counted weight times';

-- With options ({"ranked": false}: the lighter form that keeps no rows, without
-- ROC AUC and average precision), after a weight (1 for none): a form with
-- options but no weight would make nb_metrics('x', 'y', '1') ambiguous.
CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8, options jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(text, jsonb, float8, jsonb) IS 'classification metrics of predicted probabilities with options, each row counted weight times: {"ranked": false} keeps no rows, without ROC AUC and average precision';

CREATE AGGREGATE nb_metrics(actual anynonarray, probabilities jsonb, weight float8, options jsonb) (
	SFUNC = nbc_metrics_proba_transfn, STYPE = nb_metrics_state, FINALFUNC = nbc_metrics_final,
	COMBINEFUNC = nbc_metrics_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_metrics(anynonarray, jsonb, float8, jsonb) IS 'classification metrics of predicted probabilities with options, against actual labels of any type (as label::text), each row counted weight times';

-- A metrics value as rows for psql: one per class (kind 'class'), the
-- macro and weighted averages, the confusion matrix (kind 'confusion':
-- class is the actual label, predicted the predicted one), then the
-- calibration bins of probabilities (kind 'calibration': class the bin's
-- range of top-class probability, count its rows, confidence their mean
-- top-class probability, accuracy the share of them predicted right).
CREATE FUNCTION nb_metrics_rows(metrics jsonb)
	RETURNS TABLE (kind text, class text, predicted text, "precision" float8, recall float8,
				   f1 float8, support float8, roc_auc float8, average_precision float8,
				   count float8, confidence float8, accuracy float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$
	SELECT kind, class, predicted, precision, recall, f1, support, roc_auc,
		   average_precision, count, confidence, accuracy
	FROM (
		SELECT 1 AS part, 'class' AS kind, c.key AS class, NULL::text AS predicted,
			   (c.value ->> 'precision')::float8 AS precision,
			   (c.value ->> 'recall')::float8 AS recall,
			   (c.value ->> 'f1')::float8 AS f1,
			   (c.value ->> 'support')::float8 AS support,
			   (metrics -> 'roc_auc' -> 'classes' ->> c.key)::float8 AS roc_auc,
			   (metrics -> 'average_precision' -> 'classes' ->> c.key)::float8 AS average_precision,
			   NULL::float8 AS count, NULL::float8 AS confidence, NULL::float8 AS accuracy
		FROM jsonb_each(metrics -> 'classes') AS c
		UNION ALL
		SELECT 2, a.kind, NULL, NULL, (a.value ->> 'precision')::float8,
			   (a.value ->> 'recall')::float8, (a.value ->> 'f1')::float8,
			   (SELECT sum((c.value ->> 'support')::float8)
				FROM jsonb_each(metrics -> 'classes') AS c),
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'roc_auc' ->> 'macro')::float8 END,
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'average_precision' ->> 'macro')::float8 END,
			   NULL, NULL, NULL
		FROM (VALUES ('macro', metrics -> 'macro'), ('weighted', metrics -> 'weighted'))
			AS a (kind, value)
		UNION ALL
		SELECT 3, 'confusion', a.key, p.key, NULL, NULL, NULL, NULL, NULL, NULL,
			   p.value::text::float8, NULL, NULL
		FROM jsonb_each(metrics -> 'confusion') AS a, jsonb_each(a.value) AS p
		UNION ALL
		SELECT 4, 'calibration',
			   format('[%s, %s%s', b.value -> 'lower', b.value -> 'upper',
					  CASE WHEN b.n = jsonb_array_length(metrics -> 'calibration' -> 'bins') THEN ']' ELSE ')' END),
			   NULL, NULL, NULL, NULL, NULL, NULL, NULL, (b.value ->> 'count')::float8,
			   (b.value ->> 'confidence')::float8, (b.value ->> 'accuracy')::float8
		FROM jsonb_array_elements(metrics -> 'calibration' -> 'bins') WITH ORDINALITY AS b (value, n)
	) AS r
	ORDER BY part, kind, class COLLATE "C", predicted COLLATE "C"
	$$;
COMMENT ON FUNCTION nb_metrics_rows(jsonb) IS 'an nb_metrics value as rows: per class, the macro and weighted averages, the confusion matrix, then the calibration bins';
