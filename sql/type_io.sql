--
-- type_io: text and binary forms of nb_model, and validation of every input.
--

--
-- Helpers to craft model bytes (layout: src/nb_format.h).
--
-- nbt_hash is a port of nb_hash_bytes (src/nb_hash.h) to SQL, with unsigned
-- 64-bit arithmetic done on bit(64) and numeric; nbt_fix rewrites the
-- checksum at offset 24 (nb_format_checksum: nb_hash_bytes of every byte after
-- the 32-byte header, seeded with nb_hash_bytes of the header's first 24 bytes
-- under seed NB_CHECKSUM_SEED), so crafted values get past the checksum and reach
-- the deeper checks.  The port is checked against models made by nb_train below.
--
CREATE FUNCTION nbt_u64_num(b bit(64)) RETURNS numeric LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN b::int8 < 0 THEN b::int8::numeric + 18446744073709551616
              ELSE b::int8::numeric END $$;
CREATE FUNCTION nbt_num_u64(n numeric) RETURNS bit(64) LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT (CASE WHEN m >= 9223372036854775808 THEN m - 18446744073709551616 ELSE m END)::int8::bit(64)
  FROM (SELECT mod(n, 18446744073709551616) AS m) s $$;
CREATE FUNCTION nbt_mul(a bit(64), b bit(64)) RETURNS bit(64) LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT nbt_num_u64(nbt_u64_num(a) * nbt_u64_num(b)) $$;
CREATE FUNCTION nbt_rotl(x bit(64), r int) RETURNS bit(64) LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT (x << r) | (x >> (64 - r)) $$;
-- little-endian 64-bit word at byte offset off, zero-padded past the end
CREATE FUNCTION nbt_le64(b bytea, off int) RETURNS bit(64) LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT ('x' || string_agg(lpad(to_hex(CASE WHEN off + i < length(b) THEN get_byte(b, off + i) ELSE 0 END), 2, '0'),
                            '' ORDER BY i DESC))::bit(64)
  FROM generate_series(0, 7) AS i $$;
CREATE FUNCTION nbt_hash(data bytea, seed bit(64)) RETURNS bit(64) LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  p1 bit(64) := x'9e3779b97f4a7c15';
  p2 bit(64) := x'bf58476d1ce4e5b9';
  len int := length(data);
  h bit(64) := seed # nbt_num_u64(length(data) * nbt_u64_num(x'9e3779b97f4a7c15'));
  pos int := 0;
BEGIN
  WHILE len - pos >= 8 LOOP
    h := h # nbt_mul(nbt_rotl(nbt_mul(nbt_le64(data, pos), p2), 31), p1);
    h := nbt_num_u64(nbt_u64_num(nbt_rotl(h, 27)) * 5 + 1390208809);  -- + 0x52dce729
    pos := pos + 8;
  END LOOP;
  IF len > pos THEN
    h := h # nbt_mul(nbt_rotl(nbt_mul(nbt_le64(data, pos), p2), 31), p1);
  END IF;
  -- nb_hash_mix
  h := h # (h >> 33);
  h := nbt_mul(h, x'ff51afd7ed558ccd');
  h := h # (h >> 33);
  h := nbt_mul(h, x'c4ceb9fe1a85ec53');
  RETURN h # (h >> 33);
END $$;
-- the bytes with the checksum recomputed
CREATE FUNCTION nbt_fix(b bytea) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT overlay(b PLACING decode(string_agg(substr(hx, 15 - 2 * i, 2), '' ORDER BY i), 'hex') FROM 25 FOR 8)
  FROM (SELECT lpad(to_hex(nbt_hash(substr(b, 33), nbt_hash(substr(b, 1, 24), x'6e62632d6d6f646c'))::int8), 16, '0') AS hx) s,
       generate_series(0, 7) AS i $$;
-- little-endian unsigned integer of n bytes; little-endian IEEE double
CREATE FUNCTION nbt_le(v int8, n int) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT decode(string_agg(lpad(to_hex((v >> (8 * i)) & 255), 2, '0'), '' ORDER BY i), 'hex')
  FROM generate_series(0, n - 1) AS i $$;
CREATE FUNCTION nbt_f64(v float8) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT decode(string_agg(substr(encode(float8send(v), 'hex'), 15 - 2 * i, 2), '' ORDER BY i), 'hex')
  FROM generate_series(0, 7) AS i $$;
