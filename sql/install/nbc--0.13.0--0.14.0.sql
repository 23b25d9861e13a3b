-- nbc 0.13.0 -> 0.14.0
-- (sections below, one per topic)
\echo Use "ALTER EXTENSION nbc UPDATE TO '0.14.0'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- EM's aggregate driver removed (#41 item 5): nb_train_em runs its
-- iterations in C (nbc_em_iterate, src/workflows/pg_em_run.c) since 0.12.0;
-- the aggregate nbc_em_step that it ran once per iteration before, an
-- internal object with nothing left calling it, goes with its functions
-- and its result type.
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, tsvector, float8, jsonb);
DROP AGGREGATE nbc_em_step(nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, tsvector, float8, jsonb);
DROP FUNCTION nbc_em_step_transfn(internal, nb_model, text, text[], float8, jsonb, jsonb);
DROP FUNCTION nbc_em_step_final(internal);
DROP TYPE nbc_em_step;
