-- nbc 0.2.0 -> 0.3.0: models as values SQL can compare.
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.3.0'" to load this file. \quit

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
