-- nbc 0.8.0 -> 0.9.0: text in, with the tokenizer kept inside the model;
-- nothing silent (unknown features, unrelated merges); options that travel
-- with the model; results shaped for psql.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.9.0'" to load this file. \quit

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
CREATE FUNCTION nb_train_transfn(nb_model, text, text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nb_train_transfn(nb_model, text, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nb_train_transfn(nb_model, text, text, float8, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label text, body text) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label text, body text, tokenizer jsonb) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

CREATE AGGREGATE nb_train(label text, body text, weight float8, tokenizer jsonb) (
	SFUNC = nb_train_transfn, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_train(text, text) IS 'train a naive Bayes model on documents of text, tokenized as scikit-learn''s CountVectorizer does by default; the model keeps its tokenizer';

COMMENT ON AGGREGATE nb_train(text, text, jsonb) IS 'train a naive Bayes model on documents of text, tokenized with these options (see nb_tokens); the model keeps its tokenizer';

COMMENT ON AGGREGATE nb_train(text, text, float8, jsonb) IS 'train a naive Bayes model on weighted documents of text, tokenized with these options (NULL: the defaults); the model keeps its tokenizer';

CREATE FUNCTION nb_predict(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_predict_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_predict_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_predict_log_proba(model nb_model, body text, options jsonb DEFAULT NULL) RETURNS jsonb
	AS 'MODULE_PATHNAME', 'nb_predict_log_proba_text' LANGUAGE C IMMUTABLE PARALLEL SAFE
	SUPPORT nb_scoring_support;

CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(feature text, value text, contribution float8)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nb_scoring_support;

COMMENT ON FUNCTION nb_predict(nb_model, text, jsonb) IS 'most probable class of a document of text, tokenized with the model''s tokenizer';

COMMENT ON FUNCTION nb_predict_proba(nb_model, text, jsonb) IS 'posterior probability of every class of a document of text, as {label: p}';

COMMENT ON FUNCTION nb_predict_log_proba(nb_model, text, jsonb) IS 'natural-log posterior of every class of a document of text, as {label: log p}';

COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, text, integer) IS 'contribution of each token of a document of text and the prior to the log odds of the predicted class against the runner-up, largest first';

CREATE FUNCTION nb_grid_metrics_transfn(internal, nb_model, text, text, jsonb[]) RETURNS internal
	AS 'MODULE_PATHNAME', 'nb_grid_metrics_text' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE nb_grid_metrics(model nb_model, body text, actual text, options jsonb[]) (
	SFUNC = nb_grid_metrics_transfn, STYPE = internal, FINALFUNC = nb_grid_metrics_final,
	PARALLEL = SAFE);

COMMENT ON AGGREGATE nb_grid_metrics(nb_model, text, text, jsonb[]) IS 'nb_metrics of the model''s predictions of documents of text under each option set of the array (without roc_auc and average_precision), each row scored once per option set';

-- Options that travel with the model: nb_with_options(model, options)
-- keeps prediction options in the model (checked against it); every scoring
-- function applies them, a call's own options taking precedence key by key.
-- NULL options remove them.
CREATE FUNCTION nb_with_options(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION nb_with_options(nb_model, jsonb) IS 'the model with these prediction options kept inside it as its defaults (NULL: none)';
