#!/usr/bin/env bash
# nbc on a Citus cluster:  NBC_CITUS='host=... port=... dbname=...' bash test/citus/run.sh
#
# Runs against the Citus coordinator that the libpq connection string in
# NBC_CITUS names (citus created in that database, workers added, nbc's files
# installed on every node; an older nbc in that database is updated to the
# files' version).  It builds and installs nothing: without
# NBC_CITUS it prints a loud SKIP and a TAP plan of 0 tests; a cluster named
# but unreachable, or without citus, is a failure.  NBC_CITUS_PSQL names the
# psql to use (default: psql on PATH).
#
# It makes schema nbc_citus_test (dropped first and at the end), with the
# same generated rows twice: table docs, distributed by id in 8 shards, and
# table docs_local, a local table of the coordinator.  Every check compares
# the distributed side with the local one, in TAP (ok / not ok):
#   - training: nb_train of text[], tsvector, text (a tokenizer), jsonb
#     (Gaussian and categorical), float8[] and weighted rows, each partially
#     aggregated on the workers (EXPLAIN VERBOSE shows worker_partial_agg),
#     counts byte for byte as local, Gaussian and weighted within rounding;
#     32 shards' partial states combined, each sent packed (the text
#     worker_partial_agg makes begins with NBCP's base64, smaller than
#     the model's text form); EXPLAIN ANALYZE of it failing
#     inside Citus, as src/README.md says
#   - merge (the aggregate nb_merge over a GROUP BY) and nb_subtract
#   - scoring through a reference table of models, run on the workers, and a
#     view of predicted labels
#   - models as values: DISTINCT, GROUP BY and a hash index on a model column
#     of a distributed table, and a table distributed by its model column
#   - #32: nb_metrics partially aggregated on the workers with
#     citus.coordinator_aggregation_strategy = 'disabled', equal to local and
#     the same in every run; nb_cross_validate with a fold column and with
#     folds, of a distributed table, a reference table and a view, in a
#     read-only transaction too, equal to local, no fold's model sent to
#     the workers, and nb_calibrate the same way (#31); README's
#     cross-validation recipe in its Citus
#     form (rows through a MATERIALIZED CTE) equal to local; count(DISTINCT
#     nb_predict(...)): the pitfall's plan (the workers group by the model),
#     since #44 refused with the rewrite in the HINT (with the test's model
#     and one of hundreds of KB, per group, in HAVING, EXPLAIN too), and the
#     rewrite README gives, equal to local; DISTINCT aggregates whose
#     argument the workers compute, and aggregates without DISTINCT, not
#     refused.  (#32's fourth item is
#     a benchmark: test/bench/merge_bench.py and citus_bench.py.)
#   - nb_live_create refused on a distributed table with nbc's own error
#
# A cluster on this kind of machine (Debian 12, PostgreSQL 15): see test/README.md's
# "Citus" section, in short: build Citus 13.2.2
# against the server, three clusters with shared_preload_libraries =
# 'citus', CREATE EXTENSION citus in each, citus_set_coordinator_host and
# citus_add_node on the coordinator, nbc's `make install` into the same
# installation.  No statement here should take long: each runs under a
# statement_timeout of 5 minutes, so that a pitfall come back fails rather
# than hangs.
set -uo pipefail

if [ -z "${NBC_CITUS:-}" ]; then
	echo "# !!! SKIP Citus: NBC_CITUS is not set (a libpq connection string of a Citus coordinator);"
	echo "# !!! SKIP the Citus tests did not run"
	echo "1..0 # SKIP no Citus cluster (set NBC_CITUS)"
	exit 0
fi

psql_bin=${NBC_CITUS_PSQL:-psql}
n=0
failed=0
S=nbc_citus_test

# q SQL: the result of SQL (unaligned, tuples only) in the test schema
q() {
	PGOPTIONS="-c search_path=$S,public -c statement_timeout=300000 -c client_min_messages=warning" \
		"$psql_bin" -X -q -A -t -v ON_ERROR_STOP=1 "$NBC_CITUS" -c "$1" 2>&1
}

