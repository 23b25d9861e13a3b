-- nbc's objects, 40: models made from models: nb_subtract, nb_prune and
-- nb_with_options.

-- Unlearning: nb_subtract.
-- The model of the rows of a without those of b (which must be among them),
-- the inverse of nb_merge.  Not STRICT: NULL b gives a (and NULL a, NULL).
CREATE FUNCTION nb_subtract(a nb_model, b nb_model) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_subtract(nb_model, nb_model) IS 'model of the rows of the first model without those of the second (the inverse of nb_merge; NULL when nothing is left)';

-- Smaller models: nb_prune.
CREATE FUNCTION nb_prune(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_prune' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_prune(nb_model, jsonb) IS 'the model trained on the same rows without the tokens and features that options top_k, min_documents and max_document_fraction leave out';

-- Options that travel with the model: nb_with_options(model, options)
-- keeps prediction options in the model (checked against it); every scoring
-- function applies them, a call's own options taking precedence key by key.
-- NULL options remove them.
CREATE FUNCTION nb_with_options(model nb_model, options jsonb) RETURNS nb_model
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION nb_with_options(nb_model, jsonb) IS 'the model with these prediction options kept inside it as its defaults (NULL: none)';
