--
-- subtract: nb_subtract(a, b) is the model of the rows of a without those
-- of b, the inverse of nb_merge.  With integer counts (unweighted rows) and
-- Gaussian values whose statistics are computed exactly (small dyadic
-- numbers), nb_subtract(nb_merge(a, b), b) must equal a byte for byte (the
-- = operator); otherwise within 1e-12 relative, compared number by number
-- through the model's jsonb form.
--
CREATE TABLE sub_rows AS
SELECT i AS id,
       CASE WHEN i % 3 = 0 THEN 'ham' WHEN i % 3 = 1 THEN 'spam' ELSE 'eggs' END AS label,
       ARRAY(SELECT 'w' || ((i * j) % 23) FROM generate_series(1, i % 5) AS j) AS tokens,
       jsonb_build_object('colour', 'c' || (i % 4), 'flag', i % 2 = 0,
                          'words', to_jsonb(ARRAY['a' || (i % 3), 'b' || (i % 7)])) AS discrete,
       jsonb_build_object('size', (i % 8) * 0.25) AS dyadic,
       jsonb_build_object('height', (i % 7) * 1.37 + 0.1, 'colour', 'c' || (i % 4)) AS real,
       ARRAY[(i % 8) * 0.5, CASE WHEN i % 4 = 0 THEN NULL ELSE (i % 4)::float8 END] AS vec,
       1.0 / (1 + i % 11) AS weight
FROM generate_series(1, 240) AS i;

-- every number of two models' jsonb forms within rel relative, and the same keys
CREATE FUNCTION sub_leaves(j jsonb) RETURNS TABLE (path text, v jsonb)
LANGUAGE sql IMMUTABLE AS $$
  WITH RECURSIVE t(path, v) AS (
    SELECT '', j
    UNION ALL
    SELECT t.path || '/' || e.key, e.value
    FROM t, jsonb_each(CASE WHEN jsonb_typeof(t.v) = 'object' THEN t.v ELSE '{}' END) AS e)
  SELECT path, v FROM t WHERE jsonb_typeof(v) <> 'object' $$;
CREATE FUNCTION sub_near(x nb_model, y nb_model, rel float8) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(bool_and(CASE WHEN jsonb_typeof(p.v) = 'number' AND jsonb_typeof(q.v) = 'number'
                                THEN abs(p.v::float8 - q.v::float8)
                                     <= rel * greatest(abs(p.v::float8), abs(q.v::float8))
                                ELSE p.v = q.v END), true)
  FROM sub_leaves(x::jsonb) AS p FULL JOIN sub_leaves(y::jsonb) AS q USING (path) $$;

-- the SQLSTATE and message of nb_subtract(a, b), or 'ok'
CREATE FUNCTION sub_error(a nb_model, b nb_model) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM nb_subtract(a, b);
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- two halves of every kind of model: a (id <= 120) and b (the rest)
CREATE TABLE sub_models AS
SELECT kind,
       CASE kind WHEN 'text' THEN nb_train(label, tokens) FILTER (WHERE id <= 120)
                 WHEN 'discrete' THEN nb_train(label, discrete) FILTER (WHERE id <= 120)
                 WHEN 'dyadic' THEN nb_train(label, dyadic) FILTER (WHERE id <= 120)
                 WHEN 'real' THEN nb_train(label, real) FILTER (WHERE id <= 120)
                 WHEN 'vector' THEN nb_train(label, vec) FILTER (WHERE id <= 120)
                 WHEN 'weighted' THEN nb_train(label, real || discrete, weight) FILTER (WHERE id <= 120) END AS a,
       CASE kind WHEN 'text' THEN nb_train(label, tokens) FILTER (WHERE id > 120)
                 WHEN 'discrete' THEN nb_train(label, discrete) FILTER (WHERE id > 120)
                 WHEN 'dyadic' THEN nb_train(label, dyadic) FILTER (WHERE id > 120)
                 WHEN 'real' THEN nb_train(label, real) FILTER (WHERE id > 120)
                 WHEN 'vector' THEN nb_train(label, vec) FILTER (WHERE id > 120)
                 WHEN 'weighted' THEN nb_train(label, real || discrete, weight) FILTER (WHERE id > 120) END AS b
FROM sub_rows, unnest(ARRAY['text', 'discrete', 'dyadic', 'real', 'vector', 'weighted']) AS kind
GROUP BY kind;

-- the identity, both merge orders: byte for byte for integer counts and
-- exact Gaussian arithmetic (text: format version 1; discrete: bag,
-- categorical, boolean; dyadic: Gaussian; vector: float8[] with a NULL)
SELECT kind, nb_subtract(nb_merge(a, b), b) = a AS ab_minus_b, nb_subtract(nb_merge(b, a), b) = a AS ba_minus_b,
       nb_subtract(nb_merge(a, b), a) = b AS ab_minus_a
