-- nbc's objects, 30: what a model holds and why it scores as it does
-- (nb_info, nb_classes, nb_explain, nb_feature_log_prob, nb_mutual_info,
-- nb_coverage), and nb_tokens, the tokenizer nb_train uses on text.

CREATE FUNCTION nb_mutual_info(model nb_model) RETURNS TABLE(feature text, mutual_info float8)
	AS 'MODULE_PATHNAME', 'nb_mutual_info_srf' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION nb_mutual_info(nb_model) IS 'mutual information (nats) between each token''s presence, or each categorical or boolean feature, and the class, highest first';

CREATE FUNCTION nb_classes(model nb_model) RETURNS TABLE(label text, documents float8, prior float8)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION nb_classes(nb_model) IS 'classes with their (weighted) document counts and maximum-likelihood priors';

CREATE FUNCTION nb_info(model nb_model) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_info(nb_model) IS 'summary of a model: classes, vocabulary, documents, tokens, rows skipped for a NULL label, features, format version, bytes';

CREATE FUNCTION nb_feature_log_prob(model nb_model, options jsonb DEFAULT NULL)
	RETURNS TABLE(feature text, value text, label text, log_prob float8)
	AS 'MODULE_PATHNAME', 'nb_feature_log_prob' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION nb_feature_log_prob(nb_model, jsonb) IS 'smoothed log probability of every token or value per class (Gaussian: mean and variance) as the scorer uses it';

CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, text, integer) IS 'contribution of each token, the prior and the absent tokens to the log odds of the predicted class against the runner-up or a given class, largest first';

CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, text, integer) IS 'contribution of each lexeme, the prior and the absent lexemes to the log odds of the predicted class against the runner-up or a given class, largest first';

CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, text, integer) IS 'contribution of each feature, token and the prior to the log odds of the predicted class against the runner-up or a given class, largest first';

CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, text, integer) IS 'contribution of each element and the prior to the log odds of the predicted class against the runner-up or a given class, largest first';

CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb DEFAULT NULL,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, text, integer) IS 'contribution of each token of a document of text, the prior and the absent tokens to the log odds of the predicted class against the runner-up or a given class, largest first';

-- nb_explain against a class given as a label of any type (against::text,
-- the form nb_train stores); STABLE, as the cast to text of some types is
-- (timestamptz).  A text literal or column chooses the text form above.  No
-- default for options and against (a polymorphic argument's type cannot
-- come from a default): nb_explain(model, features) chooses the text form.
CREATE FUNCTION nb_explain(model nb_model, features text[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text[], jsonb, anynonarray, integer) IS 'nb_explain of a bag of tokens against a class given as a label of any type (against::text)';

CREATE FUNCTION nb_explain(model nb_model, features tsvector, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, jsonb, anynonarray, integer) IS 'nb_explain of a tsvector against a class given as a label of any type (against::text)';

CREATE FUNCTION nb_explain(model nb_model, features jsonb, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, jsonb, anynonarray, integer) IS 'nb_explain of a row of named features against a class given as a label of any type (against::text)';

CREATE FUNCTION nb_explain(model nb_model, features float8[], options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, float8[], jsonb, anynonarray, integer) IS 'nb_explain of a vector of Gaussian features against a class given as a label of any type (against::text)';

CREATE FUNCTION nb_explain(model nb_model, body text, options jsonb, against anynonarray,
		top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C STABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text, jsonb, anynonarray, integer) IS 'nb_explain of a document of text against a class given as a label of any type (against::text)';

-- nb_explain with its options given as a string literal, which chooses text
-- over jsonb (nb_explain(model, features, 'spam') would otherwise fail as
-- JSON): a JSON object is read as the options; anything else is refused
-- with a hint to pass the class as against (pg_explain.c).  No default for
-- options: nb_explain(model, features) still chooses the jsonb forms.
CREATE FUNCTION nb_explain(model nb_model, features text[], options text,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_array' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text[], text, text, integer) IS 'nb_explain with options given as text: a JSON object, else an error whose hint names against';

CREATE FUNCTION nb_explain(model nb_model, features tsvector, options text,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_tsvector' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, tsvector, text, text, integer) IS 'nb_explain with options given as text: a JSON object, else an error whose hint names against';

CREATE FUNCTION nb_explain(model nb_model, features jsonb, options text,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_jsonb' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, jsonb, text, text, integer) IS 'nb_explain with options given as text: a JSON object, else an error whose hint names against';

CREATE FUNCTION nb_explain(model nb_model, features float8[], options text,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_float8' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, float8[], text, text, integer) IS 'nb_explain with options given as text: a JSON object, else an error whose hint names against';

CREATE FUNCTION nb_explain(model nb_model, body text, options text,
		against text DEFAULT NULL, top_k integer DEFAULT NULL)
	RETURNS TABLE(part text, feature text, value text, contribution float8, predicted text, compared_to text)
	AS 'MODULE_PATHNAME', 'nb_explain_text' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 20
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_explain(nb_model, text, text, text, integer) IS 'nb_explain with options given as text: a JSON object, else an error whose hint names against';

-- Rows the model knows nothing of: nbc.unknown_features (a setting, see
-- pg_unknown.c) says what scoring does with them, and nb_coverage gives
-- the share of a row's features that the model knows (pg_coverage.c).
-- STRICT: a NULL model or features give NULL.
CREATE FUNCTION nb_coverage(model nb_model, features text[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_coverage(nb_model, text[]) IS 'share of the row''s tokens (each occurrence counted) that the model knows; 0 when it knows none or the row has none';

CREATE FUNCTION nb_coverage(model nb_model, features tsvector) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_tsvector' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_coverage(nb_model, tsvector) IS 'share of the row''s lexemes (each position counted) that the model knows; 0 when it knows none or the row has none';

CREATE FUNCTION nb_coverage(model nb_model, features jsonb) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_jsonb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_coverage(nb_model, jsonb) IS 'share of the row''s features (bag tokens with their counts, categorical values, numbers, booleans; null values left out) that the model knows; 0 when it knows none or the row has none';

CREATE FUNCTION nb_coverage(model nb_model, features float8[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_coverage(nb_model, float8[]) IS 'share of the row''s non-NULL elements that the model knows: 1, or 0 when every element is NULL';

CREATE FUNCTION nb_coverage(model nb_model, body text) RETURNS float8
	AS 'MODULE_PATHNAME', 'nb_coverage_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
	SUPPORT nbc_scoring_support;
COMMENT ON FUNCTION nb_coverage(nb_model, text) IS 'share of the tokens of a document of text (tokenized with the model''s tokenizer, each occurrence counted) that the model knows; 0 when it knows none or the document has none';

-- nb_tokens(body, options): the tokens scikit-learn's
-- CountVectorizer(**options).build_analyzer() makes of body, in order.
-- Not STRICT: NULL options (the default) mean scikit-learn's defaults; a
-- NULL body gives NULL.
CREATE FUNCTION nb_tokens(body text, options jsonb DEFAULT NULL) RETURNS text[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_tokens(text, jsonb) IS 'tokens of a text as scikit-learn''s CountVectorizer analyzer makes them (options: analyzer, ngram_range, lowercase, strip_accents, token_pattern, stop_words)';
