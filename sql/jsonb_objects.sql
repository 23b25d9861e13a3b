--
-- jsonb_objects: the objects of probabilities nb_metrics reads from jsonb's
-- binary form (src/pg_jsonb.c, nb_jsonb_keys_match .. nb_jsonb_numbers)
-- against PostgreSQL's public functions (jsonb_each, jsonb::float8), on the
-- version under test: every row's keys, their values and which key is named
-- when a value is not a probability.
--
-- Random objects: 1 to about 60 keys (past 32 a JEntry holds an offset
-- instead of a length), keys of 1 to 40 characters from a few letters and
-- two of two bytes (so short keys recur, and one row's key bytes are
-- another's split otherwise), values 0, 1, numerals of 1 to 17 digits and
-- float8 down to 1e-100; runs of rows with the same keys, which the reader
-- recognizes without reading them, and rows whose keys change, to others
-- of the same lengths too.
--
-- to_jsonb(float8) and float8's text: the shortest digits that read back
-- exactly, as nbc writes its numbers (see jsonb_numbers)
SET extra_float_digits = 1;
SELECT setseed(0.5);
CREATE TABLE jsonb_objects_pool AS
SELECT k, left(translate(md5(k::text) || md5((k + 1000)::text), '0123456789', 'aaabbbéüab'),
               CASE WHEN k % 3 = 0 THEN 1 + k % 40 ELSE 1 + k % 3 END) AS label
FROM generate_series(1, 120) AS k
UNION ALL
SELECT k, 'k' || k FROM generate_series(121, 220) AS k;
-- sets 0-79 random, 80-99 ten keys of four characters each: objects with
-- the same JEntries and other key bytes
CREATE TABLE jsonb_objects_sets AS
SELECT s, k
FROM generate_series(0, 79) AS s, jsonb_objects_pool
WHERE k <= 120 AND ((s > 0 AND random() < (s % 10 + 1) / 20.0) OR k = 1 + s)
UNION ALL
SELECT s, 121 + (s * 7 + j * 11) % 100
FROM generate_series(80, 99) AS s, generate_series(0, 9) AS j;
CREATE TABLE jsonb_objects_rows AS
SELECT i, CASE WHEN random() < 0.8 THEN (i / 4) % 100 ELSE floor(random() * 100)::int END AS s
FROM generate_series(1, 3000) AS i;
CREATE TABLE jsonb_objects_probas AS
SELECT i, CASE WHEN random() < 0.2 THEN (SELECT label FROM jsonb_objects_pool WHERE k = 1 + i % 120)
               ELSE (array_agg(label ORDER BY u))[1] END AS actual,
       jsonb_object_agg(label, CASE WHEN u < 0.05 THEN to_jsonb(0)
                                    WHEN u < 0.1 THEN to_jsonb(1)
                                    WHEN u < 0.5 THEN to_jsonb(round(v::numeric, 1 + (i + k) % 17))
                                    ELSE to_jsonb(v * 10 ^ (-floor(100 * u))) END) AS proba
FROM (SELECT r.i, p.k, p.label, random() AS u, random() AS v
      FROM jsonb_objects_rows AS r
      JOIN jsonb_objects_sets AS t ON t.s = r.s
      JOIN jsonb_objects_pool AS p ON p.k = t.k) AS x
GROUP BY i;

-- what the rows hold
SELECT count(*) AS rows,
       count(*) FILTER (WHERE keys IS DISTINCT FROM last_keys) > 300 AS many_rows_with_other_keys,
       count(*) FILTER (WHERE keys = last_keys) > 1000 AS many_rows_with_the_last_keys,
       count(*) FILTER (WHERE keys <> last_keys AND lengths = last_lengths) > 100
           AS many_rows_with_other_keys_of_the_same_lengths,
       count(*) FILTER (WHERE cardinality(keys) > 32) > 100 AS many_rows_past_32_keys,
       count(*) FILTER (WHERE cardinality(keys) = 1) > 0 AS rows_of_one_key
FROM (SELECT keys, lag(keys) OVER (ORDER BY i) AS last_keys,
             lengths, lag(lengths) OVER (ORDER BY i) AS last_lengths
      FROM (SELECT i, ARRAY(SELECT jsonb_object_keys(proba)) AS keys,
                   ARRAY(SELECT octet_length(jsonb_object_keys(proba))) AS lengths
            FROM jsonb_objects_probas) AS k) AS l;

-- each row's values as jsonb_each and jsonb::float8 read them: the
-- predicted class (the most probable, ties to the first key in byte order)
-- and the Brier score (the sum over the keys of (p - [key is actual])^2, 1
-- more when the actual label is not a key)
CREATE TABLE jsonb_objects_public AS
SELECT i, actual,
       (SELECT key FROM jsonb_each(proba) ORDER BY value::float8 DESC, key COLLATE "C" LIMIT 1) AS predicted,
       (SELECT max(value::float8) FROM jsonb_each(proba)) AS top,
       (SELECT sum(d * d ORDER BY o) + CASE WHEN proba ? actual THEN 0 ELSE 1 END
        FROM (SELECT value::float8 - CASE WHEN key = actual THEN 1 ELSE 0 END AS d, o
              FROM jsonb_each(proba) WITH ORDINALITY AS e(key, value, o)) AS e) AS brier
FROM jsonb_objects_probas;

-- row by row: nb_metrics' Brier score of one row is that row's, exactly
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (m ->> 'brier')::float8 IS DISTINCT FROM brier) AS brier_differs,
       count(*) FILTER (WHERE m -> 'confusion' -> actual ->> predicted IS DISTINCT FROM '1') AS prediction_differs
