--
-- jsonb_numbers: the two places nbc reads or writes PostgreSQL's private
-- formats (src/pg_jsonb.c) against PostgreSQL's public functions, on the
-- version under test.  A jsonb number nbc reads must be the float8 that
-- numeric::float8 gives; a float8 nbc writes must be the number to_jsonb
-- gives (the shortest digits that read back as the same float8); jsonb nbc
-- writes must be the bytes jsonb_in makes of its text.
--
-- to_jsonb(float8) writes the shortest digits that read back exactly when
-- extra_float_digits > 0 (the default, 1); nbc always does
SET extra_float_digits = 1;

-- random numbers over the range of float8: 1 to 36 significant digits, the
-- decimal point anywhere, exponents -300 to 300, either sign (within float8's
-- normal range); and edges
SELECT setseed(0.25);
CREATE TABLE jsonb_numbers_values AS
SELECT v FROM (SELECT (CASE WHEN random() < 0.3 THEN '-' ELSE '' END
        || substr(digits, 1, point) || '.' || substr(digits, point + 1)
        || 'e' || (floor(random() * 601) - 300)::int)::numeric AS v
FROM (SELECT digits, 1 + floor(random() * length(digits))::int AS point
      FROM (SELECT left(lpad(floor(random() * 1e18)::bigint::text, 18, '0')
                        || lpad(floor(random() * 1e18)::bigint::text, 18, '0'),
                        1 + floor(random() * 36)::int) AS digits
            FROM generate_series(1, 4000)) AS d) AS p) AS r
WHERE v = 0 OR abs(v) BETWEEN 1e-300 AND 1e300
UNION ALL
SELECT v::numeric FROM unnest(ARRAY['0', '-0', '1', '-1', '0.1', '0.3', '1e-300',
    '2.2250738585072014e-308', '2.2250738585072009e-308', '4.9406564584124654e-324',
    '1.7976931348623157e308', '-1.7976931348623157e308', '9007199254740993',
    '0.30000000000000004', '123456789012345678901234567890', '1e22', '1e23',
    '5e-324', '2.5e-320', '0.000001', '100000000000000000000',
    -- the most digits the shortest text has: 17 significant, after "0." and zeros
    '0.29411764705882354', '0.00012345678901234567', '-0.99999999999999989',
    '123456789012345.67']) AS e(v);

-- read and written back: a Gaussian feature of one row, whose mean is the
-- number nbc read, as the model's jsonb shows it (the same value, text and
-- size: nbc builds the numeric numeric_in would make of the shortest digits)
CREATE TABLE jsonb_numbers_read AS
SELECT v, m::jsonb #> '{features,x,mean}' AS nbc, to_jsonb(v::float8) AS postgresql
FROM jsonb_numbers_values,
     LATERAL (SELECT nb_train('a', x) AS m
              FROM (VALUES (jsonb_build_object('x', v))) AS r(x)) AS t;
SELECT count(*) AS values,
       count(*) FILTER (WHERE nbc IS DISTINCT FROM postgresql
                        OR nbc::text IS DISTINCT FROM postgresql::text
                        OR pg_column_size(nbc) <> pg_column_size(postgresql)) AS differ
FROM jsonb_numbers_read;

-- the numbers that differ, if any (none)
SELECT v, nbc, postgresql
FROM jsonb_numbers_read
WHERE nbc IS DISTINCT FROM postgresql OR nbc::text IS DISTINCT FROM postgresql::text
   OR pg_column_size(nbc) <> pg_column_size(postgresql)
LIMIT 5;

-- jsonb written by nbc and the jsonb of its text: the same value, the same
-- size, the same text.  Objects of more than 32 keys (where a JEntry holds
-- an offset instead of a length), nested containers, strings, nulls.  The
-- results are compared as the functions return them (a table would store
-- them compressed).
CREATE TABLE jsonb_numbers_docs AS
SELECT 'c' || (i % 40) AS label,
       ARRAY['w' || (i % 7), 'w' || (i % 11), 'w' || (i % 13), 'x' || (i % 40)] AS tokens,
       jsonb_build_object('g', (i % 17) * 0.37 - (i % 40), 'h', i % 3 = 0) AS mixed
FROM generate_series(1, 400) AS i;
WITH results AS MATERIALIZED (
SELECT 'proba' AS what, nb_predict_proba(m, d.tokens) AS j
FROM (SELECT nb_train(label, tokens) AS m FROM jsonb_numbers_docs) AS t, jsonb_numbers_docs AS d
UNION ALL
SELECT 'log_proba', nb_predict_log_proba(m, d.tokens, '{"alpha": 0}')
FROM (SELECT nb_train(label, tokens) AS m FROM jsonb_numbers_docs) AS t, jsonb_numbers_docs AS d
UNION ALL
SELECT 'model', nb_train(label, tokens)::jsonb FROM jsonb_numbers_docs
UNION ALL
SELECT 'mixed model', nb_train(label, mixed)::jsonb FROM jsonb_numbers_docs
UNION ALL
SELECT 'info', nb_info(nb_with_options(nb_train(label, tokens), '{"alpha": 0.25}')) FROM jsonb_numbers_docs
UNION ALL
SELECT 'metrics', nb_metrics(label, nb_predict_proba(m, d.tokens))
FROM (SELECT nb_train(label, tokens) AS m FROM jsonb_numbers_docs) AS t, jsonb_numbers_docs AS d)
SELECT what, count(*) AS results,
       count(*) FILTER (WHERE j IS DISTINCT FROM j::text::jsonb
                        OR pg_column_size(j) <> pg_column_size(j::text::jsonb)
                        OR j::text <> j::text::jsonb::text) AS differ
FROM results
GROUP BY what
ORDER BY what;

DROP TABLE jsonb_numbers_values, jsonb_numbers_read, jsonb_numbers_docs;
