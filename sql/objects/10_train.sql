-- nbc's objects, 10: training.  The aggregate nb_train for every feature type
-- (text[], tsvector, jsonb, float8[], text with a tokenizer), weighted or
-- not, with a text label or a label of any type; nb_merge, the combine
-- function of them all.

-- Transition functions.  Not STRICT: the first non-NULL row must create the
-- state, and rows with a NULL label or NULL features are skipped.
CREATE FUNCTION nbc_train_transfn(nb_model, text, text[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, text[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_array_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, tsvector) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, tsvector, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_tsvector_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Merging, also the combine function of every nbc aggregate and the
-- transition function of the aggregate nb_merge(nb_model).  Not STRICT:
-- NULL is the empty model, so merging in an empty batch keeps the model.
CREATE FUNCTION nb_merge(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_merge(nb_model, nb_model) IS 'model trained on the union of the rows of two models (NULL is the empty model)';

-- nb_train's final function: the model, after a WARNING when the classes
-- are almost as many as the documents (label and features swapped).
CREATE FUNCTION nbc_train_final(nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nbc_train_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION nbc_train_final(nb_model) IS 'final function of nb_train: the model, after a WARNING when most classes have a single document';

CREATE AGGREGATE nb_train(label text, features text[]) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, text[]) IS 'naive Bayes model of the rows: each a document of class label with a bag of tokens';

CREATE AGGREGATE nb_train(label text, features text[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, text[], float8) IS 'naive Bayes model of the rows: each a document of class label with a bag of tokens, counted weight times';

CREATE AGGREGATE nb_train(label text, features tsvector) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, tsvector) IS 'naive Bayes model of the rows: each a document of class label with the lexemes of a tsvector';

CREATE AGGREGATE nb_train(label text, features tsvector, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, tsvector, float8) IS 'naive Bayes model of the rows: each a document of class label with the lexemes of a tsvector, counted weight times';

CREATE AGGREGATE nb_merge(nb_model) (
	SFUNC = nb_merge, STYPE = nb_model,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_merge(nb_model) IS 'model trained on the union of the rows of the models';

CREATE FUNCTION nbc_train_transfn(nb_model, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, jsonb, float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_jsonb_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, float8[]) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, text, float8[], float8) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label text, features jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, jsonb) IS 'naive Bayes model of the rows: each a document of class label with named features (jsonb object)';

CREATE AGGREGATE nb_train(label text, features jsonb, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, jsonb, float8) IS 'naive Bayes model of the rows: each a document of class label with named features (jsonb object), counted weight times';

CREATE AGGREGATE nb_train(label text, features float8[]) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, float8[]) IS 'naive Bayes model of the rows: each a document of class label with a vector of Gaussian features';

CREATE AGGREGATE nb_train(label text, features float8[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, float8[], float8) IS 'naive Bayes model of the rows: each a document of class label with a vector of Gaussian features, counted weight times';

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
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, text[]) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features text[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, text[], float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features tsvector) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, tsvector) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features tsvector, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, tsvector, float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, jsonb) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features jsonb, weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, jsonb, float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features float8[]) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, float8[]) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

CREATE AGGREGATE nb_train(label anynonarray, features float8[], weight float8) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, float8[], float8) IS 'naive Bayes model of the rows, a label of any type stored as its text (label::text)';

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
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, text) IS 'train a naive Bayes model on documents of text, tokenized as scikit-learn''s CountVectorizer does by default; the model keeps its tokenizer';

CREATE AGGREGATE nb_train(label text, body text, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, text, jsonb) IS 'train a naive Bayes model on documents of text, tokenized with these options (see nb_tokens); the model keeps its tokenizer';

CREATE AGGREGATE nb_train(label text, body text, weight float8, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(text, text, float8, jsonb) IS 'train a naive Bayes model on weighted documents of text, tokenized with these options (NULL: the defaults); the model keeps its tokenizer';

-- Labels of any type for rows of text too (see the labels' forms above).
CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION nbc_train_transfn(nb_model, anynonarray, text, float8, jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_train_text_transfn' LANGUAGE C STABLE PARALLEL SAFE;

CREATE AGGREGATE nb_train(label anynonarray, body text) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, text) IS 'train a naive Bayes model on documents of text with labels of any type (stored as their text), tokenized as scikit-learn''s CountVectorizer does by default';

CREATE AGGREGATE nb_train(label anynonarray, body text, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, text, jsonb) IS 'train a naive Bayes model on documents of text with labels of any type (stored as their text), tokenized with these options';

CREATE AGGREGATE nb_train(label anynonarray, body text, weight float8, tokenizer jsonb) (
	SFUNC = nbc_train_transfn, STYPE = nb_model, FINALFUNC = nbc_train_final,
	COMBINEFUNC = nb_merge, PARALLEL = SAFE);
COMMENT ON AGGREGATE nb_train(anynonarray, text, float8, jsonb) IS 'train a naive Bayes model on weighted documents of text with labels of any type (stored as their text), tokenized with these options (NULL: the defaults)';