# ok NAME RESULT EXPECTED: a TAP line; on a mismatch, both values as comments
ok() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		failed=$((failed + 1))
		echo "not ok $n - $1"
		echo "$2" | head -n 20 | sed 's/^/#   got:      /'
		echo "$3" | head -n 5 | sed 's/^/#   expected: /'
	fi
}

# step NAME SQL: a setup statement that must succeed (a check of its own, so
# that a failure says where).  DDL that Citus propagates goes one statement
# per call: Citus sends the whole query string to the workers.
step() {
	local out
	if out=$(q "$2"); then
		ok "$1" t t
	else
		ok "$1" "$out" "no error"
	fi
}

# check NAME SQL: SQL must return t
check() {
	ok "$1" "$(q "$2")" t
}

# plan_has NAME PATTERN SQL: EXPLAIN VERBOSE of SQL matches the extended regex
plan_has() {
	local plan
	plan=$(q "EXPLAIN (VERBOSE, COSTS OFF) $3")
	if grep -qE "$2" <<<"$plan"; then
		ok "$1" t t
	else
		ok "$1" "$(grep -vE '^ *(Task|Tasks|Node|->  Task)' <<<"$plan" | head -n 20)" "a plan matching /$2/"
	fi
}

version=$(q "SELECT extversion FROM pg_extension WHERE extname = 'citus'")
workers=$(q "SELECT count(*) FROM pg_dist_node WHERE shouldhaveshards AND isactive AND noderole = 'primary'")
if [ -z "$version" ] || [[ ! $workers =~ ^[0-9]+$ ]] || [ "$workers" -eq 0 ]; then
	echo "not ok 1 - a Citus coordinator with workers at NBC_CITUS"
	printf 'citus: %s\nworkers: %s\n' "${version:-not installed}" "$workers" | sed 's/^/# /'
	echo "1..1"
	exit 1
fi
echo "# Citus $version, $workers workers, at $NBC_CITUS"

