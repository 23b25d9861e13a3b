--
-- upgrade: every released version updates to the current one, and the
-- result has exactly the objects of a fresh install, each defined alike
-- (bodies, properties, ACLs, comments: the view nbc_catalog of
-- test/reliability/catalog.sql, read from the directory make runs in);
-- stored models keep their bytes and predictions across the update.
-- CREATE EXTENSION nbc VERSION '0.1.0' runs test/fixtures/nbc--0.1.0.sql,
-- which make installcheck installs first (the Makefile's REGRESS_PREP).
--

\set ECHO none
\i test/reliability/catalog.sql
\set ECHO all
CREATE TABLE upgrade_objects AS SELECT object, definition FROM nbc_catalog;
CREATE TABLE upgrade_models AS
SELECT nb_train(label, tokens)::text AS model_text FROM docs;
-- the earlier tests' model columns go with it (not listed: that list is theirs)
SET client_min_messages = warning;
DROP EXTENSION nbc CASCADE;
RESET client_min_messages;

CREATE EXTENSION nbc VERSION '0.1.0';
CREATE TABLE upgrade_kept (m nb_model);
INSERT INTO upgrade_kept SELECT nb_train(label, tokens) FROM docs;
ALTER EXTENSION nbc UPDATE TO '0.2.0';
SELECT extversion FROM pg_extension WHERE extname = 'nbc';
-- this library serves a database not yet updated: 0.8.0's nb_explain has
-- three columns, which it fills as before
ALTER EXTENSION nbc UPDATE TO '0.8.0';
CREATE TABLE upgrade_explain AS
SELECT e.* FROM nb_explain((SELECT nb_train(label, tokens) FROM docs), ARRAY['money', 'money', 'lunch']) AS e;
-- 0.16.0's nbc_em_iterate has 14 arguments, not this library's 15: EM
-- is refused with a hint, its arguments not read past
ALTER EXTENSION nbc UPDATE TO '0.16.0';
SELECT nb_train_em('docs', 'label', 'tokens') IS NULL;
ALTER EXTENSION nbc UPDATE;
SELECT u.feature IS NOT DISTINCT FROM e.feature AND u.value IS NOT DISTINCT FROM e.value
       AND u.contribution = e.contribution AS same_as_updated, u.feature, u.value
FROM (SELECT *, row_number() OVER () AS n FROM upgrade_explain) u
JOIN (SELECT e.*, row_number() OVER () AS n
      FROM nb_explain((SELECT nb_train(label, tokens) FROM docs), ARRAY['money', 'money', 'lunch']) AS e) e USING (n)
ORDER BY u.n;
DROP TABLE upgrade_explain;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'nbc') AS current
FROM pg_extension WHERE extname = 'nbc';

-- the same objects as a fresh install, none missing, none extra and none
-- defined otherwise (a line of each side for an object that differs)
(SELECT 'fresh' AS install, object, definition FROM upgrade_objects
 EXCEPT
 SELECT 'fresh', object, definition FROM nbc_catalog)
UNION ALL
(SELECT 'updated', object, definition FROM nbc_catalog
 EXCEPT
 SELECT 'updated', object, definition FROM upgrade_objects)
ORDER BY object, install;

-- the model stored under 0.1.0 is the model a fresh install trains
SELECT m::text = (SELECT model_text FROM upgrade_models) AS same_bytes,
       m = (SELECT nb_train(label, tokens) FROM docs) AS equal,
       nb_predict(m, ARRAY['money', 'offer']) AS predicted
FROM upgrade_kept;

DROP TABLE upgrade_objects, upgrade_models, upgrade_kept;