FROM sub_models WHERE kind IN ('text', 'discrete', 'dyadic', 'vector') ORDER BY kind;

-- Gaussian values in general and fractional weights: within 1e-12
SELECT kind, sub_near(nb_subtract(nb_merge(a, b), b), a, 1e-12) AS ab_minus_b,
       sub_near(nb_subtract(nb_merge(b, a), b), a, 1e-12) AS ba_minus_b,
       sub_near(nb_subtract(nb_merge(a, b), a), b, 1e-12) AS ab_minus_a
FROM sub_models WHERE kind IN ('real', 'weighted') ORDER BY kind;

-- the comparison can fail: a model is not near a different one
SELECT sub_near(a, b, 1e-12) AS halves_near FROM sub_models WHERE kind = 'real';

-- what is subtracted: the class documents of the difference
SELECT c.label, w.documents AS merged, h.documents AS half, c.documents AS difference
FROM sub_models AS m,
     nb_classes(nb_subtract(nb_merge(m.a, m.b), m.b)) AS c
     JOIN nb_classes(nb_merge(m.a, m.b)) AS w USING (label)
     JOIN nb_classes(m.b) AS h USING (label)
WHERE m.kind = 'text' ORDER BY c.label COLLATE "C";

-- merge trees: the parts of a merge come off in any grouping
CREATE TABLE sub_thirds AS
SELECT id % 3 AS third, nb_train(label, discrete) AS m FROM sub_rows GROUP BY id % 3;
CREATE FUNCTION st(int) RETURNS nb_model LANGUAGE sql STABLE AS
  $$ SELECT m FROM sub_thirds WHERE third = $1 $$;
SELECT nb_subtract(nb_merge(nb_merge(st(0), st(1)), st(2)), nb_merge(st(1), st(2))) = st(0) AS pair_off,
       nb_subtract(nb_subtract(nb_merge(st(0), nb_merge(st(1), st(2))), st(2)), st(1)) = st(0) AS one_by_one,
       nb_subtract(nb_merge(nb_merge(st(0), st(1)), st(2)), st(0)) = nb_merge(st(1), st(2)) AS first_off;

-- classes whose documents reach zero disappear (a third holds one class)
SELECT label FROM nb_classes(nb_subtract(nb_merge(nb_merge(st(0), st(1)), st(2)), st(1)))
ORDER BY label COLLATE "C";

-- cross-validation folds: one model per fold from one GROUP BY, the whole by
-- the aggregate nb_merge; the whole without fold k is the other folds merged
CREATE TABLE sub_folds AS
SELECT id % 5 AS fold, nb_train(label, discrete) AS d, nb_train(label, real) AS r,
       nb_train(label, tokens, weight) AS w
FROM sub_rows GROUP BY id % 5;
SELECT f.fold,
       nb_subtract(w.d, f.d) = (SELECT nb_merge(d) FROM sub_folds WHERE fold <> f.fold) AS discrete,
       sub_near(nb_subtract(w.r, f.r), (SELECT nb_merge(r) FROM sub_folds WHERE fold <> f.fold), 1e-12) AS real,
       sub_near(nb_subtract(w.w, f.w), (SELECT nb_merge(w) FROM sub_folds WHERE fold <> f.fold), 1e-12) AS weighted
FROM sub_folds AS f,
     (SELECT nb_merge(d) AS d, nb_merge(r) AS r, nb_merge(w) AS w FROM sub_folds) AS w
ORDER BY f.fold;

-- and equals training on the other folds directly
SELECT f.fold,
       nb_subtract(w.d, f.d) = (SELECT nb_train(label, discrete) FROM sub_rows WHERE id % 5 <> f.fold) AS discrete
FROM sub_folds AS f, (SELECT nb_merge(d) AS d FROM sub_folds) AS w
ORDER BY f.fold;

-- NULL b gives a, NULL a gives NULL, and nothing left is NULL (the empty model)
SELECT nb_subtract(a, NULL) = a AS a_minus_null, nb_subtract(NULL, a) IS NULL AS null_minus_a,
       nb_subtract(NULL::nb_model, NULL) IS NULL AS null_minus_null,
       nb_subtract(a, a) IS NULL AS a_minus_a,
       nb_merge(nb_subtract(a, a), b) = b AS empty_merges
FROM sub_models WHERE kind = 'discrete';

-- a feature whose rows are all taken away disappears, and a token with its last entry
SELECT nb_subtract(nb_train(label, f), nb_train(label, f) FILTER (WHERE f ? 'extra'))::jsonb
FROM (VALUES ('x', '{"colour": "red"}'::jsonb), ('y', '{"extra": 2.5, "colour": "blue"}'),
             ('x', '{"colour": "blue"}')) AS t(label, f);

