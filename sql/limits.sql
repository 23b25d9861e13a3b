--
-- limits: the text form of big models, decoded and encoded in chunks.
--
-- The size limit itself (NB_MODEL_MAX_SIZE, 805306362 bytes) needs models of
-- ~800 MB: test/reliability/limits.sh checks it at its boundary.  Here: the
-- chunked base64 code at the chunk boundaries (768 kB of bytes, 1 MB of
-- characters), compared with PostgreSQL's own encoder (encode(), which wraps
-- lines every 76 characters), and base64 that is wrong only in its padding.
--
-- Models of one row with a label of L bytes have L + 73 bytes (nb_format.h),
-- so the labels below give every remainder modulo 3: no padding, "==" and "=".
CREATE TABLE lim_models AS
SELECT l, nb_train(repeat('x', l), ARRAY['a']) AS m
FROM (VALUES (2999999), (3000000), (3000001)) v(l) GROUP BY l;

SELECT l, octet_length(nbc_model_send(m)) % 3 AS rest,
       octet_length(m::text) AS chars,
       m::text = translate(encode(nbc_model_send(m), 'base64'), E'\n', '') AS same_as_encode,
       nbc_model_send(encode(nbc_model_send(m), 'base64')::nb_model) = nbc_model_send(m) AS wrapped_input
FROM lim_models ORDER BY l;

-- white space anywhere, also across chunk boundaries, is left out (the
-- label's bytes "xxx" are "eHh4" in base64: an "h" every 4 characters)
SELECT l, nbc_model_send(replace(m::text, 'h', E'h \n\t')::nb_model) = nbc_model_send(m) AS spaced_input
FROM lim_models ORDER BY l;

-- a small model of 78 bytes: its text has no padding
CREATE TABLE lim_small AS SELECT nb_train(l, ARRAY['a']) AS m FROM (VALUES ('abcde')) v(l);
SELECT octet_length(nbc_model_send(m)) AS bytes, right(m::text, 2) AS ending FROM lim_small;

-- padding anywhere but at the end is invalid base64, not a different model
SELECT (left(m::text, 8) || 'QQ==' || substr(m::text, 9))::nb_model FROM lim_small;
SELECT (left(m::text, 10) || '=' || substr(m::text, 12))::nb_model FROM lim_small;
SELECT (left(m::text, 8) || 'Q= =' || substr(m::text, 9))::nb_model FROM lim_small;
-- too much padding, or a length that is not a multiple of 4
SELECT (m::text || 'Q===')::nb_model FROM lim_small;
SELECT (m::text || 'QQQ')::nb_model FROM lim_small;
-- ... also when the chunks before were fine
SELECT (m::text || 'QQ==QQQQ')::nb_model FROM lim_models WHERE l = 2999999;

DROP TABLE lim_models, lim_small;
