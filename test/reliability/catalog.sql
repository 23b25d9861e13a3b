-- What the nbc extension consists of, one line per member object, for
-- comparing an updated installation with a fresh one: functions and
-- aggregates (signature, result, volatility, parallel safety, strictness, C
-- symbol or body, planner support function, settings, aggregate support
-- functions), types (I/O functions, storage),
-- casts, operators, and every comment.
SELECT concat_ws(' | ', pg_describe_object(d.classid, d.objid, 0),
	CASE d.classid
	WHEN 'pg_proc'::regclass THEN (
		SELECT concat_ws(' ', p.prokind, pg_get_function_arguments(p.oid), '->', pg_get_function_result(p.oid),
			p.provolatile, p.proparallel, p.proisstrict, p.prosrc, p.probin, p.procost, p.prorows, p.proacl,
			p.prosupport::regproc, p.proconfig,
			(SELECT concat_ws(' ', a.aggkind, a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
				a.aggdeserialfn, a.aggtranstype::regtype, a.agginitval)
			 FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
		FROM pg_proc p WHERE p.oid = d.objid)
	WHEN 'pg_type'::regclass THEN (
		SELECT concat_ws(' ', t.typlen, t.typalign, t.typstorage, t.typinput, t.typoutput, t.typreceive,
			t.typsend, t.typcategory, t.typacl)
		FROM pg_type t WHERE t.oid = d.objid)
	WHEN 'pg_cast'::regclass THEN (
		SELECT concat_ws(' ', c.castfunc::regprocedure, c.castcontext, c.castmethod)
		FROM pg_cast c WHERE c.oid = d.objid)
	WHEN 'pg_operator'::regclass THEN (
		SELECT concat_ws(' ', o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator, o.oprrest, o.oprjoin)
		FROM pg_operator o WHERE o.oid = d.objid)
	END,
	'comment: ' || obj_description(d.objid, d.classid::regclass::name))
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'nbc')
ORDER BY 1;
