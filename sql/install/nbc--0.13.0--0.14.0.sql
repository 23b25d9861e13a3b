-- nbc 0.13.0 -> 0.14.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.14.0'" to load this file. \quit

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
