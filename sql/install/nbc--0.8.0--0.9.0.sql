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