-- errors: what the first model lacks, named, SQLSTATE 22023
SELECT sub_error(nb_train('a', '{x}'::text[]), nb_train('b', '{x}'::text[])) AS missing_class;
SELECT sub_error(nb_train('a', '{"p": 1}'::jsonb), nb_train('a', '{"q": 1}'::jsonb)) AS missing_feature;
SELECT sub_error(nb_train('a', '{x}'::text[]), nb_train('a', '{y}'::text[])) AS missing_token;
SELECT sub_error(a, b) AS token_missing_in_class
FROM (SELECT nb_train(l, t) AS a FROM (VALUES ('a', '{x}'::text[]), ('b', '{y}')) AS v(l, t)) s1,
     (SELECT nb_train(l, t) AS b FROM (VALUES ('b', '{x}'::text[])) AS v(l, t)) s2;
SELECT sub_error(nb_train('a', '{"p": "u"}'::jsonb), nb_train('a', '{"p": 1}'::jsonb)) AS type_conflict;
SELECT sub_error(nb_train('a', '{1,2}'::float8[]), nb_train('a', '{1,2,3}'::float8[])) AS vector_length;
SELECT sub_error(nb_train('a', '{"p": 1}'::jsonb), nb_train('a', '{1}'::float8[])) AS no_vector;
SELECT sub_error(nb_train('a', '{x}'::text[]), nb_train('a', '{x}'::text[], 2)) AS more_documents;
SELECT sub_error(nb_train('a', '{x}'::text[], 2), nb_train('a', '{x,x,x}'::text[])) AS more_occurrences;
SELECT sub_error(nb_train('a', '{"f": false}'::jsonb, 2), nb_train('a', '{"f": true}'::jsonb, 1)) AS more_true;
SELECT sub_error(a, b) AS more_rows
FROM (SELECT nb_train('a', f, w) AS a FROM (VALUES ('{"g": 1}'::jsonb, 1), ('{}', 5)) AS v(f, w)) s1,
     (SELECT nb_train('a', '{"g": 1}'::jsonb, 3) AS b) s2;
-- the rows of b not among a's: the documents with 'x' would outnumber the class's
SELECT sub_error(a, b) AS outnumbered
FROM (SELECT nb_train('a', '{x}'::text[]) AS a FROM generate_series(1, 2)) s1,
     (SELECT nb_train('a', '{}'::text[]) AS b) s2;
SELECT sub_error(nb_train('a', '{"f": true}'::jsonb, 2), nb_train('a', '{"f": false}'::jsonb, 1)) AS true_outnumbered;
-- a document length (format version 3) that a's rows never had
SELECT sub_error(a, b) AS other_length
FROM (SELECT nb_train('a', '{x,y}'::text[]) AS a FROM generate_series(1, 2)) AS two_rows,
     (SELECT nb_train('a', '{x}'::text[]) AS b) AS one_row;
-- a close call is no error: a difference within the tolerance is zero
SELECT nb_subtract(nb_train('a', '{x}'::text[], 1 + 1e-12), nb_train('a', '{x}'::text[])) IS NULL AS snapped;
-- stored options must fit what remains: a class_prior naming a class whose
-- rows are all subtracted, or kind dcm once the last bag is gone, would fail
-- every later call (and the value's input), so the subtraction is refused
WITH a AS (SELECT nb_with_options(nb_train(l, t), '{"class_prior": {"a": 0.5, "c": 0.5}}') AS m
           FROM (VALUES ('a', '{x}'::text[]), ('a', '{z}'), ('c', '{y}')) v(l, t)),
     b AS (SELECT nb_with_options(nb_train(l, t), '{"class_prior": {"a": 0.5, "c": 0.5}}') AS m
           FROM (VALUES ('a', '{x}'::text[]), ('c', '{y}')) v(l, t))
SELECT nb_subtract(a.m, b.m) FROM a, b;
WITH a AS (SELECT nb_with_options(nb_train(l, f), '{"kind": "dcm"}') AS m
           FROM (VALUES ('a', '{"t": ["x"], "g": 1}'::jsonb), ('a', '{"g": 2}')) v(l, f)),
     b AS (SELECT nb_with_options(nb_train(l, f), '{"kind": "dcm"}') AS m
           FROM (VALUES ('a', '{"t": ["x"], "g": 1}'::jsonb)) v(l, f))
SELECT nb_subtract(a.m, b.m) FROM a, b;
-- what fits is kept
WITH a AS (SELECT nb_with_options(nb_train(l, t), '{"class_prior": {"a": 0.5, "c": 0.5}}') AS m
           FROM (VALUES ('a', '{x}'::text[]), ('a', '{z}'), ('c', '{y}'), ('c', '{y}')) v(l, t)),
     b AS (SELECT nb_with_options(nb_train(l, t), '{"class_prior": {"a": 0.5, "c": 0.5}}') AS m
           FROM (VALUES ('a', '{x}'::text[]), ('c', '{y}')) v(l, t))
SELECT nb_info(nb_subtract(a.m, b.m)) -> 'options' AS kept FROM a, b;
