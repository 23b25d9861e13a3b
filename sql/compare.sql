--
-- compare: nb_model equality, byte order and hashing (btree and hash
-- operator classes), checked against the bytes nbc_model_send gives: bytea
-- compares exactly as the model order is defined (memcmp, shorter first).
--

CREATE TABLE cmp_models (id int PRIMARY KEY, m nb_model);
INSERT INTO cmp_models
SELECT 1, nb_train(label, tokens) FROM docs
UNION ALL SELECT 2, nb_train(label, tokens) FROM docs WHERE id <= 3
UNION ALL SELECT 3, nb_train(label, tokens) FROM docs WHERE id <> 2
UNION ALL SELECT 4, nb_train(label, tokens, 2.0) FROM docs
UNION ALL SELECT 5, nb_train(label, jsonb_build_object('t', tokens, 'n', id)) FROM docs
UNION ALL SELECT 6, nb_train(label, ARRAY[id, id * id]::float8[]) FROM docs
-- equal to 1, built another way: merging two halves
UNION ALL SELECT 7, nb_merge(
    (SELECT nb_train(label, tokens) FROM docs WHERE id <= 2),
    (SELECT nb_train(label, tokens) FROM docs WHERE id > 2))
-- a large model: stored out of line and compressed
UNION ALL SELECT 8, nb_train(label, ARRAY(SELECT 'token' || g || '_' || id FROM generate_series(1, 3000) g))
    FROM docs
UNION ALL SELECT 9, nb_train(label, ARRAY(SELECT 'token' || g || '_' || id FROM generate_series(1, 3000) g))
    FROM docs;

