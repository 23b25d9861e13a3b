-- merge_bytes.sql: fingerprints of merged parity models, to compare two builds.
--
-- After `NBC_MIXED_ARGS=--keep bash test/parity/run.sh --keep` (which keeps
-- the tables nbc_parity_models and nbc_mixed_models), run
--     psql -X -At -f test/bench/merge_bytes.sql > merged-<build>.txt
-- with each build installed and compare the outputs: every merge of two
-- models (with itself too; an error's SQLSTATE and message where they
-- conflict) and the aggregate over each group, as an md5 of the text form.
CREATE FUNCTION pg_temp.try_merge(a nb_model, b nb_model) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN md5(nb_merge(a, b)::text);
EXCEPTION WHEN others THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SELECT 'parity pair', a.ds, a.input, a.weighted, a.part, b.part, pg_temp.try_merge(a.model, b.model)
FROM nbc_parity_models a JOIN nbc_parity_models b USING (input, weighted)
ORDER BY 2, 3, 4, 5, 6, b.ds;
SELECT 'parity aggregate', ds, input, weighted, md5(nb_merge(model ORDER BY part)::text)
FROM nbc_parity_models GROUP BY 2, 3, 4 ORDER BY 2, 3, 4;
SELECT 'parity aggregate of all', input, weighted, md5(nb_merge(model ORDER BY ds, part)::text)
FROM nbc_parity_models GROUP BY 2, 3 ORDER BY 2, 3;
SELECT 'mixed pair', a.name, b.name, pg_temp.try_merge(a.model, b.model)
FROM nbc_mixed_models a, nbc_mixed_models b ORDER BY 2, 3;
