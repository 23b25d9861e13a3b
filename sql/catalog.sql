--
-- catalog: the extension as psql shows it.  \df nb_* lists only what users
-- call (support functions are nbc_*), and every function, aggregate and type
-- users call or see has a comment (\df+, \da, \dT+ show it).  Both queries
-- read the extension's members, so objects added later are checked too.
--

-- \df nb_*: the extension's functions and aggregates named nb_*, with their
-- comments (the support functions, type I/O, comparison, aggregate and
-- planner support, are nbc_* and not among them)
SELECT p.oid::regprocedure::text COLLATE "C" AS function,
       CASE p.prokind WHEN 'a' THEN 'agg' WHEN 'f' THEN 'func' END AS type,
       obj_description(p.oid, 'pg_proc') AS description
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nbc'
WHERE p.proname LIKE 'nb\_%'
ORDER BY 1;

-- what \df nb_* would have listed before the support functions were renamed:
-- none of them is named nb_* now
SELECT p.oid::regprocedure AS support_named_nb
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nbc'
WHERE p.proname LIKE 'nb\_%'
  AND (p.proname ~ '_(transfn|final|combine|serialize|deserialize|support)$'
       OR p.proname ~ '^nb_model_(in|out|recv|send|eq|ne|lt|le|gt|ge|cmp|hash|hash_extended|text)$'
       OR 'internal'::regtype = ANY (p.proargtypes));

-- every user-facing member without a comment: none.  User-facing: the
-- functions and aggregates not named nbc_*, and the types (but the types
-- PostgreSQL makes for other objects, array types and the row types of
-- tables and views, which PostgreSQL 17 and later list as members).
SELECT pg_describe_object(d.classid, d.objid, 0) AS without_comment
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'nbc'
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND ((d.classid = 'pg_proc'::regclass
        AND (SELECT p.proname FROM pg_proc p WHERE p.oid = d.objid) NOT LIKE 'nbc\_%')
       OR (d.classid = 'pg_type'::regclass
           AND NOT EXISTS (SELECT FROM pg_type AS t LEFT JOIN pg_class AS c ON c.oid = t.typrelid
                           WHERE t.oid = d.objid
                             AND (t.typcategory = 'A' OR c.relkind IN ('r', 'v', 'm', 'p', 'f')))))
  AND obj_description(d.objid, (SELECT c.relname FROM pg_class c WHERE c.oid = d.classid)) IS NULL
ORDER BY 1;