FROM (SELECT i, nb_metrics(actual, proba) AS m FROM jsonb_objects_probas GROUP BY i) AS n
JOIN jsonb_objects_public USING (i);

-- all rows in one aggregate, in order (so that the keys of each row are
-- compared with the last row's): the confusion counts and the calibration
-- bins' counts exactly, the mean Brier score to a few units of rounding
CREATE TABLE jsonb_objects_metrics AS
SELECT nb_metrics(actual, proba ORDER BY i) AS m FROM jsonb_objects_probas;
WITH reported AS (SELECT actual AS label FROM jsonb_objects_public
                  UNION SELECT predicted FROM jsonb_objects_public),
confusion AS (
    SELECT jsonb_object_agg(a, row) AS confusion
    FROM (SELECT a.label AS a,
                 jsonb_object_agg(p.label, (SELECT count(*) FROM jsonb_objects_public
                                            WHERE actual = a.label AND predicted = p.label)) AS row
          FROM reported AS a, reported AS p
          GROUP BY a.label) AS r),
bins AS (
    SELECT array_agg((SELECT count(*) FROM jsonb_objects_public WHERE least(floor(10 * top), 9) = b)
                     ORDER BY b) AS counts
    FROM generate_series(0, 9) AS b)
SELECT m -> 'confusion' = confusion AS confusion_same,
       ARRAY(SELECT (b ->> 'count')::bigint FROM jsonb_array_elements(m -> 'calibration' -> 'bins') AS b)
           = counts AS bin_counts_same,
       abs((m ->> 'brier')::float8 - (SELECT avg(brier) FROM jsonb_objects_public))
           <= 1e-12 * (m ->> 'brier')::float8 AS brier_same
FROM jsonb_objects_metrics, confusion, bins;

-- a value that is not a probability: nb_metrics names the first such key in
-- jsonb's order.  The same objects, in three of four a random value in one
-- of about seven replaced by a string, null, a boolean, an object, an
-- array, or a number outside [0, 1]; the others valid.
CREATE TABLE jsonb_objects_bad AS
SELECT i, actual,
       (SELECT jsonb_object_agg(key, CASE WHEN i % 4 > 0 AND random() < 0.15
                                          THEN (ARRAY['"0.5"', 'null', 'true', '{"p": 0.5}', '[0.5]',
                                                      '-0.5', '2', '1.0000000001', '-1e-300'])[1 + floor(random() * 9)::int]::jsonb
                                          ELSE value END)
        FROM jsonb_each(proba)) AS proba
FROM jsonb_objects_probas
WHERE i <= 600;
CREATE FUNCTION jsonb_objects_error(actual text, proba jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    PERFORM nb_metrics(actual, proba);
    RETURN NULL;
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN detail;
END
$$;
CREATE TABLE jsonb_objects_errors AS
SELECT i, jsonb_objects_error(actual, proba) AS nbc,
       (SELECT CASE WHEN jsonb_typeof(value) <> 'number'
                    THEN format('The probability of "%s" is not a number.', key)
                    ELSE format('The probability of "%s" is %s, outside [0, 1].', key, value::float8) END
        FROM jsonb_each(proba) WITH ORDINALITY AS e(key, value, o)
        WHERE jsonb_typeof(value) <> 'number' OR NOT value::float8 BETWEEN 0 AND 1
        ORDER BY o LIMIT 1) AS public
FROM jsonb_objects_bad;
SELECT count(*) AS objects,
       count(*) FILTER (WHERE public IS NULL) > 50 AS many_valid,
       count(*) FILTER (WHERE public LIKE '%not a number%') > 100 AS many_not_numbers,
       count(*) FILTER (WHERE public LIKE '%outside%') > 100 AS many_out_of_range,
       count(*) FILTER (WHERE nbc IS DISTINCT FROM public) AS differ
FROM jsonb_objects_errors;
-- the objects that differ, if any (none)
SELECT i, nbc, public FROM jsonb_objects_errors WHERE nbc IS DISTINCT FROM public LIMIT 5;

DROP FUNCTION jsonb_objects_error(text, jsonb);
DROP TABLE jsonb_objects_pool, jsonb_objects_sets, jsonb_objects_rows, jsonb_objects_probas,
    jsonb_objects_public, jsonb_objects_metrics, jsonb_objects_bad, jsonb_objects_errors;