CREATE FUNCTION nbt_u32s(a int8[]) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(string_agg(nbt_le(v, 4), '' ORDER BY i), '') FROM unnest(a) WITH ORDINALITY AS u(v, i) $$;
CREATE FUNCTION nbt_f64s(a float8[]) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(string_agg(nbt_f64(v), '' ORDER BY i), '') FROM unnest(a) WITH ORDINALITY AS u(v, i) $$;
CREATE FUNCTION nbt_strs(a text[]) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(string_agg(convert_to(v, 'UTF8'), '' ORDER BY i), '') FROM unnest(a) WITH ORDINALITY AS u(v, i) $$;
CREATE FUNCTION nbt_lens(a text[]) RETURNS int8[] LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(array_agg(octet_length(convert_to(v, 'UTF8'))::int8 ORDER BY i), '{}')
  FROM unnest(a) WITH ORDINALITY AS u(v, i) $$;
-- a model in format version 1 from its parts, with a correct checksum
CREATE FUNCTION nbt_build(docs float8[], labels text[], tokens text[], token_entries int8[],
                          entry_class int8[], entry_count float8[], entry_docs float8[])
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT nbt_fix('NBCM'::bytea || nbt_le(1, 2) || nbt_le(0, 2)
                 || nbt_le(cardinality(labels), 4) || nbt_le(cardinality(tokens), 4)
                 || nbt_le(cardinality(entry_class), 8) || nbt_le(0, 8)
                 || nbt_f64s(docs) || nbt_u32s(nbt_lens(labels)) || nbt_u32s(nbt_lens(tokens))
                 || nbt_u32s(token_entries) || nbt_u32s(entry_class)
                 || nbt_f64s(entry_count) || nbt_f64s(entry_docs)
                 || nbt_strs(labels) || nbt_strs(tokens)) $$;
-- text form of raw bytes: base64 without the line breaks encode() inserts
CREATE FUNCTION nbt_text(b bytea) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT translate(encode(b, 'base64'), E'\n', '') $$;

-- the reference model and the raw bytes of every model used below
CREATE TABLE io_models (id int PRIMARY KEY, m nb_model);
INSERT INTO io_models SELECT 1, nb_train(label, tokens) FROM docs;
INSERT INTO io_models SELECT 2, nb_train(label, tokens) FROM docs WHERE label = 'ham';
INSERT INTO io_models SELECT 3, nb_train(label, tokens, 0.1) FROM docs;
INSERT INTO io_models SELECT 4, nb_train(l, t)
  FROM (VALUES ('only', '{}'::text[]), ('é', '{ü,"",ü}'), ('', '{x}')) AS v(l, t);
INSERT INTO io_models SELECT 5, NULL;

-- the checksum port agrees with the extension on every model
SELECT id, length(nbc_model_send(m)) AS bytes, nbt_fix(nbc_model_send(m)) = nbc_model_send(m) AS checksum_port_ok
FROM io_models ORDER BY id;

-- a hand-made version 1 value (nb_format.h layout) is the model nb_train
-- makes, but for what version 3 adds: the document lengths
CREATE FUNCTION nbt_counts(m nb_model) RETURNS jsonb LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT m::jsonb - 'format_version'
         || jsonb_build_object('classes', (SELECT jsonb_object_agg(k, v - 'lengths')
                                           FROM jsonb_each(m::jsonb -> 'classes') AS c(k, v))) $$;
