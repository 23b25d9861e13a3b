-- What the nbc extension consists of, one line per member object, for
-- comparing an updated installation with a fresh one: the temporary view
-- nbc_catalog (object, definition).  Read by test/reliability/upgrade.sh
-- (every released version) and sql/upgrade.sql (pg_regress, from 0.1.0).
-- A fresh install runs sql/objects/, an updated one the update scripts, so
-- this is what catches a definition written differently in the two:
--   functions and aggregates: signature with argument names and defaults,
--     result, volatility, parallel safety, strictness, security definer,
--     leakproof, C symbol or body, cost and rows, ACL, planner support
--     function, settings; aggregates' support functions, state and options;
--   types: I/O functions, storage, category, ACL, a composite's attributes;
--   casts, operators, operator classes with their members, views (query,
--     options, ACL), event triggers (event, function, tags);
--   and every member's comment.
CREATE TEMPORARY VIEW nbc_catalog AS
SELECT pg_describe_object(d.classid, d.objid, 0) COLLATE "C" AS object, concat_ws(' | ',
	CASE d.classid
	WHEN 'pg_proc'::regclass THEN (
		SELECT concat_ws(' ', p.prokind, pg_get_function_arguments(p.oid), '->', pg_get_function_result(p.oid),
			p.provolatile, p.proparallel, p.proisstrict, p.prosecdef, p.proleakproof, p.prosrc, p.probin,
			p.procost, p.prorows, p.proacl, p.prosupport::regproc, p.proconfig,
			(SELECT concat_ws(' ', a.aggkind, a.aggnumdirectargs, a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
				a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn,
				a.aggfinalextra, a.aggfinalmodify, a.aggsortop::regoperator, a.aggtranstype::regtype,
				a.aggtransspace, a.agginitval)
			 FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
		FROM pg_proc p WHERE p.oid = d.objid)
	WHEN 'pg_type'::regclass THEN (
		SELECT concat_ws(' ', t.typtype, t.typlen, t.typalign, t.typstorage, t.typinput, t.typoutput,
			t.typreceive, t.typsend, t.typcategory, t.typacl,
			(SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
			 FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped))
		FROM pg_type t WHERE t.oid = d.objid)
	WHEN 'pg_cast'::regclass THEN (
		SELECT concat_ws(' ', c.castfunc::regprocedure, c.castcontext, c.castmethod)
		FROM pg_cast c WHERE c.oid = d.objid)
	WHEN 'pg_operator'::regclass THEN (
		SELECT concat_ws(' ', o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator, o.oprrest, o.oprjoin,
			o.oprcanhash, o.oprcanmerge)
		FROM pg_operator o WHERE o.oid = d.objid)
	WHEN 'pg_opclass'::regclass THEN (
		SELECT concat_ws(' ', c.opcdefault, c.opcintype::regtype, c.opckeytype::regtype,
			(SELECT string_agg(o.amopstrategy || ' ' || o.amopopr::regoperator, ', ' ORDER BY o.amopstrategy)
			 FROM pg_amop o WHERE o.amopfamily = c.opcfamily),
			(SELECT string_agg(p.amprocnum || ' ' || p.amproc::regprocedure, ', ' ORDER BY p.amprocnum)
			 FROM pg_amproc p WHERE p.amprocfamily = c.opcfamily))
		FROM pg_opclass c WHERE c.oid = d.objid)
	WHEN 'pg_class'::regclass THEN (
		SELECT concat_ws(' ', c.relkind, c.reloptions, c.relacl,
			CASE c.relkind WHEN 'v' THEN pg_get_viewdef(c.oid) END)
		FROM pg_class c WHERE c.oid = d.objid)
	WHEN 'pg_event_trigger'::regclass THEN (
		SELECT concat_ws(' ', e.evtevent, e.evtfoid::regproc, e.evtenabled, e.evttags)
		FROM pg_event_trigger e WHERE e.oid = d.objid)
	END,
	'comment: ' || obj_description(d.objid, d.classid::regclass::name)) AS definition
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'nbc');