-- 10: compressed and different from 8 (one row's label changed), so that
-- comparing it with 8 must decompress both
INSERT INTO cmp_models
SELECT 10, nb_train(CASE WHEN id = 1 THEN 'other' ELSE label END,
                    ARRAY(SELECT 'token' || g || '_' || id FROM generate_series(1, 3000) g))
FROM docs;
-- 11: equal to 8, compressed with lz4 where the server has it (8 has pglz):
-- equal models whose compressed bytes differ
DO $$
BEGIN
  IF (SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
    PERFORM set_config('default_toast_compression', 'lz4', true);
  END IF;
  INSERT INTO cmp_models
  SELECT 11, nb_train(label, ARRAY(SELECT 'token' || g || '_' || id FROM generate_series(1, 3000) g))
  FROM docs;
END
$$;

-- 8 to 11 are toasted (each its own TOAST pointer); 8, 9 and 11 are equal
SELECT id, pg_column_size(m) < octet_length(nbc_model_send(m)) AS compressed
FROM cmp_models WHERE id >= 8 ORDER BY id;

-- every operator and the support functions agree with the bytes, on all pairs
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (a.m = b.m) IS DISTINCT FROM (nbc_model_send(a.m) = nbc_model_send(b.m))) AS eq_wrong,
       count(*) FILTER (WHERE (a.m <> b.m) IS DISTINCT FROM (nbc_model_send(a.m) <> nbc_model_send(b.m))) AS ne_wrong,
       count(*) FILTER (WHERE (a.m < b.m) IS DISTINCT FROM (nbc_model_send(a.m) < nbc_model_send(b.m))) AS lt_wrong,
       count(*) FILTER (WHERE (a.m <= b.m) IS DISTINCT FROM (nbc_model_send(a.m) <= nbc_model_send(b.m))) AS le_wrong,
       count(*) FILTER (WHERE (a.m > b.m) IS DISTINCT FROM (nbc_model_send(a.m) > nbc_model_send(b.m))) AS gt_wrong,
       count(*) FILTER (WHERE (a.m >= b.m) IS DISTINCT FROM (nbc_model_send(a.m) >= nbc_model_send(b.m))) AS ge_wrong,
       count(*) FILTER (WHERE sign(nbc_model_cmp(a.m, b.m)) <> sign(CASE WHEN nbc_model_send(a.m) < nbc_model_send(b.m) THEN -1
                                                                 WHEN nbc_model_send(a.m) > nbc_model_send(b.m) THEN 1 ELSE 0 END)) AS cmp_wrong,
       count(*) FILTER (WHERE a.m = b.m AND (nbc_model_hash(a.m) <> nbc_model_hash(b.m)
                                              OR nbc_model_hash_extended(a.m, 7) <> nbc_model_hash_extended(b.m, 7))) AS hash_wrong,
       count(*) FILTER (WHERE a.m = b.m) AS equal_pairs
FROM cmp_models a, cmp_models b;

-- the equal pairs are exactly these (besides each model with itself)
SELECT a.id, b.id FROM cmp_models a JOIN cmp_models b ON a.m = b.m AND a.id < b.id ORDER BY 1, 2;

-- hash_extended depends on the seed; seed 0 is the plain hash widened
SELECT count(*) FILTER (WHERE nbc_model_hash_extended(m, 0) = nbc_model_hash_extended(m, 1)) AS same_for_two_seeds,
       count(*) FILTER (WHERE (nbc_model_hash_extended(m, 0) & 4294967295) <> (nbc_model_hash(m)::bigint & 4294967295)) AS seed0_differs
FROM cmp_models;

-- NULL: the operators are strict
SELECT (NULL::nb_model = m) IS NULL AS eq_null, nbc_model_cmp(m, NULL) IS NULL AS cmp_null
FROM cmp_models WHERE id = 1;

-- SQL that needs equality, ordering or hashing of models
SELECT count(DISTINCT m) AS distinct_models FROM cmp_models;
SELECT count(*) AS groups FROM (SELECT m FROM cmp_models GROUP BY m) g;
SELECT count(*) AS union_rows FROM (SELECT m FROM cmp_models UNION SELECT m FROM cmp_models WHERE id < 5) u;
SELECT array_agg(id ORDER BY m, id) AS byte_order FROM cmp_models;
SELECT array_agg(id ORDER BY nbc_model_send(m), id) AS bytea_order FROM cmp_models;

-- the same answers from sorted and from hashed plans (each plan checked)
CREATE FUNCTION nbt_plan_uses(query text, node text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    IF position(node IN line) > 0 THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END
$$;
SET enable_hashagg = off;
SELECT nbt_plan_uses('SELECT m FROM cmp_models GROUP BY m', 'Sort Key') AS sorted_plan;
SELECT count(*) AS groups_sorted FROM (SELECT m FROM cmp_models GROUP BY m) g;
RESET enable_hashagg;
SET enable_sort = off;
SELECT nbt_plan_uses('SELECT m FROM cmp_models GROUP BY m', 'HashAggregate') AS hashed_plan;
SELECT count(*) AS groups_hashed FROM (SELECT m FROM cmp_models GROUP BY m) g;
RESET enable_sort;
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT nbt_plan_uses('SELECT * FROM cmp_models a JOIN cmp_models b ON a.m = b.m', 'Merge Join') AS merge_join_plan;
SELECT count(*) AS merge_join_pairs FROM cmp_models a JOIN cmp_models b ON a.m = b.m;
RESET enable_hashjoin;
SET enable_mergejoin = off;
SELECT nbt_plan_uses('SELECT * FROM cmp_models a JOIN cmp_models b ON a.m = b.m', 'Hash Join') AS hash_join_plan;
SELECT count(*) AS hash_join_pairs FROM cmp_models a JOIN cmp_models b ON a.m = b.m;
RESET enable_mergejoin;
RESET enable_nestloop;

-- indexes: hash on any model; btree on models small enough for an index row
CREATE INDEX cmp_models_hash ON cmp_models USING hash (m);
CREATE INDEX cmp_models_btree ON cmp_models (m) WHERE id < 8;
SET enable_seqscan = off;
SELECT nbt_plan_uses('SELECT id FROM cmp_models WHERE m = (SELECT m FROM cmp_models WHERE id = 8)', 'cmp_models_hash') AS hash_index_plan;
SELECT id FROM cmp_models WHERE m = (SELECT m FROM cmp_models WHERE id = 8) ORDER BY id;
DROP INDEX cmp_models_hash;
SELECT nbt_plan_uses('SELECT id FROM cmp_models WHERE m = (SELECT m FROM cmp_models WHERE id = 1) AND id < 8', 'cmp_models_btree') AS btree_index_plan;
SELECT id FROM cmp_models WHERE m = (SELECT m FROM cmp_models WHERE id = 1) AND id < 8 ORDER BY id;
RESET enable_seqscan;

-- equality survives the text and binary forms
SELECT count(*) FILTER (WHERE m = m::text::nb_model) AS text_round_trip FROM cmp_models;

DROP TABLE cmp_models;
DROP FUNCTION nbt_plan_uses(text, text);
