--
-- numbers: nbc writes jsonb numbers and reads them without PostgreSQL's text
-- conversions (src/pg_jsonb.c builds a float8's numeric from its shortest
-- digits, and reads a numeric's base-10000 digits, relying on numeric's
-- stored form).  The results must be PostgreSQL's own: to_jsonb(float8) for
-- what nbc writes, numeric::float8 for what it reads, on random values of
-- every magnitude, on every version the tests run on.
--
SELECT setseed(0.25);

-- float8 values over the whole range, and the edges
CREATE TABLE num_floats AS
SELECT g, abs((random() - 0.5) * 10 ^ (random() * 616 - 308))::float8 AS x
FROM generate_series(1, 4000) g;
INSERT INTO num_floats VALUES
  (4001, 5e-324), (4002, 2.2250738585072014e-308), (4003, 1.7976931348623157e308), (4004, 0.1),
  (4005, 1), (4006, 100), (4007, 123456789012345678), (4008, 1e22), (4009, 1e23), (4010, 0.3),
  (4011, 2.5e-5), (4012, 9007199254740993), (4013, 4.9406564584124654e-324);
DELETE FROM num_floats WHERE x = 0;

-- written: a one-row model's class documents are its weight, as nbc writes it
SELECT count(*) AS values,
       count(*) FILTER (WHERE w.written = to_jsonb(w.x)::text) AS same_as_to_jsonb
FROM (SELECT f.x, (nb_train('a', ARRAY['t'], f.x)::jsonb -> 'classes' -> 'a' -> 'documents')::text AS written
      FROM num_floats f GROUP BY f.g, f.x) w;
SELECT w.x, w.written, to_jsonb(w.x)::text AS to_jsonb
FROM (SELECT f.x, (nb_train('a', ARRAY['t'], f.x)::jsonb -> 'classes' -> 'a' -> 'documents')::text AS written
      FROM num_floats f GROUP BY f.g, f.x) w
WHERE w.written <> to_jsonb(w.x)::text
LIMIT 5;

-- read: numerics of 1 to 40 significant digits, 10^-330 to 10^300, as a
-- Gaussian feature's value: a one-row model's mean is the value as nbc read it
CREATE TABLE num_numerics AS
SELECT g, (trunc(random() * 10 ^ (1 + g % 17))::numeric * 10::numeric ^ (g % 24)
           + trunc(random() * 10 ^ (g % 16))::numeric)
          * ('1e' || (trunc(random() * 590)::int - 330))::numeric AS v
FROM generate_series(1, 4000) g;
INSERT INTO num_numerics VALUES
  (4001, 0.1), (4002, 0.30000000000000004), (4004, 2.4703282292062328e-324), (4005, 9007199254740993), (4006, 1.7976931348623157e308),
  (4007, 123456789.123456789123456789), (4008, 1e-300), (4009, 0.5), (4010, 4.35e-5);
-- not those below half the least subnormal: float8 has them as 0, and
-- numeric::float8 refuses them
DELETE FROM num_numerics WHERE v < 2.4703282292062328e-324;
SELECT count(*) AS values,
       count(*) FILTER (WHERE r.read = to_jsonb(r.v::float8)::text) AS same_as_numeric_float8
FROM (SELECT n.v, (nb_train('a', jsonb_build_object('v', n.v))::jsonb -> 'features' -> 'v' -> 'mean')::text AS read
      FROM num_numerics n GROUP BY n.g, n.v) r;
SELECT r.v, r.read, r.v::float8 AS numeric_float8
FROM (SELECT n.v, (nb_train('a', jsonb_build_object('v', n.v))::jsonb -> 'features' -> 'v' -> 'mean')::text AS read
      FROM num_numerics n GROUP BY n.g, n.v) r
WHERE r.read <> to_jsonb(r.v::float8)::text
LIMIT 5;

DROP TABLE num_floats, num_numerics;
