-- nbc's objects, 00: the model type nb_model, its input and output, the
-- comparison operators with their btree and hash classes, and its casts to
-- text and jsonb.

-- The model type.  Its text form is base64 of the versioned binary format, so
-- model::text::nb_model, pg_dump and Citus' text transport are exact.
CREATE TYPE nb_model;

CREATE FUNCTION nbc_model_in(cstring) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_model_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nbc_model_out(nb_model) RETURNS cstring
	AS 'MODULE_PATHNAME', 'nb_model_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nbc_model_recv(internal) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_model_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nbc_model_send(nb_model) RETURNS bytea
	AS 'MODULE_PATHNAME', 'nb_model_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE nb_model (
	INPUT = nbc_model_in,
	OUTPUT = nbc_model_out,
	RECEIVE = nbc_model_recv,
	SEND = nbc_model_send,
	INTERNALLENGTH = VARIABLE,
	STORAGE = extended
);
COMMENT ON TYPE nb_model IS 'naive Bayes model: per-class statistics of token bags, categorical, Gaussian and boolean features';

CREATE FUNCTION nb_model_to_jsonb(nb_model) RETURNS jsonb
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_model_to_jsonb(nb_model) IS 'every count of a model in readable form';

CREATE CAST (nb_model AS jsonb) WITH FUNCTION nb_model_to_jsonb(nb_model);

-- Equal models are byte-identical (the format is canonical), so equality is
-- byte equality; the order is byte order and means nothing else.  They let
-- DISTINCT, GROUP BY, UNION, ORDER BY, hash and merge joins, and Citus'
-- count(DISTINCT ...) work on nb_model.
CREATE FUNCTION nbc_model_eq(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_eq(nb_model, nb_model) IS 'equal: the same serialized bytes';

CREATE FUNCTION nbc_model_ne(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_ne(nb_model, nb_model) IS 'not equal';

CREATE FUNCTION nbc_model_lt(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_lt(nb_model, nb_model) IS 'less than in byte order';

CREATE FUNCTION nbc_model_le(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_le(nb_model, nb_model) IS 'less than or equal in byte order';

CREATE FUNCTION nbc_model_gt(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_gt(nb_model, nb_model) IS 'greater than in byte order';

CREATE FUNCTION nbc_model_ge(nb_model, nb_model) RETURNS boolean
	AS 'MODULE_PATHNAME', 'nb_model_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_ge(nb_model, nb_model) IS 'greater than or equal in byte order';

CREATE FUNCTION nbc_model_cmp(nb_model, nb_model) RETURNS integer
	AS 'MODULE_PATHNAME', 'nb_model_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_cmp(nb_model, nb_model) IS 'btree support: byte order of the serialized models';

CREATE FUNCTION nbc_model_hash(nb_model) RETURNS integer
	AS 'MODULE_PATHNAME', 'nb_model_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_hash(nb_model) IS 'hash support: hash of the serialized bytes';

CREATE FUNCTION nbc_model_hash_extended(nb_model, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'nb_model_hash_extended' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nbc_model_hash_extended(nb_model, bigint) IS 'hash support: seeded 64-bit hash of the serialized bytes';

CREATE OPERATOR = (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES);

CREATE OPERATOR <> (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);

CREATE OPERATOR < (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);

CREATE OPERATOR <= (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);

CREATE OPERATOR > (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);

CREATE OPERATOR >= (
	LEFTARG = nb_model, RIGHTARG = nb_model, FUNCTION = nbc_model_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR CLASS nb_model_ops DEFAULT FOR TYPE nb_model USING btree AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 nbc_model_cmp(nb_model, nb_model);

CREATE OPERATOR CLASS nb_model_ops DEFAULT FOR TYPE nb_model USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 nbc_model_hash(nb_model),
	FUNCTION 2 nbc_model_hash_extended(nb_model, bigint);

-- The casts to and from text: the same conversions as the type's output
-- and input functions, written straight into (and read in slices from) the
-- text value, so that a big model's text form is made and read with checks
-- for a cancel throughout.  Assignment and explicit, as the I/O conversion
-- casts of a type are.
CREATE FUNCTION nbc_model_to_text(nb_model) RETURNS text
	AS 'MODULE_PATHNAME', 'nb_model_to_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION nb_model(text) RETURNS nb_model
	AS 'MODULE_PATHNAME', 'nb_model_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION nb_model(text) IS 'model from its text form (the cast text::nb_model)';

CREATE CAST (nb_model AS text) WITH FUNCTION nbc_model_to_text(nb_model) AS ASSIGNMENT;

CREATE CAST (text AS nb_model) WITH FUNCTION nb_model(text);
