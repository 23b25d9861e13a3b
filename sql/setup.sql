--
-- setup: the extension installs and uninstalls cleanly; shared helpers.
--
-- pg_regress has already run CREATE EXTENSION nbc (--load-extension=nbc).
-- Every test runs in this same database, in the order of the Makefile.
--

-- drop and recreate: the script must leave nothing behind and install again
DROP EXTENSION nbc;
SELECT count(*) AS leftovers FROM pg_type WHERE typname = 'nb_model';
SELECT count(*) AS leftovers FROM pg_proc WHERE proname ~ '^nbc?_';
CREATE EXTENSION nbc;
CREATE EXTENSION IF NOT EXISTS nbc;

SELECT extname, extversion, extrelocatable FROM pg_extension WHERE extname = 'nbc';

-- the tests with invalid UTF-8 in type_io assume a UTF8 database
SELECT getdatabaseencoding();

-- every member object of the extension (but the types PostgreSQL makes for
-- other objects, array types and the row types of tables and views, which
-- PostgreSQL 17 and later list as members and 15 does not)
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) COLLATE "C" AS object
FROM pg_depend AS d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'nbc')
  AND d.deptype = 'e'
  AND NOT EXISTS (SELECT FROM pg_type AS t LEFT JOIN pg_class AS c ON c.oid = t.typrelid
                  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                    AND (t.typcategory = 'A' OR c.relkind IN ('r', 'v', 'm', 'p', 'f')))
ORDER BY 1;

-- the type: a varlena, TOASTable, with text and binary I/O
SELECT typlen, typbyval, typstorage, typinput, typoutput, typreceive, typsend
FROM pg_type WHERE typname = 'nb_model';

-- every function is immutable (but the transition functions of labels of any
-- type: stable, as a type's text may depend on settings) and parallel safe; the
-- prediction functions, nb_merge, nb_tokens and the transition functions are not strict
-- (NULL handling is theirs)
SELECT oid::regprocedure::text COLLATE "C" AS function, provolatile, proisstrict, proparallel
FROM pg_proc
WHERE pronamespace = 'public'::regnamespace AND proname ~ '^nbc?_' AND prokind = 'f'
ORDER BY 1;

-- the cast to jsonb is explicit only
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_cast WHERE castsource = 'nb_model'::regtype;

-- Shared helper: a flat jsonb object with every number rounded (probabilities
-- are printed rounded, since their last digits depend on the platform's libm).
CREATE FUNCTION nbt_round(j jsonb, digits int DEFAULT 12) RETURNS jsonb
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT coalesce(jsonb_object_agg(key,
           CASE jsonb_typeof(value)
             WHEN 'number' THEN to_jsonb(round(value::text::numeric, digits))
             ELSE value END), '{}'::jsonb)
  FROM jsonb_each(j)
$$;
SELECT nbt_round('{"a": 0.1234567890123456, "b": null, "c": 1}');

-- Shared data: the example of the README, four documents in two classes.
CREATE TABLE docs (id int PRIMARY KEY, label text, tokens text[]);
INSERT INTO docs VALUES
    (1, 'spam', '{win,money,now,money}'),
    (2, 'spam', '{cheap,money,offer}'),
    (3, 'ham',  '{meeting,tomorrow,agenda}'),
    (4, 'ham',  '{lunch,tomorrow,money}');

-- progress NOTICEs (on by default) come once nbc.progress_interval seconds
-- have passed: on a slow machine a long call of a test could show one, so
-- the suites run with them off (crossval, em and signals turn them on)
DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET nbc.progress = off', current_database()); END $$;
