\echo Use "CREATE EXTENSION nbc" to load this file. \quit

-- nbc 0.14.0, installed in one script: the objects of 0.13.0 as nbc--0.13.0.sql
-- makes them, then the changes of 0.14.0 as nbc--0.13.0--0.14.0.sql makes them,
-- so that a new installation and an updated one are the same catalog (the
-- reliability suite's upgrade part checks it).

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

COMMENT ON FUNCTION nb_classes(nb_model) IS 'classes with their (weighted) document counts and maximum-likelihood priors';

COMMENT ON FUNCTION nb_model_to_jsonb(nb_model) IS 'every count of a model in readable form';

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

-- Equal models are byte-identical (the format is canonical), so equality is
-- byte equality; the order is byte order and means nothing else.  They let
-- DISTINCT, GROUP BY, UNION, ORDER BY, hash and merge joins, and Citus'
-- count(DISTINCT ...) work on nb_model.
CREATE FUNCTION nb_model_eq(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_ne(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_lt(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_le(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_gt(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_ge(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_cmp(nb_model, nb_model) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_hash(nb_model) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model_hash_extended(nb_model, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR = (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES);

CREATE OPERATOR <> (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);

CREATE OPERATOR < (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);

CREATE OPERATOR <= (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);

CREATE OPERATOR > (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);

CREATE OPERATOR >= (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nb_model_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS nb_model_ops DEFAULT FOR TYPE nb_model USING btree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 nb_model_cmp(nb_model, nb_model);

CREATE OPERATOR CLASS nb_model_ops DEFAULT FOR TYPE nb_model USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 nb_model_hash(nb_model),
	FUNCTION 2 nb_model_hash_extended(nb_model, bigint);

COMMENT ON FUNCTION nb_model_eq(nb_model, nb_model) IS 'equal: the same serialized bytes';

COMMENT ON FUNCTION nb_model_ne(nb_model, nb_model) IS 'not equal';

COMMENT ON FUNCTION nb_model_lt(nb_model, nb_model) IS 'less than in byte order';

COMMENT ON FUNCTION nb_model_le(nb_model, nb_model) IS 'less than or equal in byte order';

COMMENT ON FUNCTION nb_model_gt(nb_model, nb_model) IS 'greater than in byte order';

COMMENT ON FUNCTION nb_model_ge(nb_model, nb_model) IS 'greater than or equal in byte order';

COMMENT ON FUNCTION nb_model_cmp(nb_model, nb_model) IS 'btree support: byte order of the serialized models';

COMMENT ON FUNCTION nb_model_hash(nb_model) IS 'hash support: hash of the serialized bytes';

COMMENT ON FUNCTION nb_model_hash_extended(nb_model, bigint) IS 'hash support: seeded 64-bit hash of the serialized bytes';

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
-- The model of the rows of a without those of b (which must be among them),
-- the inverse of nb_merge.  Not STRICT: NULL b gives a (and NULL a, NULL).
CREATE FUNCTION nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION nb_subtract(nb_model, nb_model) IS 'model of the rows of the first model without those of the second (the inverse of nb_merge; NULL when nothing is left)';

-- Evaluation: nb_metrics.
-- Classification metrics of any query's predictions as jsonb (pg_metrics.c):
-- from labels, or from nb_predict_proba's probabilities (adding log loss,
-- Brier score, ROC AUC and average precision).  Internal state, so
-- parallel aggregation serializes partial states.
CREATE FUNCTION nb_metrics_label_transfn(internal, text, text) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_metrics_label_transfn(internal, text, text, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_metrics_proba_transfn(internal, text, jsonb, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_metrics_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_metrics_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION nb_metrics_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL SAFE;

CREATE FUNCTION nb_metrics_final(internal) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_metrics(actual text, predicted text) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

CREATE AGGREGATE nb_metrics(actual text, predicted text, weight float8) (
	SFUNC = nb_metrics_label_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

CREATE AGGREGATE nb_metrics(actual text, probabilities jsonb, weight float8) (
	SFUNC = nb_metrics_proba_transfn, STYPE = internal, FINALFUNC = nb_metrics_final,
	COMBINEFUNC = nb_metrics_combine, SERIALFUNC = nb_metrics_serialize,
	DESERIALFUNC = nb_metrics_deserialize, PARALLEL = SAFE);

-- A metrics value as rows for psql: one per class (kind 'class'), the
-- macro and weighted averages, then the confusion matrix (kind
-- 'confusion': class is the actual label, predicted the predicted one).
CREATE FUNCTION nb_metrics_rows(metrics jsonb)
	RETURNS TABLE (kind text, class text, predicted text, "precision" float8, recall float8,
				   f1 float8, support float8, roc_auc float8, average_precision float8,
				   count float8)
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$
	SELECT kind, class, predicted, precision, recall, f1, support, roc_auc,
		   average_precision, count
	FROM (
		SELECT 1 AS part, 'class' AS kind, c.key AS class, NULL::text AS predicted,
			   (c.value ->> 'precision')::float8 AS precision,
			   (c.value ->> 'recall')::float8 AS recall,
			   (c.value ->> 'f1')::float8 AS f1,
			   (c.value ->> 'support')::float8 AS support,
			   (metrics -> 'roc_auc' -> 'classes' ->> c.key)::float8 AS roc_auc,
			   (metrics -> 'average_precision' -> 'classes' ->> c.key)::float8 AS average_precision,
			   NULL::float8 AS count
		FROM jsonb_each(metrics -> 'classes') AS c
		UNION ALL
		SELECT 2, a.kind, NULL, NULL, (a.value ->> 'precision')::float8,
			   (a.value ->> 'recall')::float8, (a.value ->> 'f1')::float8,
			   (SELECT sum((c.value ->> 'support')::float8)
				FROM jsonb_each(metrics -> 'classes') AS c),
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'roc_auc' ->> 'macro')::float8 END,
			   CASE a.kind WHEN 'macro' THEN (metrics -> 'average_precision' ->> 'macro')::float8 END,
			   NULL
		FROM (VALUES ('macro', metrics -> 'macro'), ('weighted', metrics -> 'weighted'))
			AS a (kind, value)
		UNION ALL
		SELECT 3, 'confusion', a.key, p.key, NULL, NULL, NULL, NULL, NULL, NULL,
			   p.value::text::float8
		FROM jsonb_each(metrics -> 'confusion') AS a, jsonb_each(a.value) AS p
	) AS r
	ORDER BY part, kind, class COLLATE "C", predicted COLLATE "C"
	$$;

-- The default grid for a model: the options that matter for its types of
-- features.
CREATE FUNCTION nb_grid_default(model nb_model) RETURNS jsonb
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text := (SELECT quote_ident(n.nspname)
				 FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
				 WHERE e.extname = 'nbc');
	info jsonb;
	types text[];
	grid jsonb := '{"fit_prior": [true, false]}';
BEGIN
	EXECUTE format('SELECT %s.nb_info($1)', ext) INTO info USING model;
	-- models of text[] or tsvector rows list no features: one bag
	types := coalesce(ARRAY(SELECT DISTINCT value FROM jsonb_each_text(info -> 'features')), '{}');
	IF NOT info ? 'features' THEN
		types := '{bag}';
	END IF;
	IF types && '{bag,categorical,boolean}' THEN
		grid := grid || '{"alpha": [0.01, 0.1, 0.5, 1]}';
	END IF;
	IF 'gaussian' = ANY (types) THEN
		grid := grid || '{"var_smoothing": [1e-9, 1e-6, 1e-3]}';
	END IF;
	IF 'bag' = ANY (types) THEN
		grid := grid || '{"kind": ["multinomial", "bernoulli"]}';
		-- complement applies to bags only, and ignores the prior
		IF types = '{bag}' THEN
			grid := jsonb_build_array(grid, '{"kind": "complement", "alpha": [0.01, 0.1, 0.5, 1]}'::jsonb);
		END IF;
	END IF;
	RETURN grid;
END
$$;

COMMENT ON FUNCTION nb_grid_default(nb_model) IS 'the grid of prediction options that matter for the model''s types of features';

-- Explaining and inspecting: nb_explain, nb_feature_log_prob.
-- Not STRICT, as the scoring functions: NULL options mean the defaults, NULL
-- against the runner-up, NULL top_k every row; a NULL model or NULL features
-- give no rows.
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;

CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;

CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;

CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20;

CREATE FUNCTION nb_feature_log_prob(model nb_model, options jsonb DEFAULT NULL)
	RETURNS TABLE(feature text, value text, label text, log_prob float8)
	AS 'MODULE_PATHNAME', 'nb_feature_log_prob' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;

COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) IS 'contribution of each token and the prior to the log odds of the predicted class against the runner-up, largest first';

COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) IS 'contribution of each lexeme and the prior to the log odds of the predicted class against the runner-up, largest first';

COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) IS 'contribution of each feature and the prior to the log odds of the predicted class against the runner-up, largest first';

COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) IS 'contribution of each element and the prior to the log odds of the predicted class against the runner-up, largest first';

COMMENT ON FUNCTION nb_feature_log_prob(nb_model, jsonb) IS 'smoothed log probability of every token or value per class (Gaussian: mean and variance) as the scorer uses it';

-- Smaller models: nb_prune.
CREATE FUNCTION nb_prune(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_prune' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION nb_prune(nb_model, jsonb) IS 'the model trained on the same rows without the tokens and features that options top_k, min_documents and max_document_fraction leave out';

-- cvgrid: a grid of option sets scored in one pass (pg_grid.c), and
-- nb_cross_validate on it.
-- nb_grid_metrics(model, features, actual, options jsonb[]): the nb_metrics
-- object (without roc_auc and average_precision) of every option set of
-- the array, in its order, each row looked up once and scored under every
-- option set.
CREATE FUNCTION nb_grid_metrics_transfn(internal, nb_model, text[], text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_array' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_grid_metrics_transfn(internal, nb_model, tsvector, text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_tsvector' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_grid_metrics_transfn(internal, nb_model, jsonb, text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_jsonb' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_grid_metrics_transfn(internal, nb_model, float8[], text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_float8' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nb_grid_metrics_final(internal) RETURNS jsonb[]
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_grid_metrics(model nb_model, features text[], actual text, options jsonb[]) (
	SFUNC = nb_grid_metrics_transfn, STYPE = internal, FINALFUNC = nb_grid_metrics_final,
	PARALLEL = SAFE);

CREATE AGGREGATE nb_grid_metrics(model nb_model, features tsvector, actual text, options jsonb[]) (
	SFUNC = nb_grid_metrics_transfn, STYPE = internal, FINALFUNC = nb_grid_metrics_final,
	PARALLEL = SAFE);

CREATE AGGREGATE nb_grid_metrics(model nb_model, features jsonb, actual text, options jsonb[]) (
	SFUNC = nb_grid_metrics_transfn, STYPE = internal, FINALFUNC = nb_grid_metrics_final,
	PARALLEL = SAFE);

CREATE AGGREGATE nb_grid_metrics(model nb_model, features float8[], actual text, options jsonb[]) (
	SFUNC = nb_grid_metrics_transfn, STYPE = internal, FINALFUNC = nb_grid_metrics_final,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, tsvector, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, jsonb, text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, float8[], text, jsonb[]) IS 'nb_metrics of the model''s predictions under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

-- nb_query_constant(model, serial) is the mark the planner puts on a scoring call's
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

-- nb_cross_validate: k-fold cross-validation of every option set of a grid.
-- One pass over the rows trains a model per fold (and their merge, the
-- whole); each batch of up to 8 folds is then scored in one pass by
-- nb_grid_metrics with each fold's out-of-fold model, nb_subtract(whole,
-- fold).  A relation with more classes than the metrics count is refused
-- right after training.
CREATE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE plpgsql STABLE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	fold_type regtype;
	hash text;
	rows_sql text;
	fold_sql text;
	option_sets jsonb[];
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	fold_order integer[];
	trained record;
	cols record;
	n_classes bigint;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	-- the columns: each must exist; features must be of a type nbc trains on
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	-- a domain counts as its base type
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text[], tsvector, jsonb or float8[].';
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	-- the rows: label as text, features as they are, fold (NULL: training only)
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring query below, so that
	-- only a batch of them is ever in memory (a leave-one-out model is nearly
	-- the whole).  A fold holds every row when its rows are all the rows.
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql) INTO trained USING grid;
	IF trained.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained.folds, 1), folds);
	END IF;
	IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING trained.whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;

	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
	grid := trained.grid;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING grid;

	-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
	-- nb_subtract(whole, fold's model) of two parameters, so that the planner
	-- computes it once as a constant of the plan: the model is prepared once
	-- with a scorer per option set, and each row is looked up once and scored
	-- under every option set.  (Parameters of their own: one array of all the
	-- models, subscripted in the query, made the planner copy the whole array
	-- for each fold.)  The rows come in fold order, so that one model's
	-- tables are in use at a time (interleaved, the models' tables together
	-- fall out of the CPU's caches: a third slower).  At most 8 folds per
	-- pass over the rows: each fold's prepared model stays in memory until
	-- its query ends, and a query has at most 1664 columns, so that
	-- leave-one-out (a fold per row) works too.  The means and spreads add
	-- the folds in their order, whatever the plan, so that the results do
	-- not depend on it to the last bit.
	FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   trained.folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r',
					   per_fold, rows_sql)
			INTO batch
			USING option_sets, trained.whole,
				  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
				  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
				  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
				  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
		-- [fold][option set]
		fold_metrics := fold_metrics || batch;
	END LOOP;
	RETURN QUERY EXECUTE
		'WITH s AS (SELECT k, n, (m[k][n] ->> ''accuracy'')::float8 AS accuracy, '
		'                  (m[k][n] -> ''macro'' ->> ''f1'')::float8 AS macro_f1, (m[k][n] ->> ''log_loss'')::float8 AS log_loss '
		'           FROM (SELECT $2 AS m) a, generate_subscripts($2, 1) AS k, generate_subscripts($2, 2) AS n) '
		'SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k), '
		'       avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k), '
		'       avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k) '
		'FROM unnest($1) WITH ORDINALITY AS g(options, n) JOIN s USING (n) '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n'
		USING option_sets, fold_metrics;
END
$$;
COMMENT ON FUNCTION nb_cross_validate(regclass, text, text, integer, jsonb, text) IS 'k-fold cross-validation of every option set of a grid: mean and standard deviation over the folds of accuracy, macro F1 and log loss, best first';

-- The grid as a list of option sets: an object {key: value or [values]} is
-- every combination of its values (scikit-learn's param_grid), an array is
-- the concatenation of its elements' lists.  At most 10,000 option sets,
-- counted before any is made (a few lists of values multiply).
CREATE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 20
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	part jsonb;
	combos jsonb;
	k text;
	vals jsonb;
	sets bigint := 0;
	part_sets bigint;
BEGIN
	IF jsonb_typeof(grid) = 'object' THEN
		grid := jsonb_build_array(grid);
	ELSIF jsonb_typeof(grid) <> 'array' OR jsonb_array_length(grid) = 0 THEN
		RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The grid is %s.', grid);
	END IF;
	FOR part IN SELECT e FROM jsonb_array_elements(grid) AS e LOOP
		IF jsonb_typeof(part) <> 'object' THEN
			RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Element %s is not an object.', part);
		END IF;
		-- count the option sets before making any: a few lists multiply
		part_sets := 1;
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) = 'array' THEN
				part_sets := part_sets * greatest(jsonb_array_length(vals), 1);
			END IF;
			EXIT WHEN part_sets > 10000;
		END LOOP;
		sets := sets + part_sets;
		IF sets > 10000 THEN
			RAISE EXCEPTION 'grid has more than 10000 option sets'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = 'Every combination of an object''s values is an option set.',
					  HINT = 'Give fewer values per key, or search the grid in parts.';
		END IF;
		combos := '[{}]';
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) <> 'array' THEN
				vals := jsonb_build_array(vals);
			ELSIF jsonb_array_length(vals) = 0 THEN
				RAISE EXCEPTION 'grid key "%" has no values', k
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			SELECT jsonb_agg(c || jsonb_build_object(k, v) ORDER BY ci, vi) INTO combos
			FROM jsonb_array_elements(combos) WITH ORDINALITY AS a(c, ci),
				 jsonb_array_elements(vals) WITH ORDINALITY AS b(v, vi);
		END LOOP;
		RETURN QUERY SELECT c FROM jsonb_array_elements(combos) AS c;
	END LOOP;
END
$$;
COMMENT ON FUNCTION nb_grid_options(jsonb) IS 'the option sets of a grid: an object gives every combination of its values, an array the option sets of each element';

-- ---------------------------------------------------------------------------
-- 0.9.0: text in, with the tokenizer kept inside the model; nothing silent
-- (unknown features, unrelated merges); options that travel with the model;
-- results shaped for psql.

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

-- nb_cross_validate reports its progress and fails with a short context:
-- under nbc.progress (off by default) a NOTICE after training and after each
-- batch of up to 8 folds scored, with the elapsed time; an error or a cancel
-- in one of its internal statements is raised again with a sentence of
-- DETAIL naming what it was doing (training, or which folds it was
-- scoring), so that the CONTEXT is a line, not the generated statement.
-- A text column is documents: each fold's model is trained with the
-- tokenizer (nb_tokens' options, NULL: the defaults) and scores the fold's
-- documents with it.  The new argument makes a new signature.
DROP FUNCTION nb_cross_validate(regclass, text, text, integer, jsonb, text);
CREATE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE plpgsql STABLE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	fold_type regtype;
	hash text;
	rows_sql text;
	fold_sql text;
	option_sets jsonb[];
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	fold_order integer[];
	trained record;
	cols record;
	n_classes bigint;
	-- nbc.progress: a NOTICE per pass, its elapsed time in the DETAIL
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
	-- what the internal statements were doing when they failed (see below)
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	-- the columns: each must exist; features must be of a type nbc trains on
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	-- a domain counts as its base type
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	-- documents in a varchar column are text
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	END IF;
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
		WHEN 'text'::regtype THEN format('hashtextextended(%I::text COLLATE "C", 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text, text[], tsvector, jsonb or float8[].';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	-- the rows: label as text, features as they are, fold (NULL: training only)
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring query below, so that
	-- only a batch of them is ever in memory (a leave-one-out model is nearly
	-- the whole).  A fold holds every row when its rows are all the rows.
	--
	-- An error or a cancel in an internal statement is raised again from here
	-- with its SQLSTATE, message, detail and hint, and a sentence saying what
	-- cross-validation was doing: PostgreSQL's CONTEXT would otherwise quote
	-- the whole generated statement (near 1,000 characters per batch of folds).
	doing := format('Cross-validation of "%s" was training a model per fold.', rel);
	BEGIN
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql,
		CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF trained.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained.folds, 1), folds);
	END IF;
	IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING trained.whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;

	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
	grid := trained.grid;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING grid;
	IF progress THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
	END IF;

	-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
	-- nb_subtract(whole, fold's model) of two parameters, so that the planner
	-- computes it once as a constant of the plan: the model is prepared once
	-- with a scorer per option set, and each row is looked up once and scored
	-- under every option set.  (Parameters of their own: one array of all the
	-- models, subscripted in the query, made the planner copy the whole array
	-- for each fold.)  The rows come in fold order, so that one model's
	-- tables are in use at a time (interleaved, the models' tables together
	-- fall out of the CPU's caches: a third slower).  At most 8 folds per
	-- pass over the rows: each fold's prepared model stays in memory until
	-- its query ends, and a query has at most 1664 columns, so that
	-- leave-one-out (a fold per row) works too.  The means and spreads add
	-- the folds in their order, whatever the plan, so that the results do
	-- not depend on it to the last bit.
	FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   trained.folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		doing := format('Cross-validation of "%s" was scoring folds %s to %s of %s.',
						rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
		BEGIN
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r',
					   per_fold, rows_sql)
			INTO batch
			USING option_sets, trained.whole,
				  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
				  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
				  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
				  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
		EXCEPTION WHEN query_canceled OR others THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
									e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
			IF e_hint = '' THEN
				RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
			END IF;
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
		END;
		-- [fold][option set]
		fold_metrics := fold_metrics || batch;
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %',
				b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	RETURN QUERY EXECUTE
		'WITH s AS (SELECT k, n, (m[k][n] ->> ''accuracy'')::float8 AS accuracy, '
		'                  (m[k][n] -> ''macro'' ->> ''f1'')::float8 AS macro_f1, (m[k][n] ->> ''log_loss'')::float8 AS log_loss '
		'           FROM (SELECT $2 AS m) a, generate_subscripts($2, 1) AS k, generate_subscripts($2, 2) AS n) '
		'SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k), '
		'       avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k), '
		'       avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k) '
		'FROM unnest($1) WITH ORDINALITY AS g(options, n) JOIN s USING (n) '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n'
		USING option_sets, fold_metrics;
END
$$;

-- nb_tokens(body, options): the tokens scikit-learn's
-- CountVectorizer(**options).build_analyzer() makes of body, in order.
-- Not STRICT: NULL options (the default) mean scikit-learn's defaults; a
-- NULL body gives NULL.
CREATE FUNCTION nb_tokens(body text, options jsonb DEFAULT NULL) RETURNS text[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_tokens(text, jsonb) IS 'tokens of a text as scikit-learn''s CountVectorizer analyzer makes them (options: analyzer, ngram_range, lowercase, strip_accents, token_pattern, stop_words)';

-- Text in: nb_train(label, body text [, [weight,] tokenizer]) tokenizes each
-- body (nb_tokens' options; NULL or absent: scikit-learn's defaults) and
-- keeps the tokenizer in the model; the scoring functions given text
-- tokenize it with the model's tokenizer.  (A weighted row of text names its
-- tokenizer, NULL for the defaults: a third argument of unknown type would
-- be ambiguous between a weight and a tokenizer.)
CREATE FUNCTION nbc_train_transfn(nb_model, text, text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, text, float8, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label text, body text) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label text, body text, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label text, body text, weight float8, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_train(text, text) IS 'train a naive Bayes model on documents of text, tokenized as scikit-learn''s CountVectorizer does by default; the model keeps its tokenizer';

COMMENT ON AGGREGATE nb_train(text, text, jsonb) IS 'train a naive Bayes model on documents of text, tokenized with these options (see nb_tokens); the model keeps its tokenizer';

COMMENT ON AGGREGATE nb_train(text, text, float8, jsonb) IS 'train a naive Bayes model on weighted documents of text, tokenized with these options (NULL: the defaults); the model keeps its tokenizer';

CREATE FUNCTION nb_predict(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_predict_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_predict_log_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_predict(nb_model, text, jsonb) IS 'most probable class of a document of text, tokenized with the model''s tokenizer';

COMMENT ON FUNCTION nb_predict_proba(nb_model, text, jsonb) IS 'posterior probability of every class of a document of text, as {label: p}';

COMMENT ON FUNCTION nb_predict_log_proba(nb_model, text, jsonb) IS 'natural-log posterior of every class of a document of text, as {label: log p}';

COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, text, integer) IS 'contribution of each token of a document of text, the prior and the absent tokens to the log odds of the predicted class against the runner-up or a given class, largest first';

CREATE FUNCTION nbc_grid_metrics_transfn(internal, nb_model, text, text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_text' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_grid_metrics(model nb_model, body text, actual text, options jsonb[]) (
	SFUNC = nbc_grid_metrics_transfn, STYPE = internal, FINALFUNC = nbc_grid_metrics_final,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text, text, jsonb[]) IS 'nb_metrics of the model''s predictions of documents of text under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

-- Options that travel with the model: nb_with_options(model, options)
-- keeps prediction options in the model (checked against it); every scoring
-- function applies them, a call's own options taking precedence key by key.
-- NULL options remove them.
CREATE FUNCTION nb_with_options(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION nb_with_options(nb_model, jsonb) IS 'the model with these prediction options kept inside it as its defaults (NULL: none)';

-- Labels of any type for rows of text too (see the labels' forms above).
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text, float8, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label anynonarray, body text) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label anynonarray, body text, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label anynonarray, body text, weight float8, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_train(anynonarray, text) IS 'train a naive Bayes model on documents of text with labels of any type (stored as their text), tokenized as scikit-learn''s CountVectorizer does by default';

COMMENT ON AGGREGATE nb_train(anynonarray, text, jsonb) IS 'train a naive Bayes model on documents of text with labels of any type (stored as their text), tokenized with these options';

COMMENT ON AGGREGATE nb_train(anynonarray, text, float8, jsonb) IS 'train a naive Bayes model on weighted documents of text with labels of any type (stored as their text), tokenized with these options (NULL: the defaults)';

CREATE FUNCTION nb_predict_top(model nb_model, body text, k integer DEFAULT 1, options jsonb DEFAULT NULL)
	RETURNS TABLE(label text, probability float8)
	AS 'MODULE_PATHNAME', 'nb_predict_top_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_predict_top(nb_model, text, integer, jsonb) IS 'the k most probable classes of a document of text with their probabilities, most probable first';

COMMENT ON FUNCTION nb_cross_validate(regclass, text, text, integer, jsonb, text, jsonb) IS 'k-fold cross-validation of every option set of a grid: mean and standard deviation over the folds of accuracy, macro F1 and log loss, best first; a text column is tokenized with the tokenizer';

-- Rows the model knows nothing of: nbc.unknown_features (a setting, see
-- pg_unknown.c) says what scoring does with them, and nb_coverage gives
-- the share of a row's features that the model knows (pg_coverage.c).
-- STRICT: a NULL model or features give NULL.
CREATE FUNCTION nb_coverage(model nb_model, features text[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features tsvector) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features jsonb) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_jsonb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;

CREATE FUNCTION nb_coverage(model nb_model, features float8[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_coverage(nb_model, text[]) IS 'share of the row''s tokens (each occurrence counted) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, tsvector) IS 'share of the row''s lexemes (each position counted) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, jsonb) IS 'share of the row''s features (bag tokens with their counts, categorical values, numbers, booleans; null values left out) that the model knows; 0 when it knows none or the row has none';

COMMENT ON FUNCTION nb_coverage(nb_model, float8[]) IS 'share of the row''s non-NULL elements that the model knows: 1, or 0 when every element is NULL';

CREATE FUNCTION nb_coverage(model nb_model, body text) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_coverage(nb_model, text) IS 'share of the tokens of a document of text (tokenized with the model''s tokenizer, each occurrence counted) that the model knows; 0 when it knows none or the document has none';

-- ---------------------------------------------------------------------------
-- 0.10.0: live models, learning from unlabelled rows, calibrated
-- probabilities, evaluation that distributes.

-- ---------------------------------------------------------------------------
-- Learning from unlabelled rows: semi-supervised training by EM (Nigam,
-- McCallum, Thrun & Mitchell 2000).  nb_train_em_trace trains a model of the
-- labelled rows, then runs the aggregate nbc_em_step over the table once per
-- iteration: each row is scored with the current model (the E-step) and
-- added to the next one in the same pass (the M-step), an unlabelled row to
-- every class with weight lambda times its posterior; the pass also sums the
-- current model's log likelihood (src/nb_em.h).  nb_train_em returns the
-- last model.

CREATE TYPE nbc_em_step AS (model nb_model, log_likelihood float8);

COMMENT ON TYPE nbc_em_step IS 'result of one EM iteration (nbc_em_step): the next model and the log likelihood of the current one';

CREATE FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_em_step_array_transfn' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_em_step_transfn(internal, nb_model, text, tsvector, float8, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_em_step_tsvector_transfn' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb, jsonb) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_em_step_array_transfn' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_em_step_final(internal) RETURNS nbc_em_step
	AS 'MODULE_PATHNAME', 'nb_em_step_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nbc_em_step(model nb_model, label text, features text[], lambda float8, options jsonb) (
	SFUNC = nbc_em_step_transfn, STYPE = internal, FINALFUNC = nbc_em_step_final);

CREATE AGGREGATE nbc_em_step(model nb_model, label text, features tsvector, lambda float8, options jsonb) (
	SFUNC = nbc_em_step_transfn, STYPE = internal, FINALFUNC = nbc_em_step_final);

CREATE AGGREGATE nbc_em_step(model nb_model, label text, tokens text[], lambda float8, options jsonb,
							 tokenizer jsonb) (
	SFUNC = nbc_em_step_transfn, STYPE = internal, FINALFUNC = nbc_em_step_final);

COMMENT ON AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb) IS 'one EM iteration over the rows (NULL label: unlabelled): the model trained with each unlabelled row in every class weighted by lambda times its posterior under model, and the log likelihood of model';

COMMENT ON AGGREGATE nbc_em_step(nb_model, text, tsvector, float8, jsonb) IS 'one EM iteration over the rows (NULL label: unlabelled): the model trained with each unlabelled row in every class weighted by lambda times its posterior under model, and the log likelihood of model';

COMMENT ON AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb, jsonb) IS 'one EM iteration over documents given as their tokens (nb_tokens): the new model keeps the tokenizer';

-- nbc_em_run does the work of both: each iteration as a row (trace), or only
-- the last, so that nb_train_em keeps one model at a time rather than a
-- tuplestore of them all.
CREATE FUNCTION nbc_em_run(rel regclass, label_column text, features_column text,
						   options jsonb, trace boolean)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
LANGUAGE plpgsql STABLE
-- relocatable: nbc's objects through its schema, found at run time
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	cols record;
	ftype regtype;
	lambda float8 := 1;
	max_iterations integer := 20;
	tolerance float8 := 1e-6;
	tokenizer jsonb;
	train_options jsonb;
	features_sql text;
	step_sql text;
	first record;
	step record;
	previous float8;
	k integer := 0;
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	options := coalesce(options, '{}');
	IF jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_train_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' THEN
		IF jsonb_typeof(options -> 'lambda') <> 'number' THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		lambda := (options ->> 'lambda')::float8;
		IF NOT lambda BETWEEN 0 AND 1 THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be between 0 and 1'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
	END IF;
	IF options ? 'iterations' THEN
		IF jsonb_typeof(options -> 'iterations') <> 'number'
		   OR (options ->> 'iterations')::numeric NOT BETWEEN 0 AND 1000
		   OR (options ->> 'iterations')::numeric <> trunc((options ->> 'iterations')::numeric) THEN
			RAISE EXCEPTION 'nb_train_em option "iterations" must be an integer from 0 to 1000'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'iterations');
		END IF;
		max_iterations := (options ->> 'iterations')::integer;
	END IF;
	IF options ? 'tolerance' THEN
		IF jsonb_typeof(options -> 'tolerance') <> 'number'
		   OR (options ->> 'tolerance')::numeric < 0 THEN
			RAISE EXCEPTION 'nb_train_em option "tolerance" must be a number at least 0'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'tolerance');
		END IF;
		tolerance := (options ->> 'tolerance')::float8;
	END IF;
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer', '{}');
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	ELSIF ftype = 'character varying[]'::regtype THEN
		ftype := 'text[]'::regtype;
	END IF;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;

	-- An error or a cancel in an internal statement is raised again with a
	-- sentence saying what EM was doing (doing; NULL: nothing to add), as
	-- nb_cross_validate does, instead of a CONTEXT quoting the statement.
	BEGIN
	-- the model of the labelled rows, and how many rows are unlabelled
	doing := format('EM on "%s" was training the model of the labelled rows.', rel);
	EXECUTE format('SELECT %1$s.nb_train(%2$I::text, %3$I::%4$s%5$s) FILTER (WHERE %2$I IS NOT NULL) AS model, '
				   'count(*) FILTER (WHERE %2$I IS NULL AND %3$I IS NOT NULL) AS unlabelled FROM %6$s',
				   ext, label_column, features_column, ftype,
				   CASE WHEN ftype = 'text'::regtype THEN ', $1' ELSE '' END, rel)
		INTO first USING tokenizer;
	doing := NULL;
	IF first.model IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled row', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'EM starts from a model of the rows whose label is not NULL (and whose features are not NULL).';
	END IF;
	-- the OUT column model holds the current model (a variable of type
	-- nb_model would need nbc's schema in the search path)
	model := first.model;
	IF train_options IS NOT NULL THEN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, train_options;
	END IF;

	-- one pass per iteration: the current model is a parameter, which the
	-- plan takes as a constant, so that it is prepared once per pass
	features_sql := CASE ftype
		WHEN 'text'::regtype THEN format('%s.nb_tokens(%I::text, $4)', ext, features_column)
		ELSE format('%I::%s', features_column, ftype) END;
	step_sql := format('SELECT (s).model, (s).log_likelihood FROM '
					   '(SELECT %s.nbc_em_step($1, %I::text, %s, $2, $3%s) AS s FROM %s OFFSET 0) q',
					   ext, label_column, features_sql,
					   CASE WHEN ftype = 'text'::regtype THEN ', $4' ELSE '' END, rel);
	LOOP
		doing := format('EM on "%s" was in iteration %s.', rel, k + 1);
		EXECUTE step_sql INTO step USING model, lambda, train_options, tokenizer;
		doing := NULL;
		IF progress THEN
			RAISE NOTICE 'nb_train_em: iteration %, log likelihood %', k, round(step.log_likelihood::numeric, 3)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
		iteration := k;
		log_likelihood := step.log_likelihood;
		IF trace THEN
			RETURN NEXT;
		END IF;
		-- nothing to learn from; the last iteration; converged.  The first
		-- model's vocabulary is the labelled rows' only, so its log
		-- likelihood is not comparable: from the second iteration on.
		EXIT WHEN first.unlabelled = 0 OR lambda = 0 OR k >= max_iterations;
		EXIT WHEN k >= 2 AND step.log_likelihood - previous <= tolerance * abs(previous);
		previous := step.log_likelihood;
		model := step.model;
		IF train_options IS NOT NULL THEN
			EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, train_options;
		END IF;
		k := k + 1;
	END LOOP;
	IF NOT trace THEN
		RETURN NEXT;
	END IF;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_detail = '' AND e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
		ELSIF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		ELSIF e_detail = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
END
$$;

COMMENT ON FUNCTION nbc_em_run(regclass, text, text, jsonb, boolean) IS 'the work of nb_train_em (trace false: the last iteration only) and nb_train_em_trace (trace true: every iteration)';

CREATE FUNCTION nb_train_em_trace(rel regclass, label_column text, features_column text,
								  options jsonb DEFAULT NULL)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_run($1, $2, $3, $4, true)', ext)
		USING rel, label_column, features_column, options;
END
$$;

COMMENT ON FUNCTION nb_train_em_trace(regclass, text, text, jsonb) IS 'semi-supervised training by EM (rows with a NULL label are unlabelled): each iteration''s model with its log likelihood';

CREATE FUNCTION nb_train_em(rel regclass, label_column text, features_column text,
							options jsonb DEFAULT NULL)
RETURNS nb_model
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	result record;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT model FROM %s.nbc_em_run($1, $2, $3, $4, false)', ext)
		INTO result USING rel, label_column, features_column, options;
	RETURN result.model;
END
$$;

COMMENT ON FUNCTION nb_train_em(regclass, text, text, jsonb) IS 'semi-supervised training by EM (Nigam et al. 2000): a model of the labelled rows improved with the unlabelled ones (those with a NULL label)';

-- Calibrated probabilities (issue #31, part 2; nb_calibrate.h, pg_calibrate.c).
-- Two prediction options map a row's posteriors after scoring, in every
-- function that scores: "temperature" T (log posteriors divided by T and
-- normalized again) and "sigmoid" (Platt's sigmoid per class, as
-- scikit-learn's CalibratedClassifierCV(method="sigmoid")).  nb_calibrate
-- fits either on out-of-fold posteriors, folds as nb_cross_validate makes
-- them (no refitting: each fold's model is nb_subtract(whole, fold)), and
-- returns the options that apply it, for nb_with_options.
--
-- nbc_calibration_scores(model, features, actual, options, classes): the
-- rows' log posteriors under the model as a float8[rows][1 + classes]
-- (the actual class's position in classes, then each class's log
-- posterior); nbc_calibration_fit(method, scores, classes, options): the
-- fit, as jsonb.
CREATE FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text[], text, jsonb, text[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nbc_calibration_scores_array' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_calibration_scores_transfn(internal, nb_model, tsvector, text, jsonb, text[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nbc_calibration_scores_tsvector' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_calibration_scores_transfn(internal, nb_model, jsonb, text, jsonb, text[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nbc_calibration_scores_jsonb' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_calibration_scores_transfn(internal, nb_model, float8[], text, jsonb, text[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nbc_calibration_scores_float8' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text, text, jsonb, text[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nbc_calibration_scores_text' LANGUAGE C PARALLEL SAFE;

CREATE FUNCTION nbc_calibration_scores_final(internal) RETURNS float8[]
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nbc_calibration_scores(model nb_model, features text[], actual text, options jsonb, classes text[]) (
	SFUNC = nbc_calibration_scores_transfn, STYPE = internal, FINALFUNC = nbc_calibration_scores_final);

CREATE AGGREGATE nbc_calibration_scores(model nb_model, features tsvector, actual text, options jsonb, classes text[]) (
	SFUNC = nbc_calibration_scores_transfn, STYPE = internal, FINALFUNC = nbc_calibration_scores_final);

CREATE AGGREGATE nbc_calibration_scores(model nb_model, features jsonb, actual text, options jsonb, classes text[]) (
	SFUNC = nbc_calibration_scores_transfn, STYPE = internal, FINALFUNC = nbc_calibration_scores_final);

CREATE AGGREGATE nbc_calibration_scores(model nb_model, features float8[], actual text, options jsonb, classes text[]) (
	SFUNC = nbc_calibration_scores_transfn, STYPE = internal, FINALFUNC = nbc_calibration_scores_final);

CREATE AGGREGATE nbc_calibration_scores(model nb_model, body text, actual text, options jsonb, classes text[]) (
	SFUNC = nbc_calibration_scores_transfn, STYPE = internal, FINALFUNC = nbc_calibration_scores_final);

CREATE FUNCTION nbc_calibration_fit(method text, scores float8[], classes text[], options jsonb) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- nb_calibrate: the rows and folds of nb_cross_validate (the same checks,
-- the same assignment of rows to folds), one training pass (a model per
-- fold and their merge), then passes of up to 8 folds scoring each fold's
-- rows with its out-of-fold model, and the fit on all of them (method
-- "auto": both, the one of the lower out-of-fold log loss kept, or neither
-- when neither lowers it).
CREATE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
							 folds integer DEFAULT NULL, options jsonb DEFAULT NULL,
							 fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL,
							 method text DEFAULT 'auto')
RETURNS TABLE (calibrated_options jsonb, log_loss float8, calibrated_log_loss float8,
			   brier float8, calibrated_brier float8)
LANGUAGE plpgsql STABLE
-- relocatable: nbc's objects through its schema, the rest from pg_catalog
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	fold_type regtype;
	hash text;
	rows_sql text;
	fold_sql text;
	per_fold text;
	part float8[];
	scores float8[];
	fold_order integer[];
	classes text[];
	trained record;
	cols record;
	fitted jsonb;
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL OR method IS NULL THEN
		RAISE EXCEPTION 'relation, label column, features column and method must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF method NOT IN ('auto', 'temperature', 'sigmoid') THEN
		RAISE EXCEPTION 'unrecognized calibration method "%"', method
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Valid methods are "auto", "temperature" and "sigmoid".';
	END IF;
	IF options ? 'temperature' OR options ? 'sigmoid' THEN
		RAISE EXCEPTION 'options to calibrate must not be calibrated already'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The options name "temperature" or "sigmoid"; calibration fits them.';
	END IF;
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	END IF;
	-- the folds of nb_cross_validate: rows numbered by label, then a hash of their contents
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
		WHEN 'text'::regtype THEN format('hashtextextended(%I::text COLLATE "C", 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text, text[], tsvector, jsonb or float8[].';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- An error in an internal statement is raised again with a sentence
	-- saying what calibration was doing, not the generated statement.
	doing := format('Calibration on "%s" was training a model per fold.', rel);
	BEGIN
		EXECUTE format(
			'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
			'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
			'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
			'       sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
			'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
			'      FROM (%2$s) r GROUP BY fold) f',
			ext, rows_sql,
			CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
			INTO trained;
		IF trained.folds IS NULL THEN
			RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'A row needs a label, features and a fold.';
		END IF;
		IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
			RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('%s rows to calibrate on in %s folds.', array_length(trained.folds, 1), folds);
		END IF;
		IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
			RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Each fold is scored by a model of the rows outside it.';
		END IF;
		EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
			INTO classes USING trained.whole;
		IF array_length(classes, 1) < 2 THEN
			RAISE EXCEPTION 'relation "%" has one class', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Calibration needs rows of at least two classes.';
		END IF;
		-- the options are checked against the model before any fold is scored
		doing := format('Calibration on "%s" was checking the options.', rel);
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;

		-- each fold's rows scored with its out-of-fold model, a constant of the
		-- plan (see nb_cross_validate), up to 8 folds per pass, in fold order
		fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
		FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
			per_fold := '';
			FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
				per_fold := per_fold || format('%1$s%2$s.nbc_calibration_scores(%2$s.nb_subtract($3, $%3$s), r.features, r.actual, $1, $2) '
											   'FILTER (WHERE r.fold = %4$s)',
											   CASE WHEN i > b * 8 + 1 THEN ' || ' END, ext, i - b * 8 + 3,
											   trained.folds[fold_order[i]]);
			END LOOP;
			doing := format('Calibration on "%s" was scoring folds %s to %s of %s.',
							rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
			EXECUTE format('SELECT %s FROM (SELECT * FROM (%s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r',
						   per_fold, rows_sql)
				INTO part
				USING options, classes, trained.whole,
					  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
					  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
					  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
					  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
			scores := scores || part;
		END LOOP;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	EXECUTE format('SELECT %s.nbc_calibration_fit($1, $2, $3, $4)', ext)
		INTO fitted USING method, scores, classes, options;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8,
						(fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;
COMMENT ON FUNCTION nb_calibrate(regclass, text, text, integer, jsonb, text, jsonb, text) IS 'fit calibrated probabilities (method auto, temperature or sigmoid) on the out-of-fold posteriors of k-fold cross-validation: the options that apply them, and the out-of-fold log loss and Brier score before and after';

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

-- ---------------------------------------------------------------------------
-- Cross-validation on Citus (#32): nb_cross_validate with a fold column on a
-- distributed table had Citus evaluate each fold's out-of-fold model on the
-- workers and ship it with every row (minutes for thousands of rows).  When
-- the relation is a Citus table or a view reading one, the rows now come to
-- the coordinator first, into a temporary table (so the function is no
-- longer STABLE), or in a read-only transaction through a MATERIALIZED CTE;
-- elsewhere nothing changes.
CREATE OR REPLACE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (below)
LANGUAGE plpgsql VOLATILE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	fold_type regtype;
	hash text;
	rows_sql text;
	scored_sql text;
	on_citus boolean := false;
	rows_copied boolean := false;
	fold_sql text;
	option_sets jsonb[];
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	fold_order integer[];
	trained record;
	cols record;
	n_classes bigint;
	-- nbc.progress: a NOTICE per pass, its elapsed time in the DETAIL
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
	-- what the internal statements were doing when they failed (see below)
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	-- the columns: each must exist; features must be of a type nbc trains on
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	-- a domain counts as its base type
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	-- documents in a varchar column are text
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	END IF;
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
		WHEN 'text'::regtype THEN format('hashtextextended(%I::text COLLATE "C", 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text, text[], tsvector, jsonb or float8[].';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	-- the rows: label as text, features as they are, fold (NULL: training only)
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- On Citus, when the relation is a Citus table (distributed or reference)
	-- or a view that reads one, the rows come to the coordinator once, into a
	-- temporary table that both passes then read locally.  Read directly,
	-- Citus would evaluate each fold's nb_subtract on the workers, its two
	-- models constants of the worker query, and ship a whole model with every
	-- row.  Where no table can be made (a read-only transaction, no right to
	-- make temporary tables, or the name taken) the scoring passes read the rows through a MATERIALIZED CTE,
	-- which Citus runs first as a subplan: slower, since the training is then
	-- combined from every shard's partial models, and the query that scores
	-- carries the folds' models in its text.
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		-- the relation and, through the rules of views, what they read
		EXECUTE 'WITH RECURSIVE reads(relid) AS ('
				'    SELECT $1::oid'
				'    UNION'
				'    SELECT d.refobjid FROM reads'
				'    JOIN pg_catalog.pg_rewrite w ON w.ev_class = reads.relid'
				'    JOIN pg_catalog.pg_depend d ON d.classid = ''pg_catalog.pg_rewrite''::regclass'
				'                               AND d.objid = w.oid'
				'                               AND d.refclassid = ''pg_catalog.pg_class''::regclass)'
				'SELECT EXISTS (SELECT FROM reads JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid = reads.relid)'
			INTO on_citus USING rel;
	END IF;
	rows_copied := on_citus AND NOT current_setting('transaction_read_only')::boolean
				   AND has_database_privilege(current_database(), 'TEMPORARY')
				   AND to_regclass('pg_temp.nbc_cross_validate_rows') IS NULL;

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring query below, so that
	-- only a batch of them is ever in memory (a leave-one-out model is nearly
	-- the whole).  A fold holds every row when its rows are all the rows.
	--
	-- An error or a cancel in an internal statement is raised again from here
	-- with its SQLSTATE, message, detail and hint, and a sentence saying what
	-- cross-validation was doing: PostgreSQL's CONTEXT would otherwise quote
	-- the whole generated statement (near 1,000 characters per batch of folds).
	doing := format('Cross-validation of "%s" was training a model per fold.', rel);
	BEGIN
	IF rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_cross_validate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_cross_validate_rows';
	END IF;
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql,
		CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	-- the rows a scoring pass reads: those in a fold
	scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
	IF on_citus AND NOT rows_copied THEN
		scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
	END IF;
	IF trained.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained.folds, 1), folds);
	END IF;
	IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING trained.whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;

	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
	grid := trained.grid;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING grid;
	IF progress THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
	END IF;

	-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
	-- nb_subtract(whole, fold's model) of two parameters, so that the planner
	-- computes it once as a constant of the plan: the model is prepared once
	-- with a scorer per option set, and each row is looked up once and scored
	-- under every option set.  (Parameters of their own: one array of all the
	-- models, subscripted in the query, made the planner copy the whole array
	-- for each fold.)  The rows come in fold order, so that one model's
	-- tables are in use at a time (interleaved, the models' tables together
	-- fall out of the CPU's caches: a third slower).  At most 8 folds per
	-- pass over the rows: each fold's prepared model stays in memory until
	-- its query ends, and a query has at most 1664 columns, so that
	-- leave-one-out (a fold per row) works too.  The means and spreads add
	-- the folds in their order, whatever the plan, so that the results do
	-- not depend on it to the last bit.
	FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   trained.folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		doing := format('Cross-validation of "%s" was scoring folds %s to %s of %s.',
						rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
		BEGIN
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
					   per_fold, scored_sql)
			INTO batch
			USING option_sets, trained.whole,
				  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
				  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
				  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
				  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
		EXCEPTION WHEN query_canceled OR others THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
									e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
			IF e_hint = '' THEN
				RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
			END IF;
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
		END;
		-- [fold][option set]
		fold_metrics := fold_metrics || batch;
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %',
				b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	IF rows_copied THEN
		DROP TABLE pg_temp.nbc_cross_validate_rows;
	END IF;
	RETURN QUERY EXECUTE
		'WITH s AS (SELECT k, n, (m[k][n] ->> ''accuracy'')::float8 AS accuracy, '
		'                  (m[k][n] -> ''macro'' ->> ''f1'')::float8 AS macro_f1, (m[k][n] ->> ''log_loss'')::float8 AS log_loss '
		'           FROM (SELECT $2 AS m) a, generate_subscripts($2, 1) AS k, generate_subscripts($2, 2) AS n) '
		'SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k), '
		'       avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k), '
		'       avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k) '
		'FROM unnest($1) WITH ORDINALITY AS g(options, n) JOIN s USING (n) '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n'
		USING option_sets, fold_metrics;
END
$$;


-- ---------------------------------------------------------------------------
-- Live models (issue #30): a model that is always nb_train over a table, kept
-- current by statement-level triggers on the table (src/pg_live.c explains
-- the design: a base model plus one delta row per writing statement, folded
-- into the base past a bound; README "Live models" the use).
--
-- The extension is relocatable, so no script can name its schema: every
-- function runs with search_path pg_catalog, pg_temp and finds the
-- extension's schema at run time (the C functions: the schema of their own
-- declaration; the PL/pgSQL ones: pg_extension).  The tables belong to the
-- extension's owner; row-level security shows a live model and its deltas
-- to the roles that can SELECT its source table, and lets only the source's
-- owner (or a member of the owning role) create, rebase or drop one.
-- Writers to the source need no privilege on these tables: the trigger
-- writes their deltas as the tables' owner (pg_live.c).

CREATE TABLE nbc_live (
	id serial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	source regclass NOT NULL,
	tokenizer jsonb,
	fold_after integer NOT NULL,
	folded_through bigint NOT NULL DEFAULT 0,
	base nb_model
);

CREATE TABLE nbc_live_delta (
	live_id integer NOT NULL,
	id bigserial,
	source regclass NOT NULL,
	reset boolean NOT NULL,
	added nb_model,
	removed nb_model,
	PRIMARY KEY (live_id, id)
);

-- Folding rewrites the base every fold_after statements: stored out of line
-- but not compressed, it costs a copy, not a compression (pglz would take
-- most of a writer's time), and reading it no decompression.
ALTER TABLE nbc_live ALTER COLUMN base SET STORAGE EXTERNAL;

-- pg_dump dumps the live models' rows with the tables they follow
SELECT pg_catalog.pg_extension_config_dump('nbc_live', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_delta', '');
SELECT pg_catalog.pg_extension_config_dump('nbc_live_delta_id_seq', '');

ALTER TABLE nbc_live ENABLE ROW LEVEL SECURITY;
ALTER TABLE nbc_live_delta ENABLE ROW LEVEL SECURITY;

CREATE POLICY nbc_live_read ON nbc_live FOR SELECT
	USING (pg_catalog.has_table_privilege(source, 'SELECT'));
CREATE POLICY nbc_live_create ON nbc_live FOR INSERT
	WITH CHECK (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_rebase ON nbc_live FOR UPDATE
	USING (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_drop ON nbc_live FOR DELETE
	USING (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = source), 'USAGE'));
CREATE POLICY nbc_live_delta_read ON nbc_live_delta FOR SELECT
	USING (pg_catalog.has_table_privilege(source, 'SELECT'));

REVOKE ALL ON nbc_live, nbc_live_delta FROM PUBLIC;
GRANT SELECT, INSERT, DELETE ON nbc_live TO PUBLIC;
GRANT UPDATE (base) ON nbc_live TO PUBLIC;
GRANT USAGE ON SEQUENCE nbc_live_id_seq TO PUBLIC;
GRANT SELECT ON nbc_live_delta TO PUBLIC;

CREATE FUNCTION nbc_live_capture() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C;

CREATE FUNCTION nbc_live_train(live_id integer) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION nb_live(name text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nbc_live_read' LANGUAGE C STRICT STABLE PARALLEL RESTRICTED;

CREATE FUNCTION nb_live_fold(name text) RETURNS void
	AS 'MODULE_PATHNAME', 'nbc_live_fold' LANGUAGE C STRICT VOLATILE;

-- The live model's columns are those of its trigger nbc_live_<id>_columns
-- (UPDATE OF label, features [, weight], never fired: WHEN (false)), so that
-- they follow renames and dumps, and cannot be dropped or change type while
-- it exists.
CREATE FUNCTION nb_live_create(name text, source regclass, label name, features name,
		weight name DEFAULT NULL, options jsonb DEFAULT NULL) RETURNS void
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	rel record;
	col name;
	ty oid;
	key text;
	tokenizer jsonb := options -> 'tokenizer';
	fold_after integer := 256;
	id integer;
	tg text;
BEGIN
	IF name IS NULL OR source IS NULL OR label IS NULL OR features IS NULL THEN
		RAISE EXCEPTION 'a live model needs a name, a source table, a label column and a features column'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'nb_live_create must run in a READ COMMITTED transaction'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = 'An older snapshot could miss rows written before the live model''s triggers existed.';
	END IF;
	FOR key IN SELECT jsonb_object_keys(options) LOOP
		IF key NOT IN ('tokenizer', 'fold_after') THEN
			RAISE EXCEPTION 'unknown live model option "%"', key
				USING ERRCODE = 'invalid_parameter_value', HINT = 'The options are tokenizer and fold_after.';
		END IF;
	END LOOP;
	IF options ? 'fold_after' THEN
		IF jsonb_typeof(options -> 'fold_after') <> 'number'
		   OR (options ->> 'fold_after')::numeric NOT BETWEEN 1 AND 10000
		   OR (options ->> 'fold_after')::numeric <> trunc((options ->> 'fold_after')::numeric) THEN
			RAISE EXCEPTION 'fold_after must be an integer from 1 to 10000'
				USING ERRCODE = 'numeric_value_out_of_range';
		END IF;
		fold_after := (options ->> 'fold_after')::integer;
	END IF;
	IF jsonb_typeof(tokenizer) = 'null' THEN
		tokenizer := NULL;
	END IF;

	SELECT c.relkind, c.relowner, c.relispartition INTO rel FROM pg_class c WHERE c.oid = source;
	IF rel.relkind = 'p' OR rel.relispartition
	   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = source OR i.inhparent = source) THEN
		RAISE EXCEPTION 'live models over partitioned or inheritance tables are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has partitions or inheritance children or parents, whose rows statement triggers on it do not all see.', source);
	END IF;
	IF rel.relkind <> 'r' THEN
		RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
	END IF;
	IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a table (or a member of the owning role) can create a live model over it.';
	END IF;
	-- no writer may commit between the base and the triggers
	EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', source);

	FOREACH col IN ARRAY ARRAY[label, features, weight] LOOP
		CONTINUE WHEN col IS NULL;
		ty := (SELECT a.atttypid FROM pg_attribute a
			   WHERE a.attrelid = source AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped);
		IF ty IS NULL THEN
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, source
				USING ERRCODE = 'undefined_column';
		END IF;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) = 'd' LOOP
			ty := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ty);
		END LOOP;
		IF col = label AND (SELECT t.typcategory FROM pg_type t WHERE t.oid = ty) = 'A' THEN
			RAISE EXCEPTION 'label column "%" is an array', col USING ERRCODE = 'datatype_mismatch';
		ELSIF col = features AND ty NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype,
											 'jsonb'::regtype, 'float8[]'::regtype) THEN
			RAISE EXCEPTION 'features column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch',
				HINT = 'nb_train takes features of type text, text[], tsvector, jsonb or float8[].';
		ELSIF col = features AND tokenizer IS NOT NULL AND ty <> 'text'::regtype THEN
			RAISE EXCEPTION 'a tokenizer applies only to features of type text' USING ERRCODE = 'invalid_parameter_value';
		ELSIF col = weight AND ty NOT IN ('float8'::regtype, 'float4'::regtype, 'int2'::regtype,
										   'int4'::regtype, 'int8'::regtype, 'numeric'::regtype) THEN
			RAISE EXCEPTION 'weight column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch', HINT = 'A weight is a number.';
		END IF;
	END LOOP;
	IF tokenizer IS NOT NULL THEN
		-- the tokenizer's options are checked as nb_tokens checks them
		EXECUTE format('SELECT %s.nb_tokens('''', $1)', s) USING tokenizer;
	END IF;

	BEGIN
		EXECUTE format('INSERT INTO %s.nbc_live (name, source, tokenizer, fold_after) VALUES ($1, $2, $3, $4) RETURNING id', s)
			INTO id USING name, source, tokenizer, fold_after;
	EXCEPTION WHEN unique_violation THEN
		RAISE EXCEPTION 'live model "%" already exists', name USING ERRCODE = 'duplicate_object';
	END;
	tg := 'nbc_live_' || id || '_';
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE OF %s ON %s FOR EACH STATEMENT WHEN (false) EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'columns', concat_ws(', ', quote_ident(label), quote_ident(features), quote_ident(weight)),
				   source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS nbc_new FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'insert', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS nbc_old NEW TABLE AS nbc_new FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'update', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS nbc_old FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'delete', source, s, id);
	EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s.nbc_live_capture(%s)',
				   tg || 'truncate', source, s, id);
	EXECUTE format('UPDATE %1$s.nbc_live SET base = %1$s.nbc_live_train($1) WHERE id = $1', s) USING id;
END
$$;

-- the deltas of live models that no longer exist (run as the tables' owner;
-- harmless to anyone: nb_live_drop calls it as its caller)
CREATE FUNCTION nbc_live_forget() RETURNS void
	LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
BEGIN
	IF s IS NOT NULL AND to_regclass(s || '.nbc_live_delta') IS NOT NULL THEN
		EXECUTE format('DELETE FROM %1$s.nbc_live_delta d WHERE NOT EXISTS (SELECT FROM %1$s.nbc_live l WHERE l.id = d.live_id)', s);
	END IF;
END
$$;

CREATE FUNCTION nb_live_drop(name text) RETURNS void
	LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	id integer;
	source regclass;
	tg name;
BEGIN
	EXECUTE format('SELECT id, source FROM %s.nbc_live WHERE name = $1', s) INTO id, source USING name;
	IF id IS NULL THEN
		RAISE EXCEPTION 'live model "%" does not exist', name USING ERRCODE = 'undefined_object',
			HINT = 'nb_lives lists the live models you can read.';
	END IF;
	IF NOT pg_has_role((SELECT c.relowner FROM pg_class c WHERE c.oid = source), 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a live model''s source table (or a member of the owning role) can drop it.';
	END IF;
	FOR tg IN SELECT t.tgname FROM pg_trigger t
			  WHERE t.tgrelid = source AND t.tgname LIKE 'nbc\_live\_' || id || '\_%' LOOP
		EXECUTE format('DROP TRIGGER %I ON %s', tg, source);
	END LOOP;
	EXECUTE format('DELETE FROM %s.nbc_live WHERE id = $1', s) USING id;
	EXECUTE format('SELECT %s.nbc_live_forget()', s);
END
$$;

-- DROP TABLE drops the live models over the table (their triggers go with it).
CREATE FUNCTION nbc_live_dropped() RETURNS event_trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
BEGIN
	IF s IS NULL OR to_regclass(s || '.nbc_live') IS NULL
	   OR NOT EXISTS (SELECT FROM pg_event_trigger_dropped_objects() o
					  WHERE o.classid = 'pg_class'::regclass AND o.objsubid = 0 AND o.object_type = 'table') THEN
		RETURN;
	END IF;
	EXECUTE format('DELETE FROM %s.nbc_live WHERE source::oid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o WHERE o.classid = ''pg_class''::regclass AND o.objsubid = 0)', s);
	EXECUTE format('SELECT %s.nbc_live_forget()', s);
END
$$;
REVOKE ALL ON FUNCTION nbc_live_dropped() FROM PUBLIC;

CREATE EVENT TRIGGER nbc_live_dropped ON sql_drop EXECUTE FUNCTION nbc_live_dropped();

-- The live models the current role can read, with their source and size.
CREATE VIEW nb_lives WITH (security_invoker = true) AS
SELECT l.name, l.source,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[0]) AS label,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[1]) AS features,
	(SELECT a.attname FROM pg_catalog.pg_attribute a WHERE a.attrelid = l.source AND a.attnum = t.tgattr[2]) AS weight,
	l.tokenizer, l.fold_after,
	(SELECT count(*) FROM nbc_live_delta d WHERE d.live_id = l.id) AS pending_deltas,
	pg_catalog.pg_column_size(l.base) AS base_bytes,
	(SELECT COALESCE(sum(COALESCE(pg_catalog.pg_column_size(d.added), 0) + COALESCE(pg_catalog.pg_column_size(d.removed), 0)), 0)
	 FROM nbc_live_delta d WHERE d.live_id = l.id)::bigint AS delta_bytes
FROM nbc_live l
LEFT JOIN pg_catalog.pg_trigger t ON t.tgrelid = l.source AND t.tgname = 'nbc_live_' || l.id || '_columns';
GRANT SELECT ON nb_lives TO PUBLIC;

COMMENT ON FUNCTION nb_live_create(text, regclass, name, name, name, jsonb) IS 'create a live model: nb_train over the table''s label and features (and weight) columns, kept exact by triggers as rows change (options: tokenizer, fold_after)';
COMMENT ON FUNCTION nb_live(text) IS 'the live model of this name: nb_train over its source table as the current snapshot sees it';
COMMENT ON FUNCTION nb_live_drop(text) IS 'drop a live model and its triggers';
COMMENT ON FUNCTION nb_live_fold(text) IS 'fold a live model''s pending deltas into its base now (the result does not change)';
COMMENT ON VIEW nb_lives IS 'the live models the current role can read, with their source, columns, pending deltas and size';

-- ---------------------------------------------------------------------------
-- 0.11.0

-- ---------------------------------------------------------------------------
-- Cross-validation's rows, one definition (#31): nb_cross_validate and
-- nb_calibrate checked their arguments and made the query of the rows and
-- their folds each with the same 40 lines; nbc_cross_validation_rows does
-- it for both, and so nb_calibrate also brings a Citus table's rows to the
-- coordinator first, as nb_cross_validate does (#32; it is VOLATILE now).
-- Messages, SQLSTATEs and results are as before; an error of the checks
-- has this function in its CONTEXT too.
CREATE FUNCTION nbc_cross_validation_rows(rel regclass, label_column text, features_column text,
										  folds integer, fold_column text, tokenizer jsonb,
										  rows_table text,
										  OUT ftype regtype, OUT rows_sql text,
										  OUT on_citus boolean, OUT rows_copied boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	fold_type regtype;
	hash text;
	fold_sql text;
	cols record;
BEGIN
	on_citus := false;
	IF folds IS NOT NULL AND fold_column IS NOT NULL THEN
		RAISE EXCEPTION 'folds and fold_column cannot both be given'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	folds := coalesce(folds, 5);
	IF fold_column IS NULL AND folds < 2 THEN
		RAISE EXCEPTION 'folds must be at least 2'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The number of folds is %s.', folds);
	END IF;
	-- the columns: each must exist; features must be of a type nbc trains on
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = fold_column AND a.attnum > 0 AND NOT a.attisdropped) AS fold_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF fold_column IS NOT NULL AND cols.fold_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', fold_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	-- a domain counts as its base type
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	-- documents in a varchar column are text
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	END IF;
	-- the hash that orders rows for the folds: of the contents, never of
	-- their place in the table
	hash := CASE ftype
		WHEN 'text[]'::regtype THEN format('hash_array_extended(%I::text[] COLLATE "C", 0)', features_column)
		WHEN 'float8[]'::regtype THEN format('hash_array_extended(%I::float8[], 0)', features_column)
		WHEN 'jsonb'::regtype THEN format('jsonb_hash_extended(%I::jsonb, 0)', features_column)
		WHEN 'tsvector'::regtype THEN format('hashtextextended(%I::text, 0)', features_column)
		WHEN 'text'::regtype THEN format('hashtextextended(%I::text COLLATE "C", 0)', features_column)
	END;
	IF hash IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'Features must be text, text[], tsvector, jsonb or float8[].';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;
	IF fold_column IS NOT NULL THEN
		fold_type := cols.fold_type;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = fold_type) = 'd' LOOP
			fold_type := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = fold_type);
		END LOOP;
		IF fold_type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
			RAISE EXCEPTION 'column "%" of relation "%" has type %', fold_column, rel, cols.fold_type
				USING ERRCODE = 'datatype_mismatch',
					  HINT = 'Folds must be smallint, integer or bigint.';
		END IF;
		fold_sql := format('%I::bigint', fold_column);
	ELSE
		fold_sql := format('(row_number() OVER (ORDER BY %I::text COLLATE "C", %s) - 1) %% %s',
						   label_column, hash, folds);
	END IF;
	-- the rows: label as text, features as they are, fold (NULL: training only)
	rows_sql := format('SELECT %s AS fold, %I::text AS actual, %I::%s AS features FROM %s '
					   'WHERE %I IS NOT NULL AND %I IS NOT NULL',
					   fold_sql, label_column, features_column, ftype, rel,
					   label_column, features_column);

	-- On Citus, when the relation is a Citus table (distributed or reference)
	-- or a view that reads one, the rows come to the coordinator once, into a
	-- temporary table that both passes then read locally.  Read directly,
	-- Citus would evaluate each fold's nb_subtract on the workers, its two
	-- models constants of the worker query, and ship a whole model with every
	-- row.  Where no table can be made (a read-only transaction, no right to
	-- make temporary tables, or the name taken) the scoring passes read the rows through a MATERIALIZED CTE,
	-- which Citus runs first as a subplan: slower, since the training is then
	-- combined from every shard's partial models, and the query that scores
	-- carries the folds' models in its text.
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		-- the relation and, through the rules of views, what they read
		EXECUTE 'WITH RECURSIVE reads(relid) AS ('
				'    SELECT $1::oid'
				'    UNION'
				'    SELECT d.refobjid FROM reads'
				'    JOIN pg_catalog.pg_rewrite w ON w.ev_class = reads.relid'
				'    JOIN pg_catalog.pg_depend d ON d.classid = ''pg_catalog.pg_rewrite''::regclass'
				'                               AND d.objid = w.oid'
				'                               AND d.refclassid = ''pg_catalog.pg_class''::regclass)'
				'SELECT EXISTS (SELECT FROM reads JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid = reads.relid)'
			INTO on_citus USING rel;
	END IF;
	rows_copied := on_citus AND NOT current_setting('transaction_read_only')::boolean
				   AND has_database_privilege(current_database(), 'TEMPORARY')
				   AND to_regclass('pg_temp.' || quote_ident(rows_table)) IS NULL;
END
$$;
COMMENT ON FUNCTION nbc_cross_validation_rows(regclass, text, text, integer, text, jsonb, text) IS 'the checks of nb_cross_validate''s and nb_calibrate''s arguments and the query of their rows and folds: the features'' type, the query, whether the relation is or reads a Citus table, and whether its rows are to be copied into the temporary table rows_table';

CREATE OR REPLACE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (below)
LANGUAGE plpgsql VOLATILE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	rows_sql text;
	scored_sql text;
	on_citus boolean;
	setup record;
	rows_copied boolean := false;
	option_sets jsonb[];
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	fold_order integer[];
	trained record;
	n_classes bigint;
	-- nbc.progress: a NOTICE per pass, its elapsed time in the DETAIL
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
	-- what the internal statements were doing when they failed (see below)
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_calibrate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_cross_validate_rows';
	folds := coalesce(folds, 5);
	ftype := setup.ftype;
	rows_sql := setup.rows_sql;
	on_citus := setup.on_citus;
	rows_copied := setup.rows_copied;

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring query below, so that
	-- only a batch of them is ever in memory (a leave-one-out model is nearly
	-- the whole).  A fold holds every row when its rows are all the rows.
	--
	-- An error or a cancel in an internal statement is raised again from here
	-- with its SQLSTATE, message, detail and hint, and a sentence saying what
	-- cross-validation was doing: PostgreSQL's CONTEXT would otherwise quote
	-- the whole generated statement (near 1,000 characters per batch of folds).
	doing := format('Cross-validation of "%s" was training a model per fold.', rel);
	BEGIN
	IF rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_cross_validate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_cross_validate_rows';
	END IF;
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql,
		CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	-- the rows a scoring pass reads: those in a fold
	scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
	IF on_citus AND NOT rows_copied THEN
		scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
	END IF;
	IF trained.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained.folds, 1), folds);
	END IF;
	IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;

	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING trained.whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;

	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
	grid := trained.grid;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING grid;
	IF progress THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
	END IF;

	-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
	-- nb_subtract(whole, fold's model) of two parameters, so that the planner
	-- computes it once as a constant of the plan: the model is prepared once
	-- with a scorer per option set, and each row is looked up once and scored
	-- under every option set.  (Parameters of their own: one array of all the
	-- models, subscripted in the query, made the planner copy the whole array
	-- for each fold.)  The rows come in fold order, so that one model's
	-- tables are in use at a time (interleaved, the models' tables together
	-- fall out of the CPU's caches: a third slower).  At most 8 folds per
	-- pass over the rows: each fold's prepared model stays in memory until
	-- its query ends, and a query has at most 1664 columns, so that
	-- leave-one-out (a fold per row) works too.  The means and spreads add
	-- the folds in their order, whatever the plan, so that the results do
	-- not depend on it to the last bit.
	FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   trained.folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		doing := format('Cross-validation of "%s" was scoring folds %s to %s of %s.',
						rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
		BEGIN
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
					   per_fold, scored_sql)
			INTO batch
			USING option_sets, trained.whole,
				  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
				  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
				  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
				  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
		EXCEPTION WHEN query_canceled OR others THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
									e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
			IF e_hint = '' THEN
				RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
			END IF;
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
		END;
		-- [fold][option set]
		fold_metrics := fold_metrics || batch;
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %',
				b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	IF rows_copied THEN
		DROP TABLE pg_temp.nbc_cross_validate_rows;
	END IF;
	RETURN QUERY EXECUTE
		'WITH s AS (SELECT k, n, (m[k][n] ->> ''accuracy'')::float8 AS accuracy, '
		'                  (m[k][n] -> ''macro'' ->> ''f1'')::float8 AS macro_f1, (m[k][n] ->> ''log_loss'')::float8 AS log_loss '
		'           FROM (SELECT $2 AS m) a, generate_subscripts($2, 1) AS k, generate_subscripts($2, 2) AS n) '
		'SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k), '
		'       avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k), '
		'       avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k) '
		'FROM unnest($1) WITH ORDINALITY AS g(options, n) JOIN s USING (n) '
		'GROUP BY g.n, g.options '
		'ORDER BY 2 DESC, 4 DESC, 6, g.n'
		USING option_sets, fold_metrics;
END
$$;

CREATE OR REPLACE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
							 folds integer DEFAULT NULL, options jsonb DEFAULT NULL,
							 fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL,
							 method text DEFAULT 'auto')
RETURNS TABLE (calibrated_options jsonb, log_loss float8, calibrated_log_loss float8,
			   brier float8, calibrated_brier float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (nb_cross_validate)
LANGUAGE plpgsql VOLATILE
-- relocatable: nbc's objects through its schema, the rest from pg_catalog
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	rows_sql text;
	scored_sql text;
	on_citus boolean;
	rows_copied boolean;
	setup record;
	per_fold text;
	part float8[];
	scores float8[];
	fold_order integer[];
	classes text[];
	trained record;
	fitted jsonb;
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL OR method IS NULL THEN
		RAISE EXCEPTION 'relation, label column, features column and method must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF method NOT IN ('auto', 'temperature', 'sigmoid') THEN
		RAISE EXCEPTION 'unrecognized calibration method "%"', method
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Valid methods are "auto", "temperature" and "sigmoid".';
	END IF;
	IF options ? 'temperature' OR options ? 'sigmoid' THEN
		RAISE EXCEPTION 'options to calibrate must not be calibrated already'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The options name "temperature" or "sigmoid"; calibration fits them.';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_cross_validate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_calibrate_rows';
	folds := coalesce(folds, 5);
	ftype := setup.ftype;
	rows_sql := setup.rows_sql;
	on_citus := setup.on_citus;
	rows_copied := setup.rows_copied;

	-- An error in an internal statement is raised again with a sentence
	-- saying what calibration was doing, not the generated statement.
	doing := format('Calibration on "%s" was training a model per fold.', rel);
	BEGIN
		-- on Citus the rows come to the coordinator first (see nb_cross_validate)
		IF rows_copied THEN
			EXECUTE format('CREATE TEMPORARY TABLE nbc_calibrate_rows ON COMMIT DROP AS %s', rows_sql);
			rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_calibrate_rows';
		END IF;
		scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
		IF on_citus AND NOT rows_copied THEN
			scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
		END IF;
		EXECUTE format(
			'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
			'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
			'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
			'       sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
			'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
			'      FROM (%2$s) r GROUP BY fold) f',
			ext, rows_sql,
			CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
			INTO trained;
		IF trained.folds IS NULL THEN
			RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'A row needs a label, features and a fold.';
		END IF;
		IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
			RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('%s rows to calibrate on in %s folds.', array_length(trained.folds, 1), folds);
		END IF;
		IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
			RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Each fold is scored by a model of the rows outside it.';
		END IF;
		EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
			INTO classes USING trained.whole;
		IF array_length(classes, 1) < 2 THEN
			RAISE EXCEPTION 'relation "%" has one class', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Calibration needs rows of at least two classes.';
		END IF;
		-- the options are checked against the model before any fold is scored
		doing := format('Calibration on "%s" was checking the options.', rel);
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;

		-- each fold's rows scored with its out-of-fold model, a constant of the
		-- plan (see nb_cross_validate), up to 8 folds per pass, in fold order
		fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
		FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
			per_fold := '';
			FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
				per_fold := per_fold || format('%1$s%2$s.nbc_calibration_scores(%2$s.nb_subtract($3, $%3$s), r.features, r.actual, $1, $2) '
											   'FILTER (WHERE r.fold = %4$s)',
											   CASE WHEN i > b * 8 + 1 THEN ' || ' END, ext, i - b * 8 + 3,
											   trained.folds[fold_order[i]]);
			END LOOP;
			doing := format('Calibration on "%s" was scoring folds %s to %s of %s.',
							rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
			EXECUTE format('SELECT %s FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
						   per_fold, scored_sql)
				INTO part
				USING options, classes, trained.whole,
					  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
					  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
					  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
					  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
			scores := scores || part;
		END LOOP;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF rows_copied THEN
		DROP TABLE pg_temp.nbc_calibrate_rows;
	END IF;
	EXECUTE format('SELECT %s.nbc_calibration_fit($1, $2, $3, $4)', ext)
		INTO fitted USING method, scores, classes, options;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8,
						(fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;

-- ---------------------------------------------------------------------------
-- Live models: tiered folding (issue #30, the write overhead).  The automatic
-- fold merges the pending deltas into one delta and rewrites the base only
-- once those merged deltas weigh a quarter of it or number 16
-- (src/pg_live.c, fold_auto).  based_through is the last delta the base
-- took: the merged deltas are those past it, up to folded_through.
ALTER TABLE nbc_live ADD COLUMN based_through bigint NOT NULL DEFAULT 0;
UPDATE nbc_live SET based_through = folded_through;

-- ---------------------------------------------------------------------------
-- 0.12.0

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


-- ---------------------------------------------------------------------------
-- nb_train_em's iterations driven in C (issue #31, section 1: an iteration
-- costs at most twice an nb_train and an nb_predict_proba pass, with many
-- classes too).  nbc_em_iterate reads the rows with a cursor once per
-- iteration and keeps the current model in its own memory between them
-- (src/pg_em_run.c); nbc_em_run keeps its checks and the model of the
-- labelled rows, and calls it instead of running the aggregate nbc_em_step
-- once per iteration, which passed the model between statements (copied
-- several times per iteration) and prepared it through the backend's cache.

CREATE FUNCTION nbc_em_iterate(model nb_model, rel regclass, label_column text, features_column text,
							   features_type regtype, lambda float8, options jsonb, tokenizer jsonb,
							   iterations integer, tolerance float8, unlabelled bigint,
							   trace boolean, started timestamptz)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
AS 'MODULE_PATHNAME', 'nb_em_iterate' LANGUAGE C STABLE;

COMMENT ON FUNCTION nbc_em_iterate(nb_model, regclass, text, text, regtype, float8, jsonb, jsonb, integer, float8, bigint, boolean, timestamptz) IS 'the iterations of nb_train_em from the model of the labelled rows (nbc_em_run checks the arguments): every iteration (trace true) or the last';

CREATE OR REPLACE FUNCTION nbc_em_run(rel regclass, label_column text, features_column text,
						   options jsonb, trace boolean)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
LANGUAGE plpgsql STABLE
-- relocatable: nbc's objects through its schema, found at run time
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	cols record;
	ftype regtype;
	lambda float8 := 1;
	max_iterations integer := 20;
	tolerance float8 := 1e-6;
	tokenizer jsonb;
	train_options jsonb;
	first record;
	started timestamptz := clock_timestamp();
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	options := coalesce(options, '{}');
	IF jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_train_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' THEN
		IF jsonb_typeof(options -> 'lambda') <> 'number' THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		lambda := (options ->> 'lambda')::float8;
		IF NOT lambda BETWEEN 0 AND 1 THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be between 0 and 1'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
	END IF;
	IF options ? 'iterations' THEN
		IF jsonb_typeof(options -> 'iterations') <> 'number'
		   OR (options ->> 'iterations')::numeric NOT BETWEEN 0 AND 1000
		   OR (options ->> 'iterations')::numeric <> trunc((options ->> 'iterations')::numeric) THEN
			RAISE EXCEPTION 'nb_train_em option "iterations" must be an integer from 0 to 1000'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'iterations');
		END IF;
		max_iterations := (options ->> 'iterations')::integer;
	END IF;
	IF options ? 'tolerance' THEN
		IF jsonb_typeof(options -> 'tolerance') <> 'number'
		   OR (options ->> 'tolerance')::numeric < 0 THEN
			RAISE EXCEPTION 'nb_train_em option "tolerance" must be a number at least 0'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'tolerance');
		END IF;
		tolerance := (options ->> 'tolerance')::float8;
	END IF;
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer', '{}');
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';

	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	ELSIF ftype = 'character varying[]'::regtype THEN
		ftype := 'text[]'::regtype;
	END IF;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;

	-- An error or a cancel in an internal statement is raised again with a
	-- sentence saying what EM was doing (doing; NULL: nothing to add), as
	-- nb_cross_validate does, instead of a CONTEXT quoting the statement.
	BEGIN
	-- the model of the labelled rows, and how many rows are unlabelled
	doing := format('EM on "%s" was training the model of the labelled rows.', rel);
	EXECUTE format('SELECT %1$s.nb_train(%2$I::text, %3$I::%4$s%5$s) FILTER (WHERE %2$I IS NOT NULL) AS model, '
				   'count(*) FILTER (WHERE %2$I IS NULL AND %3$I IS NOT NULL) AS unlabelled FROM %6$s',
				   ext, label_column, features_column, ftype,
				   CASE WHEN ftype = 'text'::regtype THEN ', $1' ELSE '' END, rel)
		INTO first USING tokenizer;
	doing := NULL;
	IF first.model IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled row', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'EM starts from a model of the rows whose label is not NULL (and whose features are not NULL).';
	END IF;
	-- the OUT column model holds the current model (a variable of type
	-- nb_model would need nbc's schema in the search path)
	model := first.model;
	IF train_options IS NOT NULL THEN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, train_options;
	END IF;

	-- the iterations, in C (src/pg_em_run.c), which adds what it was doing
	-- to an error of its own; without trace, a row of the last iteration
	-- only (RETURN QUERY: the model is copied once more, not three times
	-- as by INTO and RETURN NEXT)
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', ext)
		USING model, rel, label_column, features_column, ftype, lambda, train_options, tokenizer,
			  max_iterations, tolerance, first.unlabelled, trace, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_detail = '' AND e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
		ELSIF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		ELSIF e_detail = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
END
$$;



-- ---------------------------------------------------------------------------
-- nb_grid_options makes each option set as it returns it (#26 item 5): it
-- built every combination of a part's values as one jsonb array, key after
-- key, and copied them into its result: 14 MB for its largest grid of
-- 10,000 small sets.  The same sets in the same order; errors as before.
CREATE OR REPLACE FUNCTION nb_grid_options(grid jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 20
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	part jsonb;
	k text;
	vals jsonb;
	sets bigint := 0;
	part_sets bigint;
	key_names text[];
	key_lens bigint[];
	key_strides bigint[];
	option_set jsonb;
BEGIN
	IF jsonb_typeof(grid) = 'object' THEN
		grid := jsonb_build_array(grid);
	ELSIF jsonb_typeof(grid) <> 'array' OR jsonb_array_length(grid) = 0 THEN
		RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('The grid is %s.', grid);
	END IF;
	FOR part IN SELECT e FROM jsonb_array_elements(grid) AS e LOOP
		IF jsonb_typeof(part) <> 'object' THEN
			RAISE EXCEPTION 'grid must be an object or a non-empty array of objects'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Element %s is not an object.', part);
		END IF;
		-- count the option sets before making any: a few lists multiply
		part_sets := 1;
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) = 'array' THEN
				part_sets := part_sets * greatest(jsonb_array_length(vals), 1);
			END IF;
			EXIT WHEN part_sets > 10000;
		END LOOP;
		sets := sets + part_sets;
		IF sets > 10000 THEN
			RAISE EXCEPTION 'grid has more than 10000 option sets'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = 'Every combination of an object''s values is an option set.',
					  HINT = 'Give fewer values per key, or search the grid in parts.';
		END IF;
		key_names := '{}';
		key_lens := '{}';
		FOR k, vals IN SELECT key, value FROM jsonb_each(part) LOOP
			IF jsonb_typeof(vals) = 'array' AND jsonb_array_length(vals) = 0 THEN
				RAISE EXCEPTION 'grid key "%" has no values', k
					USING ERRCODE = 'invalid_parameter_value';
			END IF;
			key_names := key_names || k;
			key_lens := key_lens || CASE WHEN jsonb_typeof(vals) = 'array' THEN jsonb_array_length(vals) ELSE 1 END::bigint;
		END LOOP;
		-- option set s (from 0) is a number in mixed radix, a digit per key
		-- in the object's key order, the last key's the fastest: each set is
		-- made as it is returned, and none is held but in the result
		key_strides := array_fill(1::bigint, ARRAY[greatest(cardinality(key_names), 1)]);
		FOR i IN REVERSE cardinality(key_names) - 1 .. 1 LOOP
			key_strides[i] := key_strides[i + 1] * key_lens[i + 1];
		END LOOP;
		FOR s IN 0 .. part_sets - 1 LOOP
			option_set := '{}';
			FOR i IN 1 .. cardinality(key_names) LOOP
				vals := part -> key_names[i];
				IF jsonb_typeof(vals) = 'array' THEN
					vals := vals -> ((s / key_strides[i]) % key_lens[i])::integer;
				END IF;
				option_set := option_set || jsonb_build_object(key_names[i], vals);
			END LOOP;
			RETURN NEXT option_set;
		END LOOP;
	END LOOP;
END
$$;

-- ---------------------------------------------------------------------------
-- 0.13.0

-- ---------------------------------------------------------------------------
-- Live models as tables of their own (#39).  0.10.0 kept every live model in
-- two tables of the extension: a role reading one live model's row could not
-- be kept from the others' (row-level security on the source was not
-- followed), a database owner who was not a superuser could not dump them,
-- and their names were global.  Now a live model is a table, created beside
-- its source (or where its qualified name says) and owned by its creator: one
-- row of id 0 holds the base model and the settings, one row per writing
-- statement its delta.  Its name, privileges, persistence (TEMP), dump and
-- restore are PostgreSQL's own for tables: a role reads a live model with
-- SELECT on its table, folds it with UPDATE, drops it with DROP TABLE (or
-- nb_live_drop).  The triggers on the source name the table in their WHEN
-- clause ('table'::regclass IS NOT NULL, always true): that follows renames
-- and dumps, and keeps the table from being dropped without its triggers.
-- src/pg_live.c has the rest of the design.

-- Make live model state, over source, with its triggers: the table exists
-- (nb_live_create made it, or the update from 0.12.0 did).  The triggers are
-- nbc_live_<n>_insert, _update, _delete, _truncate and _columns (UPDATE OF
-- label, features [, weight], never fired: WHEN (false) AND ..., so that the
-- columns follow renames and dumps and cannot be dropped or change type while
-- it exists), n the least free on source.
CREATE FUNCTION nbc_live_attach(state regclass, source regclass, label name, features name, weight name)
	RETURNS text
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	n integer := 1;
	tg text;
	is_state text := format('(%L::pg_catalog.regclass IS NOT NULL)', state::text);
BEGIN
	WHILE EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = source AND t.tgname LIKE 'nbc\_live\_' || n || '\_%') LOOP
		n := n + 1;
	END LOOP;
	tg := 'nbc_live_' || n || '_';
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE OF %s ON %s FOR EACH STATEMENT WHEN (false AND %s) EXECUTE FUNCTION %s.nbc_live_capture()',
				   tg || 'columns', concat_ws(', ', quote_ident(label), quote_ident(features), quote_ident(weight)),
				   source, is_state, s);
	EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS nbc_new FOR EACH STATEMENT WHEN %s EXECUTE FUNCTION %s.nbc_live_capture()',
				   tg || 'insert', source, is_state, s);
	EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS nbc_old NEW TABLE AS nbc_new FOR EACH STATEMENT WHEN %s EXECUTE FUNCTION %s.nbc_live_capture()',
				   tg || 'update', source, is_state, s);
	EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS nbc_old FOR EACH STATEMENT WHEN %s EXECUTE FUNCTION %s.nbc_live_capture()',
				   tg || 'delete', source, is_state, s);
	EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT WHEN %s EXECUTE FUNCTION %s.nbc_live_capture()',
				   tg || 'truncate', source, is_state, s);
	RETURN tg;
END
$$;

-- The table of a live model over source, named name (qualified, or in the
-- source's schema), TEMP when the source is.
CREATE FUNCTION nbc_live_table(name text, source regclass) RETURNS regclass
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	src record;
	parts text[] := parse_ident(name);
	target text;
BEGIN
	SELECT c.relnamespace, c.relpersistence INTO src FROM pg_class c WHERE c.oid = source;
	IF cardinality(parts) = 1 THEN
		target := format('%I.%I', (SELECT n.nspname FROM pg_namespace n WHERE n.oid = src.relnamespace), parts[1]);
	ELSIF cardinality(parts) = 2 THEN
		target := format('%I.%I', parts[1], parts[2]);
	ELSE
		RAISE EXCEPTION 'improper live model name "%"', name USING ERRCODE = 'invalid_name',
			HINT = 'A live model is named as a table is: name or schema.name.';
	END IF;
	EXECUTE format('CREATE %s TABLE %s (
			id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
			reset boolean NOT NULL DEFAULT false,
			added %3$s.nb_model,
			removed %3$s.nb_model,
			source regclass,
			tokenizer jsonb,
			fold_after integer,
			folded_through bigint,
			based_through bigint,
			triggers text)',
		CASE WHEN src.relpersistence = 't' THEN 'TEMP' ELSE '' END, target, s);
	-- a TEMP table's live model dies with its session, and no other one does
	IF (SELECT c.relpersistence FROM pg_class c WHERE c.oid = target::regclass) <> src.relpersistence THEN
		RAISE EXCEPTION 'a live model is TEMP exactly when its source is' USING ERRCODE = 'invalid_schema_name',
			DETAIL = format('Live model %s and table %s would not live as long as each other.', target, source);
	END IF;
	-- the base is rewritten by folds: stored out of line but not compressed,
	-- it costs a copy, not a compression, and reading it no decompression
	EXECUTE format('ALTER TABLE %s ALTER COLUMN added SET STORAGE EXTERNAL', target);
	EXECUTE format('COMMENT ON TABLE %s IS %L', target,
				   format('nbc live model: nb_train over %s (read it with nb_live)', source));
	RETURN target::regclass;
END
$$;

-- nb_live_create's checks of the source, its columns and the extension's schema
CREATE FUNCTION nbc_live_check(source regclass, label name, features name, weight name, tokenizer jsonb)
	RETURNS void
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	rel record;
	col name;
	ty oid;
	distributed boolean;
BEGIN
	SELECT c.relkind, c.relowner, c.relispartition, c.relrowsecurity, c.relpersistence INTO rel
	FROM pg_class c WHERE c.oid = source;
	IF rel.relkind = 'p' OR rel.relispartition
	   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = source OR i.inhparent = source) THEN
		RAISE EXCEPTION 'live models over partitioned or inheritance tables are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has partitions or inheritance children or parents, whose rows statement triggers on it do not all see.', source);
	END IF;
	IF rel.relkind <> 'r' THEN
		RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
	END IF;
	-- Citus: a distributed (or reference) table's rows are written on the
	-- workers, where the source's triggers do not run
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = $1)'
			INTO distributed USING source;
		IF distributed THEN
			RAISE EXCEPTION 'live models over distributed tables are not supported'
				USING ERRCODE = 'feature_not_supported',
				DETAIL = format('Table %s is a Citus distributed or reference table, whose rows are written on the workers.', source),
				HINT = 'Train with the aggregate instead: SELECT nb_train(...) FROM the table, which Citus runs on the workers.';
		END IF;
	END IF;
	IF rel.relpersistence = 'u' THEN
		RAISE EXCEPTION 'live models over unlogged tables are not supported' USING ERRCODE = 'feature_not_supported',
			DETAIL = format('A crash empties table %s but not its live model.', source);
	END IF;
	IF rel.relrowsecurity THEN
		RAISE EXCEPTION 'live models over tables with row-level security are not supported'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = format('Table %s has row-level security enabled: a live model holds the model of every row, which its policies hide from some roles.', source);
	END IF;
	IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', source USING ERRCODE = 'insufficient_privilege',
			HINT = 'Only the owner of a table (or a member of the owning role) can create a live model over it.';
	END IF;
	-- the triggers call the extension's functions by name: nobody but the
	-- schema's owner may be able to put a look-alike beside them
	IF EXISTS (SELECT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace,
			   aclexplode(COALESCE(n.nspacl, acldefault('n', n.nspowner))) a
			   WHERE e.extname = 'nbc' AND a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner) THEN
		RAISE EXCEPTION 'cannot create a live model while the schema of extension nbc is writable by others'
			USING ERRCODE = 'insufficient_privilege',
			DETAIL = 'A role with CREATE on that schema could define functions that every writer to the source would run.',
			HINT = 'REVOKE CREATE on that schema from every role but its owner, or move the extension (ALTER EXTENSION nbc SET SCHEMA).';
	END IF;

	FOREACH col IN ARRAY ARRAY[label, features, weight] LOOP
		CONTINUE WHEN col IS NULL;
		ty := (SELECT a.atttypid FROM pg_attribute a
			   WHERE a.attrelid = source AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped);
		IF ty IS NULL THEN
			RAISE EXCEPTION 'column "%" of relation % does not exist', col, source
				USING ERRCODE = 'undefined_column';
		END IF;
		WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) = 'd' LOOP
			ty := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ty);
		END LOOP;
		IF col = label AND (SELECT t.typcategory FROM pg_type t WHERE t.oid = ty) = 'A' THEN
			RAISE EXCEPTION 'label column "%" is an array', col USING ERRCODE = 'datatype_mismatch';
		ELSIF col = label AND ty NOT IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype,
										  '"char"'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype,
										  'oid'::regtype, 'numeric'::regtype, 'bool'::regtype, 'uuid'::regtype)
			  AND (SELECT t.typtype FROM pg_type t WHERE t.oid = ty) <> 'e' THEN
			-- the label types whose text form no session setting changes
			RAISE EXCEPTION 'label column "%" is of type %, whose text form depends on session settings', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch',
				DETAIL = 'A live model names its classes by the labels'' text, which must be the same in every writer''s session.',
				HINT = 'Use a label column of a text, integer, numeric, boolean, uuid or enum type (a generated column can convert one).';
		ELSIF col = features AND ty NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype,
											 'jsonb'::regtype, 'float8[]'::regtype) THEN
			RAISE EXCEPTION 'features column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch',
				HINT = 'nb_train takes features of type text, text[], tsvector, jsonb or float8[].';
		ELSIF col = features AND tokenizer IS NOT NULL AND ty <> 'text'::regtype THEN
			RAISE EXCEPTION 'a tokenizer applies only to features of type text' USING ERRCODE = 'invalid_parameter_value';
		ELSIF col = weight AND ty NOT IN ('float8'::regtype, 'float4'::regtype, 'int2'::regtype,
										   'int4'::regtype, 'int8'::regtype, 'numeric'::regtype) THEN
			RAISE EXCEPTION 'weight column "%" is of type %', col, ty::regtype
				USING ERRCODE = 'datatype_mismatch', HINT = 'A weight is a number.';
		END IF;
	END LOOP;
END
$$;

-- nbc_live_train(state): the model of a live model's source as its owner
-- reads it (nb_live_create's base), trained as the triggers train
CREATE FUNCTION nbc_live_train(state regclass) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C STRICT VOLATILE;

-- The live models of 0.12.0 become tables, named as they were, in their
-- source's schema, owned by their source's owner, with the same deltas and
-- ids (each table's identity continues past the last id of them all).
DO $$
DECLARE
	l record;
	state regclass;
	t record;
	tg text;
	last_id bigint := (SELECT last_value FROM nbc_live_delta_id_seq);
BEGIN
	FOR l IN SELECT * FROM nbc_live ORDER BY id LOOP
		SELECT (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = l.source AND a.attnum = g.tgattr[0]) AS label,
			   (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = l.source AND a.attnum = g.tgattr[1]) AS features,
			   (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = l.source AND a.attnum = g.tgattr[2]) AS weight
		INTO t FROM pg_trigger g WHERE g.tgrelid = l.source AND g.tgname = 'nbc_live_' || l.id || '_columns';
		FOR tg IN SELECT g.tgname FROM pg_trigger g
				  WHERE g.tgrelid = l.source AND g.tgname LIKE 'nbc\_live\_' || l.id || '\_%' LOOP
			EXECUTE format('DROP TRIGGER %I ON %s', tg, l.source);
		END LOOP;
		CONTINUE WHEN t.label IS NULL OR t.features IS NULL;
		state := nbc_live_table(l.name, l.source);
		EXECUTE format('ALTER TABLE %s OWNER TO %I', state,
					   (SELECT r.rolname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE c.oid = l.source));
		tg := nbc_live_attach(state, l.source, t.label, t.features, t.weight);
		EXECUTE format('INSERT INTO %s (id, added, source, tokenizer, fold_after, folded_through, based_through, triggers) '
					   'VALUES (0, $1, $2, $3, $4, $5, $6, $7)', state)
			USING l.base, l.source, l.tokenizer, l.fold_after, l.folded_through, l.based_through, tg;
		EXECUTE format('INSERT INTO %s (id, reset, added, removed) '
					   'SELECT d.id, d.reset, d.added, d.removed FROM nbc_live_delta d WHERE d.live_id = $1', state)
			USING l.id;
		PERFORM setval(pg_get_serial_sequence(state::text, 'id'), last_id);
	END LOOP;
END
$$;

DROP EVENT TRIGGER nbc_live_dropped;
DROP FUNCTION nbc_live_dropped();
DROP VIEW nb_lives;
DROP FUNCTION nb_live_drop(text);
DROP FUNCTION nbc_live_forget();
DROP FUNCTION nb_live_create(text, regclass, name, name, name, jsonb);
DROP FUNCTION nbc_live_train(integer);
ALTER EXTENSION nbc DROP TABLE nbc_live_delta;
ALTER EXTENSION nbc DROP TABLE nbc_live;
DROP TABLE nbc_live_delta, nbc_live;

CREATE FUNCTION nb_live_create(name text, source regclass, label name, features name,
		weight name DEFAULT NULL, options jsonb DEFAULT NULL) RETURNS regclass
	LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s text := (SELECT quote_ident(n.nspname) FROM pg_extension e
			   JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc');
	key text;
	tokenizer jsonb := options -> 'tokenizer';
	fold_after integer := 256;
	state regclass;
	tg text;
BEGIN
	IF name IS NULL OR source IS NULL OR label IS NULL OR features IS NULL THEN
		RAISE EXCEPTION 'a live model needs a name, a source table, a label column and a features column'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF current_setting('transaction_isolation') <> 'read committed' THEN
		RAISE EXCEPTION 'nb_live_create must run in a READ COMMITTED transaction'
			USING ERRCODE = 'feature_not_supported',
			DETAIL = 'An older snapshot could miss rows written before the live model''s triggers existed.';
	END IF;
	FOR key IN SELECT jsonb_object_keys(options) LOOP
		IF key NOT IN ('tokenizer', 'fold_after') THEN
			RAISE EXCEPTION 'unrecognized live model option "%"', key
				USING ERRCODE = 'invalid_parameter_value', HINT = 'The options are tokenizer and fold_after.';
		END IF;
	END LOOP;
	IF options ? 'fold_after' THEN
		IF jsonb_typeof(options -> 'fold_after') <> 'number'
		   OR (options ->> 'fold_after')::numeric NOT BETWEEN 1 AND 10000
		   OR (options ->> 'fold_after')::numeric <> trunc((options ->> 'fold_after')::numeric) THEN
			RAISE EXCEPTION 'fold_after must be an integer from 1 to 10000'
				USING ERRCODE = 'numeric_value_out_of_range';
		END IF;
		fold_after := (options ->> 'fold_after')::integer;
	END IF;
	IF jsonb_typeof(tokenizer) = 'null' THEN
		tokenizer := NULL;
	END IF;
	EXECUTE format('SELECT %s.nbc_live_check($1, $2, $3, $4, $5)', s) USING source, label, features, weight, tokenizer;
	IF tokenizer IS NOT NULL THEN
		-- the tokenizer's options are checked as nb_tokens checks them
		EXECUTE format('SELECT %s.nb_tokens('''', $1)', s) USING tokenizer;
	END IF;
	-- no writer may commit between the base and the triggers
	EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', source);
	EXECUTE format('SELECT %s.nbc_live_table($1, $2)', s) INTO state USING name, source;
	EXECUTE format('SELECT %s.nbc_live_attach($1, $2, $3, $4, $5)', s) INTO tg USING state, source, label, features, weight;
	EXECUTE format('INSERT INTO %s (id, source, tokenizer, fold_after, folded_through, based_through, triggers) '
				   'VALUES (0, $1, $2, $3, 0, 0, $4)', state) USING source, tokenizer, fold_after, tg;
	EXECUTE format('UPDATE %s SET added = %s.nbc_live_train($1) WHERE id = 0', state, s) USING state;
	RETURN state;
END
$$;

-- The live model named name (as a table is found: through search_path
-- unless qualified), or an error.  Not SET search_path: it resolves the
-- caller's name; every other name in it is qualified.
CREATE FUNCTION nbc_live_find(name text) RETURNS regclass
	LANGUAGE plpgsql STABLE STRICT
AS $$
DECLARE
	state regclass := pg_catalog.to_regclass(name);
BEGIN
	IF state IS NULL OR NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a
									WHERE a.attrelid OPERATOR(pg_catalog.=) state
									  AND a.attname OPERATOR(pg_catalog.=) 'triggers' AND NOT a.attisdropped) THEN
		RAISE EXCEPTION 'live model "%" does not exist', name USING ERRCODE = 'undefined_object',
			HINT = 'nb_lives lists the live models you can read.';
	END IF;
	RETURN state;
END
$$;

CREATE FUNCTION nb_live_drop(name text) RETURNS void
	LANGUAGE plpgsql VOLATILE STRICT
AS $$
DECLARE
	s text := (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e
			   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
			   WHERE e.extname OPERATOR(pg_catalog.=) 'nbc');
	state regclass;
	t record;
BEGIN
	EXECUTE pg_catalog.format('SELECT %s.nbc_live_find($1)', s) INTO state USING name;
	IF NOT pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) state), 'USAGE') THEN
		RAISE EXCEPTION 'must be owner of table %', state USING ERRCODE = 'insufficient_privilege';
	END IF;
	-- its triggers first: they depend on it (DROP TABLE ... CASCADE would also
	-- take any view a user made over it)
	FOR t IN SELECT g.tgname, g.tgrelid::pg_catalog.regclass AS source
			 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_trigger g ON g.oid OPERATOR(pg_catalog.=) d.objid
			 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_trigger'::pg_catalog.regclass
			   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND d.refobjid OPERATOR(pg_catalog.=) state LOOP
		EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', t.tgname, t.source);
	END LOOP;
	EXECUTE pg_catalog.format('DROP TABLE %s', state);
END
$$;

-- The live models the current role can read (SELECT on their table).
CREATE FUNCTION nbc_lives() RETURNS TABLE (name regclass, source regclass, label name, features name,
		weight name, tokenizer jsonb, fold_after integer, pending_deltas bigint, base_bytes integer,
		delta_bytes bigint)
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	state regclass;
BEGIN
	FOR state IN SELECT c.oid::regclass FROM pg_class c
				 WHERE c.relkind = 'r' AND (c.relpersistence <> 't' OR c.relnamespace = pg_my_temp_schema())
				   AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'triggers' AND NOT a.attisdropped)
				   AND EXISTS (SELECT FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
							   WHERE a.attrelid = c.oid AND a.attname = 'added' AND t.typname = 'nb_model'
								 AND t.typnamespace = (SELECT e.extnamespace FROM pg_extension e WHERE e.extname = 'nbc'))
				   AND has_table_privilege(c.oid, 'SELECT')
				 ORDER BY c.oid LOOP
		RETURN QUERY EXECUTE format(
			'SELECT $1, (SELECT c.oid::regclass FROM pg_class c WHERE c.oid = b.source), '
			'(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = b.source AND a.attnum = g.tgattr[0]), '
			'(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = b.source AND a.attnum = g.tgattr[1]), '
			'(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = b.source AND a.attnum = g.tgattr[2]), '
			'b.tokenizer, b.fold_after, d.n, pg_column_size(b.added), d.bytes '
			'FROM %1$s b LEFT JOIN pg_trigger g ON g.tgrelid = b.source AND g.tgname = b.triggers || ''columns'', '
			'LATERAL (SELECT count(*) AS n, COALESCE(sum(COALESCE(pg_column_size(x.added), 0) + '
			'COALESCE(pg_column_size(x.removed), 0)), 0)::bigint AS bytes FROM %1$s x WHERE x.id > 0) d '
			'WHERE b.id = 0', state) USING state;
	END LOOP;
END
$$;

CREATE VIEW nb_lives AS SELECT * FROM nbc_lives();
GRANT SELECT ON nb_lives TO PUBLIC;

COMMENT ON FUNCTION nb_live_create(text, regclass, name, name, name, jsonb) IS 'create a live model: a table of that name holding nb_train over the table''s label and features (and weight) columns, kept exact by triggers as rows change (options: tokenizer, fold_after)';
COMMENT ON FUNCTION nb_live_drop(text) IS 'drop a live model: its table and its triggers';
COMMENT ON VIEW nb_lives IS 'the live models the current role can read, with their source, columns, pending deltas and size';
COMMENT ON FUNCTION nb_live_fold(text) IS 'fold a live model''s pending deltas into its base now (the result does not change); needs UPDATE and DELETE on its table';

-- nbc_live_checked(result, base, added, removed): result, the live model of
-- base (NULL: none) with the models of added less those of removed, if each
-- class's weight in it is the exact sum of those (else 22P01, and the live
-- model is trained from its source instead: src/pg_live_check.c)
CREATE FUNCTION nbc_live_checked(result nb_model, base nb_model, added nb_model[], removed nb_model[])
	RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
-- the same check as a boolean (a read in parallel mode cannot catch an error)
CREATE FUNCTION nbc_live_exact(result nb_model, base nb_model, added nb_model[], removed nb_model[])
	RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- A source that would become a partition, get inheritance children or
-- parents, or turn unlogged has rows its triggers do not see (or loses them
-- in a crash while its live model keeps them): refused, as nb_live_create
-- refuses such a table.  Any role's DDL fires it; it reads only the catalog.
CREATE FUNCTION nbc_live_guard() RETURNS event_trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	capture regprocedure := (SELECT p.oid FROM pg_proc p JOIN pg_extension e ON e.extnamespace = p.pronamespace
							 WHERE e.extname = 'nbc' AND p.proname = 'nbc_live_capture');
	source regclass;
BEGIN
	SELECT t.tgrelid INTO source
	FROM pg_event_trigger_ddl_commands() c
	JOIN pg_trigger t ON t.tgfoid = capture
	JOIN pg_class r ON r.oid = t.tgrelid
	WHERE c.classid = 'pg_class'::regclass
	  AND (t.tgrelid = c.objid
		   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhrelid = t.tgrelid AND i.inhparent = c.objid)
		   OR EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = t.tgrelid AND i.inhrelid = c.objid))
	  AND (r.relispartition OR r.relpersistence = 'u'
		   OR EXISTS (SELECT FROM pg_inherits i WHERE t.tgrelid IN (i.inhrelid, i.inhparent)))
	LIMIT 1;
	IF source IS NOT NULL THEN
		RAISE EXCEPTION 'table % has a live model', source USING ERRCODE = 'object_not_in_prerequisite_state',
			DETAIL = 'A live model follows a plain, logged table without partitions or inheritance: its triggers would not see every row.',
			HINT = 'Drop the live model with nb_live_drop first.';
	END IF;
END
$$;

CREATE EVENT TRIGGER nbc_live_guard ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'CREATE TABLE AS')
	EXECUTE FUNCTION nbc_live_guard();

-- Memory bounded before it is taken (issue #40, part 1): nb_calibrate refuses
-- (54000) rows whose log posteriors would pass the scoring pass's limit
-- (256 MB, nbc_calibration_scores' own) right after training, before any
-- row is scored.
CREATE OR REPLACE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
							 folds integer DEFAULT NULL, options jsonb DEFAULT NULL,
							 fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL,
							 method text DEFAULT 'auto')
RETURNS TABLE (calibrated_options jsonb, log_loss float8, calibrated_log_loss float8,
			   brier float8, calibrated_brier float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (nb_cross_validate)
LANGUAGE plpgsql VOLATILE
-- relocatable: nbc's objects through its schema, the rest from pg_catalog
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	ftype regtype;
	rows_sql text;
	scored_sql text;
	on_citus boolean;
	rows_copied boolean;
	setup record;
	per_fold text;
	part float8[];
	scores float8[];
	fold_order integer[];
	classes text[];
	trained record;
	fitted jsonb;
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL OR method IS NULL THEN
		RAISE EXCEPTION 'relation, label column, features column and method must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF method NOT IN ('auto', 'temperature', 'sigmoid') THEN
		RAISE EXCEPTION 'unrecognized calibration method "%"', method
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Valid methods are "auto", "temperature" and "sigmoid".';
	END IF;
	IF options ? 'temperature' OR options ? 'sigmoid' THEN
		RAISE EXCEPTION 'options to calibrate must not be calibrated already'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'The options name "temperature" or "sigmoid"; calibration fits them.';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_cross_validate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_calibrate_rows';
	folds := coalesce(folds, 5);
	ftype := setup.ftype;
	rows_sql := setup.rows_sql;
	on_citus := setup.on_citus;
	rows_copied := setup.rows_copied;

	-- An error in an internal statement is raised again with a sentence
	-- saying what calibration was doing, not the generated statement.
	doing := format('Calibration on "%s" was training a model per fold.', rel);
	BEGIN
		-- on Citus the rows come to the coordinator first (see nb_cross_validate)
		IF rows_copied THEN
			EXECUTE format('CREATE TEMPORARY TABLE nbc_calibrate_rows ON COMMIT DROP AS %s', rows_sql);
			rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_calibrate_rows';
		END IF;
		scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
		IF on_citus AND NOT rows_copied THEN
			scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
		END IF;
		EXECUTE format(
			'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
			'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
			'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
			'       sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
			'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
			'      FROM (%2$s) r GROUP BY fold) f',
			ext, rows_sql,
			CASE WHEN ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
			INTO trained;
		IF trained.folds IS NULL THEN
			RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'A row needs a label, features and a fold.';
		END IF;
		IF fold_column IS NULL AND array_length(trained.folds, 1) < folds THEN
			RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('%s rows to calibrate on in %s folds.', array_length(trained.folds, 1), folds);
		END IF;
		IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
			RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Each fold is scored by a model of the rows outside it.';
		END IF;
		EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
			INTO classes USING trained.whole;
		IF array_length(classes, 1) < 2 THEN
			RAISE EXCEPTION 'relation "%" has one class', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = 'Calibration needs rows of at least two classes.';
		END IF;
		-- the scoring pass's limit (NB_CALIBRATION_MAX_BYTES in pg_calibrate.c),
		-- checked before any row is scored
		doing := format('Calibration on "%s" was counting its rows and classes.', rel);
		IF trained.all_rows * (array_length(classes, 1) + 1) * 8 > 268435456 THEN
			RAISE EXCEPTION 'too many rows to calibrate'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = format('The log posteriors of %s rows of %s classes would take %s bytes, more than the limit of 268435456.',
									  trained.all_rows, array_length(classes, 1),
									  trained.all_rows * (array_length(classes, 1) + 1) * 8);
		END IF;
		-- the options are checked against the model before any fold is scored
		doing := format('Calibration on "%s" was checking the options.', rel);
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;

		-- each fold's rows scored with its out-of-fold model, a constant of the
		-- plan (see nb_cross_validate), up to 8 folds per pass, in fold order
		fold_order := ARRAY(SELECT i FROM generate_subscripts(trained.folds, 1) AS i ORDER BY trained.folds[i]);
		FOR b IN 0 .. (array_length(trained.folds, 1) - 1) / 8 LOOP
			per_fold := '';
			FOR i IN b * 8 + 1 .. least(b * 8 + 8, array_length(trained.folds, 1)) LOOP
				per_fold := per_fold || format('%1$s%2$s.nbc_calibration_scores(%2$s.nb_subtract($3, $%3$s), r.features, r.actual, $1, $2) '
											   'FILTER (WHERE r.fold = %4$s)',
											   CASE WHEN i > b * 8 + 1 THEN ' || ' END, ext, i - b * 8 + 3,
											   trained.folds[fold_order[i]]);
			END LOOP;
			doing := format('Calibration on "%s" was scoring folds %s to %s of %s.',
							rel, b * 8 + 1, least(b * 8 + 8, array_length(trained.folds, 1)), array_length(trained.folds, 1));
			EXECUTE format('SELECT %s FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
						   per_fold, scored_sql)
				INTO part
				USING options, classes, trained.whole,
					  trained.models[fold_order[b * 8 + 1]], trained.models[fold_order[b * 8 + 2]],
					  trained.models[fold_order[b * 8 + 3]], trained.models[fold_order[b * 8 + 4]],
					  trained.models[fold_order[b * 8 + 5]], trained.models[fold_order[b * 8 + 6]],
					  trained.models[fold_order[b * 8 + 7]], trained.models[fold_order[b * 8 + 8]];
			scores := scores || part;
		END LOOP;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF rows_copied THEN
		DROP TABLE pg_temp.nbc_calibrate_rows;
	END IF;
	EXECUTE format('SELECT %s.nbc_calibration_fit($1, $2, $3, $4)', ext)
		INTO fitted USING method, scores, classes, options;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8,
						(fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;

-- ---------------------------------------------------------------------------
-- EM's weight chosen by cross-validation (#43, items 1 and 3; Nigam,
-- McCallum, Thrun & Mitchell 2000, section 5.2, "EM-lambda").
-- nb_cross_validate_em runs nb_train_em once per lambda of a grid and fold
-- of the labelled rows, the fold's labels left out and every unlabelled row
-- joining each fold's EM, and scores the fold's labelled rows; the folds
-- are nb_cross_validate's.  Lambda 0 is training on the labelled rows
-- alone, so its row is nb_cross_validate's for the same options.  The
-- chosen lambda is the one of the lowest mean log loss, unless its gain
-- over lambda 0 is within its standard error: then 0, with a NOTICE.
-- nb_train_em and nb_train_em_trace make the choice themselves for
-- "lambda": "auto" or an array of candidates.

-- nbc_em_cv_rows: the checks of nb_cross_validate's arguments and the
-- temporary table nbc_em_cv_rows (fold, actual, features) of the labelled
-- rows with their folds and the unlabelled rows (actual and fold NULL),
-- documents of text as their tokens, so that no EM run tokenizes them again.
CREATE FUNCTION nbc_em_cv_rows(rel regclass, label_column text, features_column text,
							   folds integer, fold_column text, tokenizer jsonb,
							   OUT ftype regtype, OUT fold_ids bigint[])
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	setup record;
	counts record;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_em_cv_rows';
	ftype := setup.ftype;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, ftype
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	EXECUTE format('CREATE TEMPORARY TABLE nbc_em_cv_rows ON COMMIT DROP AS '
				   'SELECT fold, actual, %1$s AS features FROM ('
				   '  %2$s UNION ALL '
				   '  SELECT NULL::bigint, NULL::text, %3$I::%4$s FROM %5$s WHERE %6$I IS NULL AND %3$I IS NOT NULL) r',
				   CASE WHEN ftype = 'text'::regtype THEN format('%s.nb_tokens(features, %L::jsonb)', ext, tokenizer)
						ELSE 'features' END,
				   setup.rows_sql, features_column, ftype, rel, label_column);
	EXECUTE 'SELECT array_agg(fold ORDER BY fold) AS folds, max(n) AS largest, '
			'       (SELECT count(*) FROM pg_temp.nbc_em_cv_rows WHERE actual IS NOT NULL) AS labelled '
			'FROM (SELECT fold, count(*) AS n FROM pg_temp.nbc_em_cv_rows '
			'      WHERE actual IS NOT NULL AND fold IS NOT NULL GROUP BY fold) f'
		INTO counts;
	IF counts.folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(counts.folds, 1) < coalesce(folds, 5) THEN
		RAISE EXCEPTION 'relation "%" has fewer labelled rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s labelled rows in %s folds.', array_length(counts.folds, 1), coalesce(folds, 5));
	END IF;
	IF counts.largest = counts.labelled THEN
		RAISE EXCEPTION 'one fold holds every labelled row of relation "%"', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the labelled rows outside it.';
	END IF;
	fold_ids := counts.folds;
END
$$;

COMMENT ON FUNCTION nbc_em_cv_rows(regclass, text, text, integer, text, jsonb) IS 'the work of nb_cross_validate_em before its EM runs: the checks, and the temporary table nbc_em_cv_rows of the labelled rows with their folds (nb_cross_validate''s) and the unlabelled rows';

-- nbc_em_cv_fold: for each lambda, nb_train_em on every row of
-- nbc_em_cv_rows outside the fold (through the temporary view
-- nbc_em_cv_fold) and nb_grid_metrics of its model on the fold's labelled
-- rows, in the order of lambdas.
CREATE FUNCTION nbc_em_cv_fold(fold bigint, lambdas float8[], options jsonb)
RETURNS jsonb[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	lambda float8;
	trained record;
	scores jsonb[];
	result jsonb[] := '{}';
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('CREATE OR REPLACE TEMPORARY VIEW nbc_em_cv_fold AS '
				   'SELECT actual, features FROM pg_temp.nbc_em_cv_rows WHERE fold IS DISTINCT FROM %s', fold);
	FOREACH lambda IN ARRAY lambdas LOOP
		EXECUTE format('SELECT model FROM %s.nbc_em_run(''pg_temp.nbc_em_cv_fold'', ''actual'', ''features'', $1, false)', ext)
			INTO trained USING options || jsonb_build_object('lambda', lambda);
		-- the model keeps the options it was trained with: '{}' scores with them
		EXECUTE format('SELECT %s.nb_grid_metrics($1, features, actual, ARRAY[''{}''::jsonb]) '
					   'FROM pg_temp.nbc_em_cv_rows WHERE fold = $2', ext)
			INTO scores USING trained.model, fold;
		result := result || scores[1];
	END LOOP;
	RETURN result;
END
$$;

COMMENT ON FUNCTION nbc_em_cv_fold(bigint, float8[], jsonb) IS 'one fold of nb_cross_validate_em: for each lambda, the metrics on the fold''s labelled rows of nb_train_em on the rows outside it';

-- nbc_em_cv_summary: a row per lambda (lambdas sorted, 0 first) of the
-- means and spreads over the folds of metrics[fold][lambda], and which is
-- chosen; the NOTICE when that is 0.
CREATE FUNCTION nbc_em_cv_summary(lambdas float8[], metrics jsonb[])
RETURNS TABLE (lambda float8, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8,
			   log_loss_gain float8, log_loss_gain_se float8, chosen boolean)
-- STABLE, not IMMUTABLE: it may raise a NOTICE, which planning must not do
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	per_lambda jsonb;
	zero jsonb;
	best jsonb;
	pick float8 := 0;
BEGIN
	-- the gain of a lambda: the fold's log loss at lambda 0 less its own,
	-- averaged; its standard error the folds' sample deviation / sqrt(folds)
	-- (float8 in jsonb keeps every bit: it is written in its shortest exact form)
	SELECT jsonb_agg(to_jsonb(r) ORDER BY r.n) INTO per_lambda FROM (
		SELECT l.n, l.lambda, avg(m.acc ORDER BY m.k) AS accuracy, stddev_pop(m.acc ORDER BY m.k) AS accuracy_std,
			   avg(m.f1 ORDER BY m.k) AS macro_f1, stddev_pop(m.f1 ORDER BY m.k) AS macro_f1_std,
			   avg(m.ll ORDER BY m.k) AS log_loss, stddev_pop(m.ll ORDER BY m.k) AS log_loss_std,
			   avg(m.ll0 - m.ll ORDER BY m.k) AS log_loss_gain,
			   stddev_samp(m.ll0 - m.ll ORDER BY m.k) / sqrt(count(*)) AS log_loss_gain_se
		FROM unnest(lambdas) WITH ORDINALITY AS l(lambda, n)
		JOIN (SELECT k, n, (metrics[k][n] ->> 'accuracy')::float8 AS acc,
					 (metrics[k][n] -> 'macro' ->> 'f1')::float8 AS f1,
					 (metrics[k][n] ->> 'log_loss')::float8 AS ll,
					 (metrics[k][1] ->> 'log_loss')::float8 AS ll0
			  FROM generate_subscripts(metrics, 1) AS k, generate_subscripts(metrics, 2) AS n) m
		  ON m.n = l.n
		GROUP BY l.n, l.lambda) r;
	zero := per_lambda -> 0;
	-- the lowest mean log loss above lambda 0 (ties: the smaller lambda)
	SELECT e INTO best FROM jsonb_array_elements(per_lambda) AS e
	WHERE (e ->> 'n')::integer > 1
	ORDER BY (e ->> 'log_loss')::float8, (e ->> 'n')::integer LIMIT 1;
	IF (best ->> 'log_loss_gain')::float8 > coalesce((best ->> 'log_loss_gain_se')::float8, 0) THEN
		pick := (best ->> 'lambda')::float8;
	ELSE
		RAISE NOTICE 'the unlabelled rows did not improve the model on the labelled rows'' cross-validation'
			USING DETAIL = CASE WHEN best IS NULL THEN
				format('Cross-validated log loss %s with the labelled rows alone; no lambda above 0 was tried.',
					   round((zero ->> 'log_loss')::numeric, 4))
			ELSE
				format('Cross-validated log loss %s with the labelled rows alone (lambda 0), %s at best with the unlabelled rows (lambda %s): a gain of %s, not above its standard error %s.',
					   round((zero ->> 'log_loss')::numeric, 4), round((best ->> 'log_loss')::numeric, 4),
					   best ->> 'lambda', round((best ->> 'log_loss_gain')::numeric, 4),
					   round((best ->> 'log_loss_gain_se')::numeric, 4))
			END,
				  HINT = 'Lambda 0 is chosen: the model of the labelled rows alone.';
	END IF;
	RETURN QUERY
		SELECT x.lambda, x.accuracy, x.accuracy_std, x.macro_f1, x.macro_f1_std, x.log_loss, x.log_loss_std,
			   x.log_loss_gain, x.log_loss_gain_se, x.lambda = pick
		FROM jsonb_to_recordset(per_lambda) AS x(n integer, lambda float8, accuracy float8, accuracy_std float8,
												  macro_f1 float8, macro_f1_std float8, log_loss float8,
												  log_loss_std float8, log_loss_gain float8, log_loss_gain_se float8)
		ORDER BY x.n;
END
$$;

COMMENT ON FUNCTION nbc_em_cv_summary(float8[], jsonb[]) IS 'the rows of nb_cross_validate_em from the metrics of each fold and lambda: means, spreads, the gain in log loss over lambda 0 with its standard error, and the lambda chosen';
CREATE FUNCTION nb_cross_validate_em(rel regclass, label_column text, features_column text,
									 folds integer DEFAULT NULL, lambdas float8[] DEFAULT NULL,
									 fold_column text DEFAULT NULL, options jsonb DEFAULT NULL)
RETURNS TABLE (lambda float8, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8,
			   log_loss_gain float8, log_loss_gain_se float8, chosen boolean)
-- VOLATILE: its rows go into a temporary table
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	fold bigint;
	per_fold jsonb[];
	fold_metrics jsonb[];
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF options IS NOT NULL AND jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_cross_validate_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' THEN
		RAISE EXCEPTION 'nb_cross_validate_em options must not name "lambda"'
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'The weights of the unlabelled rows to try are the argument lambdas.';
	END IF;
	-- the grid, sorted, with 0 (the labelled rows alone) first
	lambdas := coalesce(lambdas, '{0, 0.01, 0.03, 0.1, 0.3, 1}');
	IF array_position(lambdas, NULL) IS NOT NULL OR EXISTS (SELECT FROM unnest(lambdas) AS l WHERE NOT l BETWEEN 0 AND 1) THEN
		RAISE EXCEPTION 'nb_cross_validate_em lambdas must be between 0 and 1'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('They are %s.', lambdas);
	END IF;
	lambdas := ARRAY(SELECT DISTINCT l FROM unnest(lambdas || 0::float8) AS l ORDER BY l);
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT * FROM %s.nbc_em_cv_rows($1, $2, $3, $4, $5, $6)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column,
						 CASE WHEN jsonb_typeof(options -> 'tokenizer') = 'object' THEN options -> 'tokenizer' END;
	-- each fold's EM runs on the documents' tokens: no tokenizer for it
	options := coalesce(options, '{}') - 'tokenizer';
	FOREACH fold IN ARRAY setup.fold_ids LOOP
		EXECUTE format('SELECT %s.nbc_em_cv_fold($1, $2, $3)', ext)
			INTO per_fold USING fold, lambdas, options;
		-- [fold][lambda]
		fold_metrics := fold_metrics || ARRAY[per_fold];
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate_em: fold % of %: % EM runs',
				array_position(setup.fold_ids, fold), array_length(setup.fold_ids, 1), array_length(lambdas, 1)
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	DROP VIEW pg_temp.nbc_em_cv_fold;
	DROP TABLE pg_temp.nbc_em_cv_rows;
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_cv_summary($1, $2)', ext)
		USING lambdas, fold_metrics;
END
$$;

COMMENT ON FUNCTION nb_cross_validate_em(regclass, text, text, integer, float8[], text, jsonb) IS 'EM''s weight of the unlabelled rows chosen by cross-validation on the labelled rows: per lambda, mean and spread over the folds of accuracy, macro F1 and log loss, the gain over lambda 0 and its standard error, and the one chosen';

-- nbc_em_choose: nb_train_em's options with "lambda" a number: as given, or
-- for "auto" (nb_cross_validate_em's grid) or an array of candidates the
-- lambda nb_cross_validate_em chooses, with the options "folds" and
-- "fold_column" its folds; a NOTICE says which.
CREATE FUNCTION nbc_em_choose(rel regclass, label_column text, features_column text, options jsonb)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	candidates float8[];
	folds integer;
	picked float8;
BEGIN
	IF jsonb_typeof(options) IS DISTINCT FROM 'object'
	   OR (jsonb_typeof(options -> 'lambda') IS DISTINCT FROM 'array' AND options -> 'lambda' IS DISTINCT FROM '"auto"') THEN
		IF options ? 'folds' OR options ? 'fold_column' THEN
			RAISE EXCEPTION 'nb_train_em options "folds" and "fold_column" need "lambda" "auto" or an array of candidates'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF jsonb_typeof(options -> 'lambda') = 'string' THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number, "auto" or an array of numbers'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
		RETURN options;
	END IF;
	IF jsonb_typeof(options -> 'lambda') = 'array' THEN
		IF EXISTS (SELECT FROM jsonb_array_elements(options -> 'lambda') AS e WHERE jsonb_typeof(e) <> 'number') THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number, "auto" or an array of numbers'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
		candidates := ARRAY(SELECT e::text::float8 FROM jsonb_array_elements(options -> 'lambda') AS e);
	END IF;
	IF options ? 'folds' THEN
		IF jsonb_typeof(options -> 'folds') <> 'number'
		   OR (options ->> 'folds')::numeric <> trunc((options ->> 'folds')::numeric)
		   OR (options ->> 'folds')::numeric NOT BETWEEN 2 AND 2147483647 THEN
			RAISE EXCEPTION 'nb_train_em option "folds" must be an integer at least 2'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'folds');
		END IF;
		folds := (options ->> 'folds')::integer;
	END IF;
	IF options ? 'fold_column' AND jsonb_typeof(options -> 'fold_column') <> 'string' THEN
		RAISE EXCEPTION 'nb_train_em option "fold_column" must be the name of a column'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT lambda FROM %s.nb_cross_validate_em($1, $2, $3, $4, $5, $6, $7) WHERE chosen', ext)
		INTO picked USING rel, label_column, features_column, folds, candidates, options ->> 'fold_column',
						  options - 'lambda' - 'folds' - 'fold_column';
	RAISE NOTICE 'nb_train_em: lambda % chosen by cross-validation on the labelled rows', picked;
	RETURN options - 'folds' - 'fold_column' || jsonb_build_object('lambda', picked);
END
$$;

COMMENT ON FUNCTION nbc_em_choose(regclass, text, text, jsonb) IS 'nb_train_em''s options with lambda a number: for "auto" or an array of candidates, the one nb_cross_validate_em chooses';

CREATE OR REPLACE FUNCTION nb_train_em_trace(rel regclass, label_column text, features_column text,
											 options jsonb DEFAULT NULL)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
-- VOLATILE: choosing lambda makes a temporary table (nb_cross_validate_em)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	RETURN QUERY EXECUTE format('SELECT * FROM %1$s.nbc_em_run($1, $2, $3, %1$s.nbc_em_choose($1, $2, $3, $4), true)', ext)
		USING rel, label_column, features_column, options;
END
$$;

CREATE OR REPLACE FUNCTION nb_train_em(rel regclass, label_column text, features_column text,
									   options jsonb DEFAULT NULL)
RETURNS nb_model
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	result record;
BEGIN
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT model FROM %1$s.nbc_em_run($1, $2, $3, %1$s.nbc_em_choose($1, $2, $3, $4), false)', ext)
		INTO result USING rel, label_column, features_column, options;
	RETURN result.model;
END
$$;

-- ---------------------------------------------------------------------------
-- 0.14.0

-- ---------------------------------------------------------------------------
-- nb_train's final function: a WARNING when the classes are almost as many
-- as the documents (label and features swapped).  CREATE OR REPLACE
-- AGGREGATE adds it in place, so that views and materialized views over
-- nb_train (where models are often kept) keep working through the update.

CREATE FUNCTION nbc_train_final(nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nbc_train_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION nbc_train_final(nb_model) IS 'final function of nb_train: the model, after a WARNING when most classes have a single document';

CREATE OR REPLACE AGGREGATE nb_train(label text, features text[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features text[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features tsvector) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features tsvector, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features jsonb, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features double precision[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, features double precision[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label text, body text, weight double precision, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features text[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features text[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features tsvector) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features tsvector, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features jsonb, weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features double precision[]) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, features double precision[], weight double precision) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE nb_train(label anynonarray, body text, weight double precision, tokenizer jsonb) (SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final, COMBINEFUNC = nb_merge, PARALLEL = SAFE);

-- ---------------------------------------------------------------------------
-- nb_probability's label and nb_explain's against of any type, as nb_train
-- and nb_metrics take a label (label::text, the form nb_train stores).  STABLE
-- as the cast to text of some types is (timestamptz).  A text literal or
-- column still chooses the text form.  nb_explain's form has no default for
-- options and against (a polymorphic argument's type cannot come from a
-- default): nb_explain(model, features) keeps choosing the text form.

CREATE FUNCTION nb_probability(model nb_model, features text[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_array' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features tsvector, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_tsvector' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features jsonb, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_jsonb' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, features float8[], label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_float8' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_probability(model nb_model, body text, label anynonarray, options jsonb DEFAULT NULL)
	RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_probability_text' LANGUAGE C STABLE PARALLEL SAFE
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;

COMMENT ON FUNCTION nb_probability(nb_model, text[], anynonarray, jsonb) IS 'posterior probability of one class of a bag of tokens, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, tsvector, anynonarray, jsonb) IS 'posterior probability of one class of a tsvector, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, jsonb, anynonarray, jsonb) IS 'posterior probability of one class of a row of named features, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, float8[], anynonarray, jsonb) IS 'posterior probability of one class of a vector of Gaussian features, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_probability(nb_model, text, anynonarray, jsonb) IS 'posterior probability of one class of a document of text, the class given as a label of any type (label::text)';
COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, anynonarray, integer) IS 'nb_explain of a bag of tokens against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, anynonarray, integer) IS 'nb_explain of a tsvector against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, anynonarray, integer) IS 'nb_explain of a row of named features against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, anynonarray, integer) IS 'nb_explain of a vector of Gaussian features against a class given as a label of any type (against::text)';
COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, anynonarray, integer) IS 'nb_explain of a document of text against a class given as a label of any type (against::text)';

-- ---------------------------------------------------------------------------
-- Calibration without the array shuttle (#41, item 4).  The out-of-fold
-- scores travelled as one float8[rows][1 + classes] per pass of 8 folds,
-- concatenated in PL/pgSQL and handed to nbc_calibration_fit.  One
-- aggregate now scores every fold's rows and fits in its final function
-- (src/workflows/pg_calibrate.c): nbc_calibration(fold, features, actual,
-- whole, fold_models, folds, classes, options, method), each row scored by
-- whole minus the model of its fold, made when the fold changes (the rows
-- come fold by fold: one out-of-fold model at a time).
DROP FUNCTION nbc_calibration_fit(text, float8[], text[], jsonb);
DROP AGGREGATE nbc_calibration_scores(nb_model, text[], text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, tsvector, text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, jsonb, text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, float8[], text, jsonb, text[]);
DROP AGGREGATE nbc_calibration_scores(nb_model, text, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text[], text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, tsvector, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, jsonb, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, float8[], text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_transfn(internal, nb_model, text, text, jsonb, text[]);
DROP FUNCTION nbc_calibration_scores_final(internal);

CREATE FUNCTION nbc_calibration_transfn(internal, bigint, text[], text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_array' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, tsvector, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_tsvector' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, jsonb, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_jsonb' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, float8[], text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_float8' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_transfn(internal, bigint, text, text, nb_model, nb_model[], bigint[], text[], jsonb, text)
	RETURNS internal AS 'MODULE_PATHNAME', 'nbc_calibration_text' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION nbc_calibration_final(internal) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nbc_calibration(fold bigint, features text[], actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features tsvector, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features jsonb, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, features float8[], actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);
CREATE AGGREGATE nbc_calibration(fold bigint, body text, actual text, whole nb_model, fold_models nb_model[],
								 folds bigint[], classes text[], options jsonb, method text) (
	SFUNC = nbc_calibration_transfn, STYPE = internal, FINALFUNC = nbc_calibration_final,
	FINALFUNC_MODIFY = READ_WRITE);

-- nb_calibrate: the rows and folds of nb_cross_validate (the same checks,
-- the same assignment of rows to folds), one training pass (a model per
-- fold and their merge), the limit of the scores' memory checked, then
-- one pass of nbc_calibration over every fold's rows in fold order.
CREATE OR REPLACE FUNCTION nb_calibrate(rel regclass, label_column text, features_column text,
							 folds integer DEFAULT NULL, options jsonb DEFAULT NULL,
							 fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL,
							 method text DEFAULT 'auto')
RETURNS TABLE (calibrated_options jsonb, log_loss float8, calibrated_log_loss float8,
			   brier float8, calibrated_brier float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (nb_cross_validate)
LANGUAGE plpgsql VOLATILE
-- relocatable: nbc's objects through its schema, the rest from pg_catalog
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	rows_sql text;
	trained record;
	classes text[];
	fitted jsonb;
	doing text;
	-- the error of an internal statement, raised again
	e_state text; e_message text; e_detail text; e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL OR method IS NULL THEN
		RAISE EXCEPTION 'relation, label column, features column and method must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF method NOT IN ('auto', 'temperature', 'sigmoid') THEN
		RAISE EXCEPTION 'unrecognized calibration method "%"', method
			USING ERRCODE = 'invalid_parameter_value', HINT = 'Valid methods are "auto", "temperature" and "sigmoid".';
	END IF;
	IF options ? 'temperature' OR options ? 'sigmoid' THEN
		RAISE EXCEPTION 'options to calibrate must not be calibrated already' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The options name "temperature" or "sigmoid"; calibration fits them.';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_cross_validate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_calibrate_rows';
	rows_sql := setup.rows_sql;
	-- An error in an internal statement is raised again with a sentence
	-- saying what calibration was doing, not the generated statement.
	doing := format('Calibration on "%s" was training a model per fold.', rel);
	BEGIN
		-- on Citus the rows come to the coordinator first (see nb_cross_validate)
		IF setup.rows_copied THEN
			EXECUTE format('CREATE TEMPORARY TABLE nbc_calibrate_rows ON COMMIT DROP AS %s', rows_sql);
			rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_calibrate_rows';
		END IF;
		EXECUTE format(
			'SELECT array_agg(fold ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
			'       array_agg(model ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS models, '
			'       array_agg(n ORDER BY fold) FILTER (WHERE fold IS NOT NULL) AS fold_rows, sum(n) AS all_rows, %1$s.nb_merge(model) AS whole '
			'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
			'      FROM (%2$s) r GROUP BY fold) f',
			ext, rows_sql, CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
			INTO trained;
		IF trained.folds IS NULL THEN
			RAISE EXCEPTION 'relation "%" has no rows to calibrate on', rel
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'A row needs a label, features and a fold.';
		END IF;
		IF fold_column IS NULL AND array_length(trained.folds, 1) < coalesce(folds, 5) THEN
			RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('%s rows to calibrate on in %s folds.', array_length(trained.folds, 1), coalesce(folds, 5));
		END IF;
		IF array_position(trained.fold_rows, trained.all_rows) IS NOT NULL THEN
			RAISE EXCEPTION 'fold % holds every row', trained.folds[array_position(trained.fold_rows, trained.all_rows)]
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Each fold is scored by a model of the rows outside it.';
		END IF;
		EXECUTE format('SELECT array_agg(c.label ORDER BY c.n) FROM %s.nb_classes($1) WITH ORDINALITY AS c(label, documents, prior, n)', ext)
			INTO classes USING trained.whole;
		IF array_length(classes, 1) < 2 THEN
			RAISE EXCEPTION 'relation "%" has one class', rel
				USING ERRCODE = 'invalid_parameter_value', DETAIL = 'Calibration needs rows of at least two classes.';
		END IF;
		-- the scores' limit (NB_CALIBRATION_MAX_BYTES in pg_calibrate.c), checked before any row is scored
		doing := format('Calibration on "%s" was counting its rows and classes.', rel);
		IF trained.all_rows * (array_length(classes, 1) + 1) * 8 > 268435456 THEN
			RAISE EXCEPTION 'too many rows to calibrate'
				USING ERRCODE = 'program_limit_exceeded',
					  DETAIL = format('The log posteriors of %s rows of %s classes would take %s bytes, more than the limit of 268435456.',
									  trained.all_rows, array_length(classes, 1), trained.all_rows * (array_length(classes, 1) + 1) * 8);
		END IF;
		-- the options are checked against the model before any fold is scored
		doing := format('Calibration on "%s" was checking the options.', rel);
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) USING trained.whole, options;
		-- every fold's rows, fold by fold, scored and fitted by one aggregate
		doing := format('Calibration on "%s" was scoring its %s folds and fitting.', rel, array_length(trained.folds, 1));
		IF setup.on_citus AND NOT setup.rows_copied THEN
			rows_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', rows_sql);
		END IF;
		EXECUTE format('SELECT %1$s.nbc_calibration(r.fold, r.features, r.actual, $1, $2, $3, $4, $5, $6) '
					   'FROM (SELECT * FROM (%2$s) r WHERE r.fold IS NOT NULL ORDER BY r.fold) r', ext, rows_sql)
			INTO fitted USING trained.whole, trained.models, trained.folds, classes, options, method;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_calibrate_rows;
	END IF;
	RETURN QUERY SELECT fitted -> 'options', (fitted ->> 'log_loss')::float8, (fitted ->> 'calibrated_log_loss')::float8,
						(fitted ->> 'brier')::float8, (fitted ->> 'calibrated_brier')::float8;
END
$$;

-- ---------------------------------------------------------------------------
-- EM's aggregate driver removed (#41 item 5): nb_train_em runs its
-- iterations in C (nbc_em_iterate, src/workflows/pg_em_run.c) since 0.12.0;
-- the aggregate nbc_em_step that it ran once per iteration before, an
-- internal object with nothing left calling it, goes with its functions
-- and its result type.
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, tsvector, float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, tsvector, float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_final(internal);
DROP TYPE nbc_em_step;

-- ---------------------------------------------------------------------------
-- nb_cross_validate in parts of at most 100 lines (#41 item 3): the checks of
-- the trained folds (nbc_cross_validate_checks), the scoring passes
-- (nbc_cross_validate_score) and the means and spreads over the folds
-- (nbc_cross_validate_summary) are functions of their own; what each does
-- and the statements it runs are as before, so the results are the same to
-- the last bit.

CREATE FUNCTION nbc_cross_validate_checks(rel regclass, folds integer, fold_column text,
										  trained_folds anyarray, fold_rows bigint[],
										  all_rows numeric, whole nb_model)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ext text;
	n_classes bigint;
BEGIN
	IF trained_folds IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no rows to cross-validate', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'A row needs a label, features and a fold.';
	END IF;
	IF fold_column IS NULL AND array_length(trained_folds, 1) < folds THEN
		RAISE EXCEPTION 'relation "%" has fewer rows than folds', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('%s rows to cross-validate in %s folds.', array_length(trained_folds, 1), folds);
	END IF;
	IF array_position(fold_rows, all_rows) IS NOT NULL THEN
		RAISE EXCEPTION 'fold % holds every row', trained_folds[array_position(fold_rows, all_rows)]
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'Each fold is scored by a model of the rows outside it.';
	END IF;
	-- a fold's metrics count a confusion matrix per option set, of at most
	-- 2048 labels (nb_grid_metrics): refuse more classes now, before any
	-- fold's model is made and prepared
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	EXECUTE format('SELECT (%s.nb_info($1) ->> ''classes'')::bigint', ext) INTO n_classes USING whole;
	IF n_classes > 2048 THEN
		RAISE EXCEPTION 'relation "%" has % classes, more than cross-validation supports', rel, n_classes
			USING ERRCODE = 'program_limit_exceeded',
				  DETAIL = 'nb_cross_validate counts at most 2048 distinct labels.',
				  HINT = 'Group rare labels together, or cross-validate a subset of the classes.';
	END IF;
END
$$;

COMMENT ON FUNCTION nbc_cross_validate_checks(regclass, integer, text, anyarray, bigint[], numeric, nb_model) IS 'the checks of nb_cross_validate''s folds once trained: rows in a fold, at least as many rows as folds, no fold of every row, at most 2048 classes';

-- nb_grid_metrics per fold over the fold's rows, its out-of-fold model
-- nb_subtract(whole, fold's model) of two parameters, so that the planner
-- computes it once as a constant of the plan: the model is prepared once
-- with a scorer per option set, and each row is looked up once and scored
-- under every option set.  (Parameters of their own: one array of all the
-- models, subscripted in the query, made the planner copy the whole array
-- for each fold.)  The rows come in fold order, so that one model's
-- tables are in use at a time (interleaved, the models' tables together
-- fall out of the CPU's caches: a third slower).  At most 8 folds per
-- pass over the rows: each fold's prepared model stays in memory until
-- its query ends, and a query has at most 1664 columns, so that
-- leave-one-out (a fold per row) works too.  The result is [fold][option
-- set], the folds in their order.
CREATE FUNCTION nbc_cross_validate_score(rel regclass, scored_sql text, option_sets jsonb[],
										 whole nb_model, folds anyarray, models nb_model[],
										 progress boolean, started timestamptz)
RETURNS jsonb[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	n integer := array_length(folds, 1);
	-- the folds in order, as positions in those arrays (in the order the
	-- folds came, paired: ordering the models themselves would copy them)
	fold_order integer[] := ARRAY(SELECT i FROM generate_subscripts(folds, 1) AS i ORDER BY folds[i]);
	per_fold text;
	batch jsonb[];
	fold_metrics jsonb[];
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	SELECT quote_ident(ns.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace ns ON ns.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	FOR b IN 0 .. (n - 1) / 8 LOOP
		per_fold := '';
		FOR i IN b * 8 + 1 .. least(b * 8 + 8, n) LOOP
			per_fold := per_fold || format('%1$s%2$s.nb_grid_metrics(%2$s.nb_subtract($2, $%3$s), r.features, r.actual, $1) '
										   'FILTER (WHERE r.fold = %4$s)',
										   CASE WHEN i > b * 8 + 1 THEN ', ' END, ext, i - b * 8 + 2,
										   folds[fold_order[i]]);
		END LOOP;
		-- past the last fold, fold_order[i] and so the model are NULL, unused
		doing := format('Cross-validation of "%s" was scoring folds %s to %s of %s.',
						rel, b * 8 + 1, least(b * 8 + 8, n), n);
		BEGIN
		EXECUTE format('SELECT ARRAY[%s] FROM (SELECT * FROM (%s) r ORDER BY r.fold) r',
					   per_fold, scored_sql)
			INTO batch
			USING option_sets, whole,
				  models[fold_order[b * 8 + 1]], models[fold_order[b * 8 + 2]],
				  models[fold_order[b * 8 + 3]], models[fold_order[b * 8 + 4]],
				  models[fold_order[b * 8 + 5]], models[fold_order[b * 8 + 6]],
				  models[fold_order[b * 8 + 7]], models[fold_order[b * 8 + 8]];
		EXCEPTION WHEN query_canceled OR others THEN
			-- raised again with what cross-validation was doing (see nb_cross_validate)
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
									e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
			IF e_hint = '' THEN
				RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
			END IF;
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
		END;
		fold_metrics := fold_metrics || batch;
		IF progress THEN
			RAISE NOTICE 'nb_cross_validate: scored folds % to % of %', b * 8 + 1, least(b * 8 + 8, n), n
				USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
		END IF;
	END LOOP;
	RETURN fold_metrics;
END
$$;

COMMENT ON FUNCTION nbc_cross_validate_score(regclass, text, jsonb[], nb_model, anyarray, nb_model[], boolean, timestamptz) IS 'the scoring passes of nb_cross_validate: nb_grid_metrics of every fold''s rows under its out-of-fold model, at most 8 folds per pass, as [fold][option set] in fold order';

-- The means and spreads add the folds in their order, whatever the plan,
-- so that the results do not depend on it to the last bit.
CREATE FUNCTION nbc_cross_validate_summary(option_sets jsonb[], fold_metrics jsonb[])
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH s AS (SELECT k, n, (m[k][n] ->> 'accuracy')::float8 AS accuracy,
				  (m[k][n] -> 'macro' ->> 'f1')::float8 AS macro_f1, (m[k][n] ->> 'log_loss')::float8 AS log_loss
		   FROM (SELECT fold_metrics AS m) a, generate_subscripts(fold_metrics, 1) AS k,
				generate_subscripts(fold_metrics, 2) AS n)
SELECT g.options, avg(s.accuracy ORDER BY s.k), stddev_pop(s.accuracy ORDER BY s.k),
	   avg(s.macro_f1 ORDER BY s.k), stddev_pop(s.macro_f1 ORDER BY s.k),
	   avg(s.log_loss ORDER BY s.k), stddev_pop(s.log_loss ORDER BY s.k)
FROM unnest(option_sets) WITH ORDINALITY AS g(options, n) JOIN s USING (n)
GROUP BY g.n, g.options
ORDER BY 2 DESC, 4 DESC, 6, g.n
$$;

COMMENT ON FUNCTION nbc_cross_validate_summary(jsonb[], jsonb[]) IS 'nb_cross_validate''s result from every fold''s metrics ([fold][option set]): per option set the mean and standard deviation of accuracy, macro F1 and log loss over the folds, best first';

CREATE OR REPLACE FUNCTION nb_cross_validate(rel regclass, label_column text, features_column text,
								  folds integer DEFAULT NULL, grid jsonb DEFAULT NULL,
								  fold_column text DEFAULT NULL, tokenizer jsonb DEFAULT NULL)
RETURNS TABLE (options jsonb, accuracy float8, accuracy_std float8, macro_f1 float8,
			   macro_f1_std float8, log_loss float8, log_loss_std float8)
-- VOLATILE: on Citus it may make a temporary table of the rows (below)
LANGUAGE plpgsql VOLATILE
-- The extension is relocatable: its own objects are named through the schema
-- it is in (found at run time), everything else resolves in pg_catalog only.
SET search_path = pg_catalog, pg_temp
-- The work is in nbc's functions, which JIT cannot speed up; the scoring
-- query's estimated cost would have it spend seconds compiling.
SET jit = off
AS $$
DECLARE
	ext text;
	setup record;
	rows_sql text;
	scored_sql text;
	option_sets jsonb[];
	fold_metrics jsonb[];
	trained record;
	-- nbc.progress: a NOTICE per pass, its elapsed time in the DETAIL
	progress boolean := coalesce(current_setting('nbc.progress', true), 'off')::boolean;
	started timestamptz := clock_timestamp();
	-- what the internal statements were doing when they failed (see below)
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the folds and columns and the rows' query, nb_calibrate's too
	EXECUTE format('SELECT * FROM %s.nbc_cross_validation_rows($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO setup USING rel, label_column, features_column, folds, fold_column, tokenizer, 'nbc_cross_validate_rows';
	rows_sql := setup.rows_sql;

	-- one pass: a model per fold and the whole by nb_merge (with the rows
	-- that are in no fold), and the default grid from the whole.  Each
	-- fold's out-of-fold model is made by the scoring passes, so that only a
	-- batch of them is ever in memory (a leave-one-out model is nearly the
	-- whole).  A fold holds every row when its rows are all the rows.
	--
	-- An error or a cancel in an internal statement is raised again from here
	-- with its SQLSTATE, message, detail and hint, and a sentence saying what
	-- cross-validation was doing (doing; NULL: nothing to add, or the helper
	-- said it): PostgreSQL's CONTEXT would otherwise quote the whole generated
	-- statement (near 1,000 characters per batch of folds).
	BEGIN
	doing := format('Cross-validation of "%s" was training a model per fold.', rel);
	IF setup.rows_copied THEN
		EXECUTE format('CREATE TEMPORARY TABLE nbc_cross_validate_rows ON COMMIT DROP AS %s', rows_sql);
		rows_sql := 'SELECT fold, actual, features FROM pg_temp.nbc_cross_validate_rows';
	END IF;
	EXECUTE format(
		'SELECT array_agg(fold) FILTER (WHERE fold IS NOT NULL) AS folds, '
		'       array_agg(model) FILTER (WHERE fold IS NOT NULL) AS models, '
		'       array_agg(n) FILTER (WHERE fold IS NOT NULL) AS fold_rows, '
		'       sum(n) AS all_rows, '
		'       %1$s.nb_merge(model) AS whole, '
		'       coalesce($1, %1$s.nb_grid_default(%1$s.nb_merge(model))) AS grid '
		'FROM (SELECT fold, count(*) AS n, %1$s.nb_train(actual, features%3$s) AS model '
		'      FROM (%2$s) r GROUP BY fold) f',
		ext, rows_sql,
		CASE WHEN setup.ftype = 'text'::regtype THEN format(', %L::jsonb', tokenizer) ELSE '' END)
		INTO trained USING grid;
	doing := NULL;
	-- the rows a scoring pass reads: those in a fold
	scored_sql := format('SELECT * FROM (%s) r WHERE r.fold IS NOT NULL', rows_sql);
	IF setup.on_citus AND NOT setup.rows_copied THEN
		scored_sql := format('WITH scored AS MATERIALIZED (%s) SELECT * FROM scored', scored_sql);
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_checks($1, $2, $3, $4, $5, $6, $7)', ext)
		USING rel, coalesce(folds, 5), fold_column, trained.folds, trained.fold_rows, trained.all_rows, trained.whole;
	EXECUTE format('SELECT ARRAY(SELECT %s.nb_grid_options($1))', ext) INTO option_sets USING trained.grid;
	IF progress THEN
		RAISE NOTICE 'nb_cross_validate: trained % folds of % rows; % to score',
			array_length(trained.folds, 1), trained.all_rows,
			CASE array_length(option_sets, 1) WHEN 1 THEN '1 option set'
				 ELSE array_length(option_sets, 1) || ' option sets' END
			USING DETAIL = format('Elapsed: %s s.', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3));
	END IF;
	EXECUTE format('SELECT %s.nbc_cross_validate_score($1, $2, $3, $4, $5, $6, $7, $8)', ext)
		INTO fold_metrics
		USING rel, scored_sql, option_sets, trained.whole, trained.folds, trained.models, progress, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_detail = '' AND e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
		ELSIF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		ELSIF e_detail = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
	IF setup.rows_copied THEN
		DROP TABLE pg_temp.nbc_cross_validate_rows;
	END IF;
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_cross_validate_summary($1, $2)', ext)
		USING option_sets, fold_metrics;
END
$$;

-- ---------------------------------------------------------------------------
-- nbc_em_run in parts under 100 lines (#41 item 3): the checks of its
-- options (nbc_em_options) and of its columns (nbc_em_features_type) are
-- functions of their own, with the same checks and errors as before.

CREATE FUNCTION nbc_em_options(options jsonb, OUT lambda float8, OUT iterations integer,
							   OUT tolerance float8, OUT tokenizer jsonb, OUT train_options jsonb)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	lambda := 1;
	iterations := 20;
	tolerance := 1e-6;
	options := coalesce(options, '{}');
	IF jsonb_typeof(options) <> 'object' THEN
		RAISE EXCEPTION 'nb_train_em options must be a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF options ? 'lambda' THEN
		IF jsonb_typeof(options -> 'lambda') <> 'number' THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be a number'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		lambda := (options ->> 'lambda')::float8;
		IF NOT lambda BETWEEN 0 AND 1 THEN
			RAISE EXCEPTION 'nb_train_em option "lambda" must be between 0 and 1'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'lambda');
		END IF;
	END IF;
	IF options ? 'iterations' THEN
		IF jsonb_typeof(options -> 'iterations') <> 'number'
		   OR (options ->> 'iterations')::numeric NOT BETWEEN 0 AND 1000
		   OR (options ->> 'iterations')::numeric <> trunc((options ->> 'iterations')::numeric) THEN
			RAISE EXCEPTION 'nb_train_em option "iterations" must be an integer from 0 to 1000'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'iterations');
		END IF;
		iterations := (options ->> 'iterations')::integer;
	END IF;
	IF options ? 'tolerance' THEN
		IF jsonb_typeof(options -> 'tolerance') <> 'number'
		   OR (options ->> 'tolerance')::numeric < 0 THEN
			RAISE EXCEPTION 'nb_train_em option "tolerance" must be a number at least 0'
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('It is %s.', options -> 'tolerance');
		END IF;
		tolerance := (options ->> 'tolerance')::float8;
	END IF;
	IF options ? 'tokenizer' AND jsonb_typeof(options -> 'tokenizer') NOT IN ('object', 'null') THEN
		RAISE EXCEPTION 'nb_train_em option "tokenizer" must be an object of nb_tokens options'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	tokenizer := nullif(options -> 'tokenizer', 'null');
	-- the rest are the model's options (nb_with_options checks them)
	train_options := nullif(options - 'lambda' - 'iterations' - 'tolerance' - 'tokenizer', '{}');
END
$$;

COMMENT ON FUNCTION nbc_em_options(jsonb) IS 'nb_train_em''s options checked and taken apart: lambda, iterations, tolerance, tokenizer and the rest, the model''s options (NULL: none)';

CREATE FUNCTION nbc_em_features_type(rel regclass, label_column text, features_column text,
									 tokenizer jsonb)
RETURNS regtype
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	cols record;
	ftype regtype;
BEGIN
	SELECT
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = label_column AND a.attnum > 0 AND NOT a.attisdropped) AS label_type,
		(SELECT a.atttypid::regtype FROM pg_attribute a
		 WHERE a.attrelid = rel AND a.attname = features_column AND a.attnum > 0 AND NOT a.attisdropped) AS features_type
	INTO cols;
	IF cols.label_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', label_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	IF cols.features_type IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', features_column, rel
			USING ERRCODE = 'undefined_column';
	END IF;
	ftype := cols.features_type;
	WHILE (SELECT t.typtype FROM pg_type t WHERE t.oid = ftype) = 'd' LOOP
		ftype := (SELECT t.typbasetype FROM pg_type t WHERE t.oid = ftype);
	END LOOP;
	IF ftype = 'character varying'::regtype THEN
		ftype := 'text'::regtype;
	ELSIF ftype = 'character varying[]'::regtype THEN
		ftype := 'text[]'::regtype;
	END IF;
	IF ftype NOT IN ('text'::regtype, 'text[]'::regtype, 'tsvector'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" has type %', features_column, rel, cols.features_type
			USING ERRCODE = 'datatype_mismatch',
				  HINT = 'nb_train_em trains on bags of tokens: text, text[] or tsvector features.';
	END IF;
	IF tokenizer IS NOT NULL AND ftype <> 'text'::regtype THEN
		RAISE EXCEPTION 'a tokenizer needs a features column of type text'
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = format('Column "%s" of relation "%s" has type %s.', features_column, rel, cols.features_type);
	END IF;

	RETURN ftype;
END
$$;

COMMENT ON FUNCTION nbc_em_features_type(regclass, text, text, jsonb) IS 'the checks of nb_train_em''s columns: the type its features are read as (text, text[] or tsvector, through domains and varchar)';

CREATE OR REPLACE FUNCTION nbc_em_run(rel regclass, label_column text, features_column text,
						   options jsonb, trace boolean)
RETURNS TABLE (iteration integer, log_likelihood float8, model nb_model)
LANGUAGE plpgsql STABLE
-- relocatable: nbc's objects through its schema, found at run time
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	ext text;
	opts record;
	ftype regtype;
	first record;
	started timestamptz := clock_timestamp();
	doing text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	IF rel IS NULL OR label_column IS NULL OR features_column IS NULL THEN
		RAISE EXCEPTION 'relation, label column and features column must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT quote_ident(n.nspname) INTO ext
	FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'nbc';
	-- the checks of the options and the columns
	EXECUTE format('SELECT * FROM %s.nbc_em_options($1)', ext) INTO opts USING options;
	EXECUTE format('SELECT %s.nbc_em_features_type($1, $2, $3, $4)', ext)
		INTO ftype USING rel, label_column, features_column, opts.tokenizer;

	-- An error or a cancel in an internal statement is raised again with a
	-- sentence saying what EM was doing (doing; NULL: nothing to add), as
	-- nb_cross_validate does, instead of a CONTEXT quoting the statement.
	BEGIN
	-- the model of the labelled rows, and how many rows are unlabelled
	doing := format('EM on "%s" was training the model of the labelled rows.', rel);
	EXECUTE format('SELECT %1$s.nb_train(%2$I::text, %3$I::%4$s%5$s) FILTER (WHERE %2$I IS NOT NULL) AS model, '
				   'count(*) FILTER (WHERE %2$I IS NULL AND %3$I IS NOT NULL) AS unlabelled FROM %6$s',
				   ext, label_column, features_column, ftype,
				   CASE WHEN ftype = 'text'::regtype THEN ', $1' ELSE '' END, rel)
		INTO first USING opts.tokenizer;
	doing := NULL;
	IF first.model IS NULL THEN
		RAISE EXCEPTION 'relation "%" has no labelled row', rel
			USING ERRCODE = 'invalid_parameter_value',
				  DETAIL = 'EM starts from a model of the rows whose label is not NULL (and whose features are not NULL).';
	END IF;
	-- the OUT column model holds the current model (a variable of type
	-- nb_model would need nbc's schema in the search path)
	model := first.model;
	IF opts.train_options IS NOT NULL THEN
		EXECUTE format('SELECT %s.nb_with_options($1, $2)', ext) INTO model USING model, opts.train_options;
	END IF;

	-- the iterations, in C (src/workflows/pg_em_run.c), which adds what it was doing
	-- to an error of its own; without trace, a row of the last iteration
	-- only (RETURN QUERY: the model is copied once more, not three times
	-- as by INTO and RETURN NEXT)
	RETURN QUERY EXECUTE format('SELECT * FROM %s.nbc_em_iterate($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', ext)
		USING model, rel, label_column, features_column, ftype, opts.lambda, opts.train_options, opts.tokenizer,
			  opts.iterations, opts.tolerance, first.unlabelled, trace, started;
	EXCEPTION WHEN query_canceled OR others THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
								e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
		e_detail := concat_ws(' ', nullif(e_detail, ''), doing);
		-- (a RAISE option cannot be null, and an empty one prints an empty line)
		IF e_detail = '' AND e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message;
		ELSIF e_hint = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail;
		ELSIF e_detail = '' THEN
			RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, HINT = e_hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = e_state, MESSAGE = e_message, DETAIL = e_detail, HINT = e_hint;
	END;
END
$$;