SELECT nbt_counts(nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{1}'))::nb_model)
       = (SELECT nbt_counts(nb_train(l, t)) FROM (VALUES ('a', '{x}'::text[])) v(l, t)) AS same_counts;
SELECT nbt_counts(nbt_text(nbt_build('{2,2}', '{ham,spam}', '{agenda,cheap,lunch,meeting,money,now,offer,tomorrow,win}',
                 '{1,1,1,1,2,1,1,1,1}', '{0,1,0,0,0,1,1,1,0,1}',
                 '{1,1,1,1,1,3,1,1,2,1}', '{1,1,1,1,1,2,1,1,2,1}'))::nb_model)
       = (SELECT nbt_counts(m) FROM io_models WHERE id = 1) AS same_counts;
-- the text form of that model: it must not change within format version 3
SELECT m::text AS text_form FROM io_models WHERE id = 1;

--
-- Text round trip
--
SELECT id, m::text::nb_model::text = m::text AS text_round_trip,
       decode(m::text, 'base64') = nbc_model_send(m) AS text_is_base64_of_send,
       left(m::text, 6) AS starts
FROM io_models ORDER BY id;

-- the round-tripped model is the same model: same counts, same predictions
SELECT m::text::nb_model::jsonb = m::jsonb AS same_counts,
       nb_predict_proba(m::text::nb_model, '{money,tomorrow,zzz}'::text[])
         = nb_predict_proba(m, '{money,tomorrow,zzz}'::text[]) AS same_proba,
       nb_predict_proba(m::text::nb_model, '{money,tomorrow,zzz}'::text[],
                        '{"kind": "bernoulli", "alpha": 0.5}')
         = nb_predict_proba(m, '{money,tomorrow,zzz}'::text[],
                            '{"kind": "bernoulli", "alpha": 0.5}') AS same_bernoulli
FROM io_models WHERE id = 1;

--
-- COPY round trips: binary, then text
--
COPY io_models TO '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
CREATE TABLE io_copy (LIKE io_models);
COPY io_copy FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
SELECT a.id, a.m::text IS NOT DISTINCT FROM b.m::text AS same
FROM io_models a JOIN io_copy b USING (id) ORDER BY a.id;
TRUNCATE io_copy;
COPY io_models TO '/tmp/nbc_regress_copy.txt';
COPY io_copy FROM '/tmp/nbc_regress_copy.txt';
SELECT a.id, a.m::text IS NOT DISTINCT FROM b.m::text AS same
FROM io_models a JOIN io_copy b USING (id) ORDER BY a.id;

--
-- Invalid text input
--
SELECT 'not base64!'::nb_model;
-- white space in the base64 is ignored, so encode()'s 76-character lines are accepted
SELECT encode(nbc_model_send(m), 'base64')::nb_model FROM io_models WHERE id = 1;
SELECT ''::nb_model;
SELECT nbt_text('\x4e42434d0100000002000000')::nb_model;   -- 12 bytes
SELECT nbt_text(substr(nbc_model_send(m), 1, 31))::nb_model FROM io_models WHERE id = 1;

-- the decoder's endings: models whose bytes end a whole quantum, with one
-- '=' and with two all round trip; '=' inside the text, data after the
-- padding, a character outside base64 and a missing last character are
-- refused
SELECT octet_length(nbc_model_send(m)) % 3 AS bytes_mod_3, bool_and(m::text::nb_model = m) AS round_trip,
       count(*) AS models
FROM (SELECT nb_train('a', ARRAY[repeat('t', i)]) AS m FROM generate_series(1, 6) AS i GROUP BY i) s
GROUP BY 1 ORDER BY 1;
SELECT overlay(m::text placing '=' from 9 for 1)::nb_model FROM io_models WHERE id = 1;
SELECT (m::text || 'AAAA')::nb_model FROM io_models WHERE m::text LIKE '%=' LIMIT 1;
SELECT overlay(m::text placing '*' from 13 for 1)::nb_model FROM io_models WHERE id = 1;
SELECT left(m::text, -1)::nb_model FROM io_models WHERE id = 1;

-- SQLSTATE 22P02 (invalid_text_representation) for text input, bad base64 or bad bytes
\set VERBOSITY sqlstate
SELECT 'not base64!'::nb_model;
SELECT ''::nb_model;
\set VERBOSITY default

-- Header checks (checksum left as is: the checks before the checksum say why)
CREATE TABLE io_ref AS SELECT nbc_model_send(m) AS b FROM io_models WHERE id = 1;
SELECT nbt_text(set_byte(b, 0, ascii('X')))::nb_model FROM io_ref;            -- magic
SELECT nbt_text(set_byte(b, 4, 5))::nb_model FROM io_ref;                     -- version 5
SELECT nbt_text(set_byte(b, 5, 1))::nb_model FROM io_ref;                     -- version 259
SELECT nbt_text(set_byte(b, 6, 1))::nb_model FROM io_ref;                     -- flags 0x0001
SELECT nbt_text(set_byte(b, 7, 128))::nb_model FROM io_ref;                   -- flags 0x8000
SELECT nbt_text(overlay(b PLACING nbt_le(0, 4) FROM 9))::nb_model FROM io_ref;  -- no classes
-- counts that do not fit the length
-- (C = 3 instead of 2 still fits, and the checksum catches it)
SELECT nbt_text(overlay(b PLACING nbt_le(3, 4) FROM 9))::nb_model FROM io_ref;       -- C = 3
SELECT nbt_text(overlay(b PLACING nbt_le(1000, 4) FROM 9))::nb_model FROM io_ref;    -- C
SELECT nbt_text(overlay(b PLACING nbt_le(1000, 4) FROM 13))::nb_model FROM io_ref;   -- V
SELECT nbt_text(overlay(b PLACING nbt_le(50, 8) FROM 17))::nb_model FROM io_ref;     -- E
SELECT nbt_text(overlay(b PLACING '\xffffffffffffffff'::bytea FROM 17))::nb_model FROM io_ref;  -- E = 2^64-1
SELECT nbt_text(overlay(b PLACING '\xffffffff'::bytea FROM 9))::nb_model FROM io_ref;           -- C = 2^32-1
SELECT nbt_text(substr(b, 1, length(b) - 1))::nb_model FROM io_ref;    -- truncated: checksum
-- checksum mismatch: one bit of a count, of a string, of the checksum itself
SELECT nbt_text(set_byte(b, 40, get_byte(b, 40) # 1))::nb_model FROM io_ref;
SELECT nbt_text(set_byte(b, length(b) - 1, ascii('W')))::nb_model FROM io_ref;
SELECT nbt_text(set_byte(b, 24, get_byte(b, 24) # 128))::nb_model FROM io_ref;
SELECT nbt_text(b || '\x00'::bytea)::nb_model FROM io_ref;

--
-- Deeper checks, with a correct checksum (nbt_build, nbt_fix)
--
-- the smallest valid models: one class without tokens; two classes
SELECT nbt_text(nbt_build('{1}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model::jsonb;
SELECT nbt_text(nbt_build('{0.5,3}', '{a,b}', '{x}', '{1}', '{1}', '{2.5}', '{0.5}'))::nb_model::jsonb;
-- document counts of a class: zero, negative, NaN, infinite
SELECT nbt_text(nbt_build('{0}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1,-1}', '{a,b}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{NaN}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{Infinity}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{-Infinity}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
-- labels: unsorted, duplicate, empty label sorts first (valid)
SELECT nbt_text(nbt_build('{1,1}', '{b,a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1,1}', '{a,ab,aa}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,""}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{"",a}', '{}', '{}', '{}', '{}', '{}'))::nb_model::jsonb;
-- tokens: unsorted, duplicate
SELECT nbt_text(nbt_build('{1}', '{a}', '{y,x}', '{1,1}', '{0,0}', '{1,1}', '{1,1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x,x}', '{1,1}', '{0,0}', '{1,1}', '{1,1}'))::nb_model;
-- byte order, not collation order: "B" (0x42) before "a" (0x61) is valid, the reverse is not
SELECT nbt_text(nbt_build('{1,1}', '{B,a}', '{}', '{}', '{}', '{}', '{}'))::nb_model::jsonb;
SELECT nbt_text(nbt_build('{1,1}', '{a,B}', '{}', '{}', '{}', '{}', '{}'))::nb_model;
-- a zero byte in a label or a token (crafted in place of the last byte, 'z')
SELECT nbt_text(nbt_fix(set_byte(b, length(b) - 1, 0)))::nb_model
FROM (SELECT nbt_build('{1,1}', '{a,z}', '{}', '{}', '{}', '{}', '{}') AS b) s;
SELECT nbt_text(nbt_fix(set_byte(b, length(b) - 1, 0)))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{x,z}', '{1,1}', '{0,0}', '{1,1}', '{1,1}') AS b) s;
-- invalid UTF-8 in a label or a token (0xff in place of the last byte, 'z')
SELECT nbt_text(nbt_fix(set_byte(b, length(b) - 1, 255)))::nb_model
FROM (SELECT nbt_build('{1,1}', '{a,z}', '{}', '{}', '{}', '{}', '{}') AS b) s;
SELECT nbt_text(nbt_fix(set_byte(b, length(b) - 1, 255)))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{x,z}', '{1,1}', '{0,0}', '{1,1}', '{1,1}') AS b) s;
-- a truncated multibyte character: 'é' is c3 a9; keep only c3 (and fix the length)
SELECT nbt_text(nbt_fix(overlay(substr(b, 1, length(b) - 1) PLACING nbt_le(1, 4) FROM 41)))::nb_model
FROM (SELECT nbt_build('{1}', '{é}', '{}', '{}', '{}', '{}', '{}') AS b) s;
-- string lengths that do not add up: labels past the end, a token past the end,
-- bytes left over after the last token
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(100, 4) FROM 41)))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{1}') AS b) s;
SELECT nbt_text(nbt_fix(overlay(b PLACING nbt_le(100, 4) FROM 45)))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{1}') AS b) s;
SELECT nbt_text(nbt_fix(b || 'y'::bytea))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{1}') AS b) s;
SELECT nbt_text(nbt_fix(b || 'y'::bytea))::nb_model
FROM (SELECT nbt_build('{1}', '{a}', '{}', '{}', '{}', '{}', '{}') AS b) s;
-- entries per token: 0, more than the classes, more than the entries left
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{0}', '{}', '{}', '{}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x,y}', '{1,0}', '{0}', '{1}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{2}', '{0,0}', '{1,1}', '{1,1}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,b}', '{x,y}', '{1,2}', '{0,1}', '{1,1}', '{1,1}'))::nb_model;
-- entries not all used by the tokens
SELECT nbt_text(nbt_build('{1,1}', '{a,b}', '{x}', '{1}', '{0,1}', '{1,1}', '{1,1}'))::nb_model;
-- entry classes: out of range, decreasing, repeated
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{1}', '{1}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,b}', '{x}', '{1}', '{4294967295}', '{1}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,b}', '{x}', '{2}', '{1,0}', '{1,1}', '{1,1}'))::nb_model;
SELECT nbt_text(nbt_build('{1,1}', '{a,b}', '{x}', '{2}', '{0,0}', '{1,1}', '{1,1}'))::nb_model;
-- entry counts and document frequencies: zero, negative, NaN, infinite
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{0}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{-2}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{NaN}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{Infinity}', '{1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x,y}', '{1,1}', '{0,0}', '{1,1}', '{1,0}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{-1}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{NaN}'))::nb_model;
SELECT nbt_text(nbt_build('{1}', '{a}', '{x}', '{1}', '{0}', '{1}', '{-Infinity}'))::nb_model;
-- a negative zero is not positive either
SELECT nbt_text(nbt_build('{-0}', '{a}', '{}', '{}', '{}', '{}', '{}'))::nb_model;

--
-- Binary input (nbc_model_recv): COPY a crafted bytea out in binary format and
-- read it back as an nb_model; the same validation applies.
--
CREATE TABLE io_raw (b bytea);
CREATE TABLE io_in (m nb_model);
INSERT INTO io_raw SELECT nbc_model_send(m) FROM io_models WHERE id = 4;
COPY io_raw TO '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
COPY io_in FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
SELECT m::text = (SELECT m::text FROM io_models WHERE id = 4) AS same FROM io_in;
TRUNCATE io_raw;
INSERT INTO io_raw SELECT set_byte(b, 40, get_byte(b, 40) # 1) FROM io_ref;
COPY io_raw TO '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
COPY io_in FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
TRUNCATE io_raw;
INSERT INTO io_raw SELECT nbt_fix(set_byte(b, length(b) - 1, 255))
FROM (SELECT nbt_build('{1}', '{a}', '{x,z}', '{1,1}', '{0,0}', '{1,1}', '{1,1}') AS b) s;
COPY io_raw TO '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
COPY io_in FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
TRUNCATE io_raw;
INSERT INTO io_raw VALUES ('\x4e42434d');
COPY io_raw TO '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
COPY io_in FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
-- SQLSTATE 22P03 (invalid_binary_representation) for binary input
\set VERBOSITY sqlstate
COPY io_in FROM '/tmp/nbc_regress_copy.bin' WITH (FORMAT binary);
\set VERBOSITY default
SELECT count(*) FROM io_in;

--
-- Stored values are validated again where they are used.  A binary-coercible
-- cast from bytea (superuser only, test only) gets unvalidated bytes into an
-- nb_model; every function that reads a model rejects them (SQLSTATE XX001).
--
CREATE CAST (bytea AS nb_model) WITHOUT FUNCTION;
CREATE TABLE io_bad AS
  SELECT set_byte(b, 40, get_byte(b, 40) # 1)::nb_model AS m FROM io_ref;
\set VERBOSITY sqlstate
SELECT nb_info(m) FROM io_bad;
SELECT m::jsonb FROM io_bad;
SELECT * FROM nb_classes((SELECT m FROM io_bad));
SELECT * FROM nb_mutual_info((SELECT m FROM io_bad));
SELECT nb_predict(m, '{money}'::text[]) FROM io_bad;
SELECT nb_merge(m, m) FROM io_bad;
SELECT nb_merge(m) FROM io_bad;
\set VERBOSITY default
SELECT nb_info(m) FROM io_bad;
-- the output functions do not validate: the bad bytes come out as they are, and
-- cannot come back in
SELECT decode(m::text, 'base64') = (SELECT set_byte(b, 40, get_byte(b, 40) # 1) FROM io_ref) AS same_bytes
FROM io_bad;
SELECT m::text::nb_model FROM io_bad;
DROP TABLE io_bad;
DROP CAST (bytea AS nb_model);

-- The casts between nb_model and text are the input and output functions: the
-- same text as the I/O conversion (to varchar, which has no cast of its own),
-- for a small model in memory and for a big one stored out of line without
-- compression, which both casts read in slices; white space in the text is
-- skipped as input skips it.
CREATE TABLE io_big (m nb_model, t text);
ALTER TABLE io_big ALTER m SET STORAGE EXTERNAL, ALTER t SET STORAGE EXTERNAL;
INSERT INTO io_big (m)
SELECT nb_train(CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END,
                ARRAY['w' || i, 'v' || (i % 1000)])
FROM generate_series(1, 60000) AS i;
UPDATE io_big SET t = m::text;
SELECT octet_length(t) > 2 * 1024 * 1024 AS text_over_two_chunks,
       pg_column_compression(m) IS NULL AND pg_column_compression(t) IS NULL AS uncompressed,
       t = m::varchar::text AS same_as_io,
       t::nb_model = m AS round_trip,
       t::varchar::nb_model = m AS same_as_io_input,
       nb_model(regexp_replace(t, '(.{76})', E'\\1\n', 'g')) = m AS white_space_skipped
FROM io_big;
SELECT m::text = m::varchar::text AS same_as_io,
       (m::text)::nb_model = m AS round_trip
FROM io_models WHERE id = 1;
UPDATE io_big SET t = left(t, -4);
SELECT t::nb_model FROM io_big;
SELECT 'bm90IGEgbW9kZWw='::text::nb_model;
DROP TABLE io_big;

-- The packed form (src/nb_pack.h), in which a Citus worker sends a partial
-- state (the output function packs a model when an aggregate calls it, as
-- Citus's worker_partial_agg does): "NBCP", the model's size as a varint,
-- then segments rebuilding its bytes, base64.  Packed by hand here: the
-- model's bytes as one segment of raw bytes (kind 0), which both casts take;
-- a packed form whose segments do not make the size it gives is refused.
CREATE FUNCTION pg_temp.nbt_varint(v bigint) RETURNS bytea LANGUAGE sql AS $$
  SELECT string_agg(set_byte('\x00'::bytea, 0,
                             ((v >> (7 * i)) & 127)::int | CASE WHEN v >> (7 * (i + 1)) > 0 THEN 128 ELSE 0 END),
                    '' ORDER BY i)
  FROM generate_series(0, 8) AS i WHERE i = 0 OR v >> (7 * i) > 0 $$;
CREATE FUNCTION pg_temp.nbt_packed(b bytea, size bigint) RETURNS text LANGUAGE sql AS $$
  SELECT nbt_text('NBCP'::bytea || pg_temp.nbt_varint(size)
                          || pg_temp.nbt_varint(octet_length(b) * 4) || b) $$;
SELECT pg_temp.nbt_packed(nbc_model_send(m), octet_length(nbc_model_send(m)))::nb_model = m AS packed_read,
       nb_model(pg_temp.nbt_packed(nbc_model_send(m), octet_length(nbc_model_send(m)))) = m AS packed_cast
FROM io_models WHERE id = 1;
SELECT pg_temp.nbt_packed(nbc_model_send(m), octet_length(nbc_model_send(m)) + 1)::nb_model
FROM io_models WHERE id = 1;
SELECT pg_temp.nbt_packed(substr(nbc_model_send(m), 2), octet_length(nbc_model_send(m)) - 1)::nb_model
FROM io_models WHERE id = 1;
-- a size more than 8 times the packed bytes cannot be (a byte unpacks to at
-- most 8): refused before anything of that size is taken
SELECT pg_temp.nbt_packed(nbc_model_send(m), 500000000)::nb_model
FROM io_models WHERE id = 1;