setup=$(q "
DROP SCHEMA IF EXISTS $S CASCADE;
CREATE SCHEMA $S;
-- in public, not in the test schema first on the search_path: dropping
-- that schema at the end would drop nbc with it, before the tables whose
-- columns are of its type (and Citus fails on those tables' shards)
CREATE EXTENSION IF NOT EXISTS nbc SCHEMA public;
-- the version of the files installed (Citus updates the workers with it)
ALTER EXTENSION nbc UPDATE;
SET search_path = $S, public;
-- 2,000 documents in 4 classes: half of each one's 12 tokens from a common
-- Zipf ranking, half from its class's own; a jsonb and a float8[] of the
-- same rows, a weight and a fold
CREATE TABLE docs_local AS
SELECT i AS id, 'c' || c AS label, i % 5 AS fold, 0.5 + (i % 7) / 4.0 AS w, t AS tokens,
       array_to_string(t, ' ') AS body, array_to_tsvector(t) AS tsv,
       jsonb_build_object('len', cardinality(t) + (hashint4(i) % 5), 'x', c + sin(i),
                          'shape', (ARRAY['round', 'flat', 'tall'])[1 + (i + c) % 3]) AS feats,
       ARRAY[c + cos(i), (i % 11) / 3.0, c * 0.5 + sin(i * 7)] AS vec
FROM generate_series(1, 2000) AS i,
     LATERAL (SELECT (hashint4(i) % 4 + 4) % 4 AS c) AS l,
     LATERAL (SELECT ARRAY(SELECT 'w' || ((floor(exp(random() * ln(3000)))::int
                                           + CASE WHEN random() < 0.5 THEN c * 701 ELSE 0 END) % 3000)
                           FROM generate_series(1, 12 + 0 * i)) AS t) AS d;
CREATE TABLE docs (LIKE docs_local);
SELECT create_distributed_table('docs', 'id', shard_count => 8);
INSERT INTO docs SELECT * FROM docs_local;
" 2>&1)
if [ $? -ne 0 ]; then
	echo "not ok 1 - setup: the test schema and tables"
	echo "$setup" | sed 's/^/# /'
	echo "1..1"
	exit 1
fi
ok "setup: 2,000 rows in a distributed table and a local one" \
	"$(q "SELECT (SELECT count(*) FROM docs) || ' ' || (SELECT count(*) FROM docs_local)")" "2000 2000"

# --- training -----------------------------------------------------------------
plan_has "nb_train is partially aggregated on the workers" "worker_partial_agg" \
	"SELECT nb_train(label, tokens) FROM docs"
ok "EXPLAIN ANALYZE of a split nb_train fails inside Citus (README's pitfall)" \
	"$(q "EXPLAIN (ANALYZE, COSTS OFF) SELECT nb_train(label, tokens) FROM docs" | grep -c 'pseudo-type cstring')" 1
ok "nb_live_create refuses a distributed table with nbc's own error (0A000)" \
	"$(q "SELECT nb_live_create('docs_live', 'docs', 'label', 'tokens')" | grep -c 'live models over distributed tables are not supported')" 1
# features forms trained whole: counts byte for byte
for f in "tokens" "tsv" "body" "body, '{\"ngram_range\": [1, 2]}'::jsonb"; do
	check "nb_train(label, $f): the distributed model is byte for byte the local one" \
		"SELECT (SELECT nb_train(label, $f) FROM docs) = (SELECT nb_train(label, $f) FROM docs_local)"
done
# Gaussian statistics and weights are combined in arrival order: the same
# posteriors within rounding
for f in "feats" "vec" "tokens, w"; do
	check "nb_train(label, $f): posteriors of every row within 1e-12 of local" "
		WITH m AS (SELECT (SELECT nb_train(label, $f) FROM docs) AS d,
		                  (SELECT nb_train(label, $f) FROM docs_local) AS l)
		SELECT max(abs(a.value::float8 - b.value::float8)) < 1e-12
		FROM m, docs_local r,
		     jsonb_each_text(nb_predict_proba(m.d, r.${f%%,*})) a
		     JOIN jsonb_each_text(nb_predict_proba(m.l, r.${f%%,*})) b USING (key)"
done
step "setup: the rows again in 32 shards" "
	CREATE TABLE docs32 (LIKE docs_local);
	SELECT create_distributed_table('docs32', 'id', shard_count => 32);
	INSERT INTO docs32 SELECT * FROM docs_local;"
check "32 partial states through the text form and the combine function: the local model" "
	SELECT (SELECT nb_train(label, tokens) FROM docs32) = (SELECT nb_train(label, tokens) FROM docs_local)"
# what a worker sends: the query Citus runs on each shard (EXPLAIN VERBOSE)
check "each shard's partial state is sent packed (src/nb_pack.h): smaller than its text form, the same model" "
	SELECT bool_and(s.success AND substr(decode(left(s.result, 8), 'base64'), 1, 4) = 'NBCP'
	                AND octet_length(s.result) < octet_length(t.result)
	                AND s.result::nb_model = t.result::nb_model) AND count(*) = 32
	FROM run_command_on_shards('docs32', 'SELECT pg_catalog.worker_partial_agg(''nb_train(text,text[])''::regprocedure, ROW(label, tokens))::text FROM %s') AS s
	JOIN run_command_on_shards('docs32', 'SELECT nb_train(label, tokens)::text FROM %s') AS t USING (shardid)"
check "GROUP BY on the workers: a model per fold, each byte for byte local's" "
	SELECT bool_and(d.model = l.model) AND count(*) = 5
	FROM (SELECT fold, nb_train(label, tokens) AS model FROM docs GROUP BY fold) d
	JOIN (SELECT fold, nb_train(label, tokens) AS model FROM docs_local GROUP BY fold) l USING (fold)"

# --- merge and subtract ------------------------------------------------------
step "setup: a distributed table of a model per fold" "CREATE TABLE fold_models (fold int, model nb_model);
   SELECT create_distributed_table('fold_models', 'fold', shard_count => 8);
   INSERT INTO fold_models SELECT fold, nb_train(label, tokens) FROM docs_local GROUP BY fold;
   CREATE TABLE fold_models_local AS SELECT * FROM fold_models;"
check "nb_merge over a distributed table of models = training all rows" "
	SELECT (SELECT nb_merge(model) FROM fold_models) = (SELECT nb_train(label, tokens) FROM docs_local)"
check "nb_subtract(whole, fold) on the workers = the model of the other folds" "
	SELECT bool_and(s.model = o.model) AND count(*) = 5
	FROM (SELECT f.fold, nb_subtract(w.model, f.model) AS model
	      FROM fold_models f, (SELECT nb_merge(model) AS model FROM fold_models_local) w) s
	JOIN (SELECT f.fold, (SELECT nb_train(label, tokens) FROM docs_local d WHERE d.fold <> f.fold) AS model
	      FROM generate_series(0, 4) AS f(fold)) o USING (fold)"

# --- scoring through a reference table, a view of predictions ----------------
step "setup: a reference table of a model, views of predictions" "CREATE TABLE ref_model AS SELECT nb_train(label, tokens) AS model FROM docs_local;
   SELECT create_reference_table('ref_model');
   CREATE TABLE local_model AS SELECT * FROM ref_model;
   CREATE VIEW v_pred AS SELECT d.id, d.label, nb_predict(m.model, d.tokens) AS predicted FROM docs d, ref_model m;
   CREATE VIEW v_pred_local AS SELECT d.id, d.label, nb_predict(m.model, d.tokens) AS predicted FROM docs_local d, local_model m;"
plan_has "scoring through a reference table runs on the workers" "Task Count: 8" \
	"SELECT d.id, nb_predict_proba(m.model, d.tokens) FROM docs d, ref_model m"
check "nb_predict_proba through a reference table: every row as local, exactly" "
	SELECT count(*) = 2000 AND bool_and(a.p = b.p)
	FROM (SELECT d.id, nb_predict_proba(m.model, d.tokens) AS p FROM docs d, ref_model m) a
	JOIN (SELECT d.id, nb_predict_proba(m.model, d.tokens) AS p FROM docs_local d, local_model m) b USING (id)"
check "a view of predicted labels: the counts per predicted label as local" "
	SELECT array_agg(predicted || ':' || n ORDER BY predicted)
	       = (SELECT array_agg(predicted || ':' || n ORDER BY predicted)
	          FROM (SELECT predicted, count(*) AS n FROM v_pred_local GROUP BY predicted) l)
	FROM (SELECT predicted, count(*) AS n FROM v_pred GROUP BY predicted) d"

# --- models as values --------------------------------------------------------
step "setup: a distributed table of 2,000 small models" "
	CREATE TABLE row_models (id int, model nb_model);
	SELECT create_distributed_table('row_models', 'id', shard_count => 8);
	INSERT INTO row_models SELECT id, nb_train(label, tokens[1:2]) FROM docs_local GROUP BY id;
	CREATE TABLE row_models_local AS SELECT * FROM row_models;"
step "a hash index on a model column of a distributed table" \
	"CREATE INDEX row_models_model ON row_models USING hash (model)"
check "count(DISTINCT model) of a distributed model column as local" "
	SELECT (SELECT count(DISTINCT model) FROM row_models) = (SELECT count(DISTINCT model) FROM row_models_local)
	   AND (SELECT count(DISTINCT model) FROM row_models) > 100"
check "GROUP BY a model column as local" "
	SELECT (SELECT array_agg(n ORDER BY n) FROM (SELECT count(*) AS n FROM row_models GROUP BY model) d)
	     = (SELECT array_agg(n ORDER BY n) FROM (SELECT count(*) AS n FROM row_models_local GROUP BY model) l)"
check "a hash index on a model column of a distributed table finds the rows" "
	SET enable_seqscan = off;
	SELECT (SELECT count(*) FROM row_models WHERE model = (SELECT model FROM row_models_local WHERE id = 7))
	     = (SELECT count(*) FROM row_models_local WHERE model = (SELECT model FROM row_models_local WHERE id = 7))"
step "a table distributed by its model column" "
	CREATE TABLE by_model (model nb_model, id int);
	SELECT create_distributed_table('by_model', 'model', shard_count => 8);
	INSERT INTO by_model SELECT model, id FROM row_models_local;"
check "a table distributed by its model column: rows found by their model as local" "
	SELECT (SELECT array_agg(id ORDER BY id) FROM by_model WHERE model = (SELECT model FROM row_models_local WHERE id = 11))
	     = (SELECT array_agg(id ORDER BY id) FROM row_models_local WHERE model = (SELECT model FROM row_models_local WHERE id = 11))"
check "the rows of a model-distributed table spread over more than one shard" "
	SELECT count(DISTINCT get_shard_id_for_distribution_column('by_model', model)) > 1 FROM by_model"

# --- #32.1: nb_metrics distributes --------------------------------------------
metrics_sql="SELECT nb_metrics(d.label, nb_predict_proba(m.model, d.tokens)) FROM docs d, ref_model m"
plan=$(q "SET citus.coordinator_aggregation_strategy = 'disabled';
          EXPLAIN (VERBOSE, COSTS OFF) $metrics_sql")
if grep -q worker_partial_agg <<<"$plan"; then ok "nb_metrics is partially aggregated on the workers (strategy disabled)" t t
else ok "nb_metrics is partially aggregated on the workers (strategy disabled)" "$(head -n 3 <<<"$plan")" "worker_partial_agg in the plan"; fi
local_metrics=$(q "SELECT nb_metrics(d.label, nb_predict_proba(m.model, d.tokens)) FROM docs_local d, local_model m")
ok "nb_metrics of probabilities on the distributed table = local" "$(q "$metrics_sql")" "$local_metrics"
ok "nb_metrics of probabilities: the same in a second run" "$(q "$metrics_sql")" "$local_metrics"
ok "nb_metrics of labels through a view of predictions = local" \
	"$(q "SELECT nb_metrics(label, predicted) FROM v_pred")" "$(q "SELECT nb_metrics(label, predicted) FROM v_pred_local")"

# --- #32.2: cross-validation ---------------------------------------------------
grid='[{"kind": ["multinomial", "bernoulli"], "alpha": [0.1, 1]}, {"kind": "complement", "alpha": 0.5}]'
for how in "fold_column => 'fold'" "folds => 5" "folds => 12"; do
	ok "nb_cross_validate(docs, $how) = local" \
		"$(q "SELECT * FROM nb_cross_validate('docs', 'label', 'tokens', $how, grid => '$grid')")" \
		"$(q "SELECT * FROM nb_cross_validate('docs_local', 'label', 'tokens', $how, grid => '$grid')")"
done
# what the workers are sent (Citus logs each command it issues to a node):
# a read of the rows, never a fold's model (before #32 each scoring pass sent
# nb_subtract of two model constants, evaluated on the workers and shipped
# back with every row)
remote=$(q "SET citus.log_remote_commands = on; SET client_min_messages = log;
            SELECT count(*) FROM nb_cross_validate('docs', 'label', 'tokens', fold_column => 'fold', grid => '$grid')" |
         grep '^NOTICE:  issuing ')
ok "nb_cross_validate with a fold column: the workers are sent a read of the rows, and no fold's model" \
	"$(grep -c 'issuing SELECT .*FROM nbc_citus_test.docs_' <<<"$remote" | sed 's/^[1-9][0-9]*$/read/') $(grep -c 'nb_subtract\|nb_grid_metrics' <<<"$remote")" \
	"read 0"
ok "nb_cross_validate leaves no temporary table behind" \
	"$(q "SELECT count(*) FROM nb_cross_validate('docs', 'label', 'tokens', fold_column => 'fold', grid => '$grid');
	      SELECT to_regclass('pg_temp.nbc_cross_validate_rows') IS NULL")" "$(printf '5\nt')"
ok "nb_cross_validate in a read-only transaction (rows through a MATERIALIZED CTE) = local" \
	"$(q "BEGIN READ ONLY; SELECT * FROM nb_cross_validate('docs', 'label', 'tokens', fold_column => 'fold', grid => '$grid'); COMMIT;")" \
	"$(q "SELECT * FROM nb_cross_validate('docs_local', 'label', 'tokens', fold_column => 'fold', grid => '$grid')")"
ok "nb_cross_validate of a view of the distributed table, a fold column = local" \
	"$(q "CREATE VIEW v_docs AS SELECT id, label, tokens, fold FROM docs;
	      SELECT * FROM nb_cross_validate('v_docs', 'label', 'tokens', fold_column => 'fold', grid => '$grid')")" \
	"$(q "SELECT * FROM nb_cross_validate('docs_local', 'label', 'tokens', fold_column => 'fold', grid => '$grid')")"
ok "nb_cross_validate of text documents with a tokenizer and a fold column = local" \
	"$(q "SELECT * FROM nb_cross_validate('docs', 'label', 'body', fold_column => 'fold', grid => '$grid',
	                                      tokenizer => '{\"ngram_range\": [1, 2]}')")" \
	"$(q "SELECT * FROM nb_cross_validate('docs_local', 'label', 'body', fold_column => 'fold', grid => '$grid',
	                                      tokenizer => '{\"ngram_range\": [1, 2]}')")"
step "setup: the rows in a reference table" "CREATE TABLE docs_ref AS SELECT * FROM docs_local;
	SELECT create_reference_table('docs_ref');"
ok "nb_cross_validate of a reference table, a fold column = local" \
	"$(q "SELECT * FROM nb_cross_validate('docs_ref', 'label', 'tokens', fold_column => 'fold', grid => '$grid')")" \
	"$(q "SELECT * FROM nb_cross_validate('docs_local', 'label', 'tokens', fold_column => 'fold', grid => '$grid')")"
# nb_calibrate shares nb_cross_validate's rows (nbc_cross_validation_rows, #31):
# the same copy to the coordinator, the same results as local
for how in "fold_column => 'fold'" "folds => 5"; do
	ok "nb_calibrate(docs, $how) = local" \
		"$(q "SELECT * FROM nb_calibrate('docs', 'label', 'tokens', $how)")" \
		"$(q "SELECT * FROM nb_calibrate('docs_local', 'label', 'tokens', $how)")"
done
remote=$(q "SET citus.log_remote_commands = on; SET client_min_messages = log;
            SELECT count(*) FROM nb_calibrate('docs', 'label', 'tokens', fold_column => 'fold')" |
         grep '^NOTICE:  issuing ')
ok "nb_calibrate with a fold column: the workers are sent a read of the rows, and no fold's model" \
	"$(grep -c 'issuing SELECT .*FROM nbc_citus_test.docs_' <<<"$remote" | sed 's/^[1-9][0-9]*$/read/') $(grep -c 'nb_subtract\|nbc_calibration' <<<"$remote")" \
	"read 0"
ok "nb_calibrate leaves no temporary table behind" \
	"$(q "SELECT count(*) FROM nb_calibrate('docs', 'label', 'tokens', fold_column => 'fold');
	      SELECT to_regclass('pg_temp.nbc_calibrate_rows') IS NULL")" "$(printf '1\nt')"
ok "nb_calibrate in a read-only transaction (rows through a MATERIALIZED CTE) = local" \
	"$(q "BEGIN READ ONLY; SELECT * FROM nb_calibrate('docs', 'label', 'tokens', fold_column => 'fold'); COMMIT;")" \
	"$(q "SELECT * FROM nb_calibrate('docs_local', 'label', 'tokens', fold_column => 'fold')")"
ok "nb_cross_validate of jsonb rows with a fold column = local within 1e-9" \
	"$(q "SELECT bool_and(abs(d.accuracy - l.accuracy) < 1e-9 AND abs(d.log_loss - l.log_loss) < 1e-9) AND count(*) > 1
	      FROM nb_cross_validate('docs', 'label', 'feats', fold_column => 'fold') d
	      JOIN nb_cross_validate('docs_local', 'label', 'feats', fold_column => 'fold') l USING (options)")" t
# README's recipe: the out-of-fold models in a reference table, the rows read
# through a MATERIALIZED CTE (README's Citus section)
step "setup: README's out-of-fold models in a reference table" "CREATE TABLE oof_models AS
   SELECT f.fold, nb_subtract(w.model, f.model) AS model
   FROM fold_models_local f, (SELECT nb_merge(model) AS model FROM fold_models_local) w;
   SELECT create_reference_table('oof_models');
   CREATE TABLE oof_models_local AS SELECT * FROM oof_models;"
recipe() { # recipe ROWS OOF
	echo "SELECT m.fold, nb_grid_metrics(m.model, d.tokens, d.label, ARRAY(SELECT nb_grid_options('$grid')))
	      FROM $1 AS d JOIN $2 AS m ON m.fold = d.fold GROUP BY m.fold ORDER BY m.fold"
}
fast=$(recipe d oof_models)
fast="WITH d AS MATERIALIZED (SELECT id % 5 AS fold, label, tokens FROM docs) $fast"
plan_has "README's recipe on Citus: the rows come to the coordinator first" "Distributed Subplan" "$fast"
ok "README's recipe on Citus = local" "$(q "$fast")" \
	"$(q "$(recipe "(SELECT id % 5 AS fold, label, tokens FROM docs_local)" oof_models_local)")"

# #44.2: the same rows read directly would be aggregated on the workers, the
# model copied into every row's record by Citus: refused, the form above in
# the HINT
ok "nb_grid_metrics of distributed rows read directly: refused with the MATERIALIZED form in the HINT" \
	"$(q "$(recipe "(SELECT id % 5 AS fold, label, tokens FROM docs)" oof_models)" |
	   grep -c 'ERROR:  nb_grid_metrics cannot run inside another aggregate\|HINT:  Read the rows through a MATERIALIZED CTE')" 2

# --- #32.3, #44.3: count(DISTINCT nb_predict(model, ...)) -------------------
# Citus computes count(DISTINCT expr) on the coordinator from worker rows
# grouped by every column expr names (the model among them): shown with an
# expression of the same columns that is not nbc's, then refused for the
# scoring functions, the rewrite in the HINT.  With a model of hundreds of KB
# (5,000 tokens in 4 classes) as well as the small one.
plan_has "count(DISTINCT f(m.model, d.tokens)): the workers group by the model" \
	"Group Key: .*m\.model" "SELECT count(DISTINCT (pg_column_size(m.model) + cardinality(d.tokens))) FROM docs d, ref_model m"
step "setup: a reference table of a model of hundreds of KB" "CREATE TABLE big_model_local AS
	SELECT nb_train(label, tokens) AS model
	FROM (SELECT 'c' || (hashint4(i) % 4 + 4) % 4 AS label,
	             ARRAY(SELECT 'w' || abs(hashint4(i * 20 + j)) % 5000 FROM generate_series(1, 20) AS j) AS tokens
	      FROM generate_series(1, 20000) AS i) AS s;
   CREATE TABLE big_model AS SELECT * FROM big_model_local;
   SELECT create_reference_table('big_model');"
check "the big model: over 300 KB, 5,000 tokens" \
	"SELECT pg_column_size(model::text) > 300000 AND (nb_info(model) ->> 'vocabulary')::int = 5000 FROM big_model_local"
refused() {
	q "$1" | grep -c 'ERROR:  \(nb_predict\|nb_predict_proba\|nb_probability\) inside an aggregate with DISTINCT cannot read its model from a distributed query\|HINT:  Count the rows of a SELECT DISTINCT'
}
for m in ref_model big_model; do
	ok "count(DISTINCT nb_predict(m.model, d.tokens)), $m: refused with the rewrite in the HINT" \
		"$(refused "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM docs d, $m m")" 2
done
ok "EXPLAIN of it: refused as well" \
	"$(refused "EXPLAIN VERBOSE SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM docs d, big_model m")" 2
ok "per group, and in HAVING: refused" \
	"$(refused "SELECT d.label, count(DISTINCT nb_predict(m.model, d.tokens)) FROM docs d, big_model m GROUP BY d.label") $(refused "SELECT d.fold FROM docs d, big_model m GROUP BY d.fold HAVING count(DISTINCT nb_predict(m.model, d.tokens)) > 1")" "2 2"
ok "count(DISTINCT nb_probability(...) > 0.5): refused" \
	"$(refused "SELECT count(DISTINCT nb_probability(m.model, d.tokens, 'c1') > 0.5) FROM docs d, big_model m")" 2
ok "string_agg(DISTINCT nb_probability(...) ...), whose argument the workers compute: not refused, = local" \
	"$(q "SELECT string_agg(DISTINCT (nb_probability(m.model, d.tokens, 'c1') > 0.5)::text, ',') FROM docs d, big_model m")" \
	"$(q "SELECT string_agg(DISTINCT (nb_probability(m.model, d.tokens, 'c1') > 0.5)::text, ',') FROM docs_local d, big_model_local m")"
for pair in ref_model:local_model big_model:big_model_local; do
	m=${pair%:*}
	distinct_local=$(q "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM docs_local d, ${pair#*:} m")
	plan_has "the rewrite, $m: the workers group by the prediction" "Group Key: .*nb_predict" \
		"SELECT count(*) FROM (SELECT DISTINCT nb_predict(m.model, d.tokens) FROM docs d, $m m) s"
	ok "the rewrite, $m, counts as count(DISTINCT ...) does locally" \
		"$(q "SELECT count(*) FROM (SELECT DISTINCT nb_predict(m.model, d.tokens) FROM docs d, $m m) s")" \
		"$distinct_local"
done
ok "the rewrite per group = count(DISTINCT ...) per group locally, big model" \
	"$(q "SELECT string_agg(label || ':' || n, ',' ORDER BY label) FROM (SELECT label, count(*) AS n FROM (SELECT DISTINCT d.label, nb_predict(m.model, d.tokens) FROM docs d, big_model m) s GROUP BY label) t")" \
	"$(q "SELECT string_agg(label || ':' || n, ',' ORDER BY label) FROM (SELECT d.label, count(DISTINCT nb_predict(m.model, d.tokens)) AS n FROM docs_local d, big_model_local m GROUP BY d.label) t")"
ok "aggregates without DISTINCT over nb_predict run on the workers: not refused, = local" \
	"$(q "SELECT count(*) FILTER (WHERE nb_predict(m.model, d.tokens) = d.label) FROM docs d, big_model m")" \
	"$(q "SELECT count(*) FILTER (WHERE nb_predict(m.model, d.tokens) = d.label) FROM docs_local d, big_model_local m")"
distinct_local=$(q "SELECT count(DISTINCT nb_predict(m.model, d.tokens)) FROM docs_local d, local_model m")
ok "count(*) of the DISTINCT predicted labels of the view = local" \
	"$(q "SELECT count(*) FROM (SELECT DISTINCT predicted FROM v_pred) s")" "$distinct_local"

ok "teardown: the test schema dropped, nbc kept" "$(q "DROP SCHEMA $S CASCADE; SELECT count(*) FROM pg_extension WHERE extname = 'nbc'")" 1
echo "1..$n"
[ "$failed" -eq 0 ]
