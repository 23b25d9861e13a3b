#!/usr/bin/env bash
# Concurrency and crash safety of stored models, with pgbench:
#
#   bash test/reliability/concurrency.sh [--quick|--long] [--crash]
#
# Writers add documents (a label, a bag of tokens, categorical and boolean
# attributes as jsonb, an integer weight) to a segment and, in the same
# transaction, merge models of just those rows into the segment's two stored
# models (nb_merge); rebuilders retrain a segment's model
# from all its rows; some writers roll back; readers score with nb_predict and
# nb_predict_proba and inspect the models; checkers compare, within one
# snapshot, a stored model with nb_train over the segment's committed rows,
# and its scores from the preparation the backend kept between queries
# (nbc.prepared_model_cache) with scores from a fresh preparation, and log any
# difference.  Counts and weights are small integers, so every order
# of merging gives the same bits: at the end each stored model must equal
# nb_train over the committed rows byte for byte (nbc_model_send).
#
# Without --crash it runs against the libpq environment (PGHOST, PGPORT, ...)
# in a database nbc_rel_load it creates (and drops when it passes).  With
# --crash it starts a throwaway cluster of its own (the server binaries of
# pg_config --bindir, nbc installed there), runs the same load, stops the
# server with "pg_ctl stop -m immediate" once enough rows are committed,
# restarts it and checks the same equalities, that no row committed before the
# crash was lost, and the indexes (amcheck).  --long: more clients,
# transactions, segments and crash rounds.
#
# Seeded (pgbench --random-seed); the checks hold for every interleaving.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

mode=quick
crash=0
for a in "$@"; do
	case $a in
	--quick) mode=quick ;;
	--long) mode=long ;;
	--crash) crash=1 ;;
	*) echo "usage: $0 [--quick|--long] [--crash]" >&2; exit 2 ;;
	esac
done

if [ "$mode" = quick ]; then
	clients=16 xacts=150 segs=8 vocab=400 rounds=1 crash_docs=1500
else
	clients=32 xacts=400 segs=32 vocab=5000 rounds=3 crash_docs=20000
fi
seed=20261126
db=nbc_rel_load
tag=$([ $crash -eq 1 ] && echo crash || echo concurrency)

work=$(mktemp -d /tmp/nbc-rel-load.XXXXXX)
cleanup() {
	if [ $crash -eq 1 ]; then
		rel_drop_cluster "$work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# the pgbench scripts; :segs and :vocab come from -D
cat >"$work/writer.sql" <<'SQL'
\set seg random(1, :segs)
\set k random(1, 1000000000)
\set n random(1, 4)
BEGIN;
SELECT nextval('batches') AS b \gset
INSERT INTO docs (batch, seg, label, tokens, attrs, weight)
SELECT :b, :seg, (ARRAY['spam', 'ham', 'eggs', 'späm'])[1 + (:k + i) % 4],
	ARRAY(SELECT 'w' || (((:k::bigint + i) * 7919 + j * 104729) % :vocab)
		FROM generate_series(1, 2 + (:k + i) % 9) j),
	jsonb_build_object('color', (ARRAY['red', 'green', 'blue', 'grün'])[1 + ((:k::bigint + i) * 7) % 4],
		'size', (ARRAY['s', 'm', 'l'])[1 + ((:k + i) / 3) % 3], 'ok', (:k + i) % 5 = 0),
	1 + (:k + i) % 3
FROM generate_series(1, :n) i;
UPDATE models
SET m = nb_merge(m, (SELECT nb_train(label, tokens, weight::float8) FROM docs WHERE batch = :b)),
	mj = nb_merge(mj, (SELECT nb_train(label, attrs, weight::float8) FROM docs WHERE batch = :b)),
	docs = docs + (SELECT count(*) FROM docs WHERE batch = :b)
WHERE seg = :seg;
COMMIT;
SQL
sed 's/^COMMIT;$/ROLLBACK;/' "$work/writer.sql" >"$work/rollback.sql"
# the row lock first, then a statement whose snapshot sees every merge that
# committed before it: a full retrain racing the incremental merges
cat >"$work/rebuild.sql" <<'SQL'
\set seg random(1, :segs)
BEGIN;
SELECT 1 FROM models WHERE seg = :seg FOR UPDATE;
UPDATE models
SET m = (SELECT nb_train(label, tokens, weight::float8) FROM docs WHERE seg = :seg),
	mj = (SELECT nb_train(label, attrs, weight::float8) FROM docs WHERE seg = :seg),
	docs = (SELECT count(*) FROM docs WHERE seg = :seg)
WHERE seg = :seg;
COMMIT;
SQL
cat >"$work/reader.sql" <<'SQL'
\set seg random(1, :segs)
\set k random(1, 1000000000)
SELECT nb_predict(m, ARRAY['w' || (:k % :vocab), 'w' || ((:k / 7) % :vocab), 'w' || ((:k / 49) % :vocab)]),
	nb_predict_proba(m, ARRAY['w' || (:k % :vocab), 'w' || ((:k / 3) % :vocab)])
FROM models WHERE seg = :seg;
SELECT count(*) FILTER (WHERE nb_predict(m.m, d.tokens) = d.label),
	max(nb_predict_proba(m.m, d.tokens, '{"alpha": 0.5}')::text)
FROM models m JOIN (SELECT * FROM docs WHERE seg = :seg ORDER BY id DESC LIMIT 20) d USING (seg);
SELECT nb_predict(mj, '{"color": "red", "ok": true}'::jsonb), nb_predict_proba(mj, jsonb_build_object('size', 's', 'color', 'grün')),
	nb_predict_log_proba(mj, '{"color": "violet"}'::jsonb)
FROM models WHERE seg = :seg;
SELECT nb_info(m), (SELECT count(*) FROM nb_classes(m)), (SELECT max(mutual_info) FROM nb_mutual_info(m)),
	mj::jsonb, (SELECT max(mutual_info) FROM nb_mutual_info(mj))
FROM models WHERE seg = :seg;
SQL
# one snapshot: the stored model against its committed rows, and its scores
# with the prepared model this backend kept between queries (its segment's
# model changes all the time) against scores of a model prepared afresh
cat >"$work/checker.sql" <<'SQL'
\set seg random(1, :segs)
\set k random(1, 1000000000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO mismatches (seg, model_docs, docs, what)
SELECT m.seg, m.docs, t.n, 'rows'
FROM models m,
	LATERAL (SELECT nb_train(label, tokens, weight::float8) AS m, nb_train(label, attrs, weight::float8) AS mj,
			count(*) AS n
		FROM docs WHERE seg = m.seg) t
WHERE m.seg = :seg
	AND (m.docs <> t.n OR nbc_model_send(m.m) IS DISTINCT FROM nbc_model_send(t.m)
		OR nbc_model_send(m.mj) IS DISTINCT FROM nbc_model_send(t.mj));
SELECT coalesce(md5(nb_predict_proba(m, ARRAY['w' || (:k % :vocab), 'w' || ((:k / 5) % :vocab)])::text), 'none') AS kept
FROM models WHERE seg = :seg \gset
SET LOCAL nbc.prepared_model_cache = 0;
INSERT INTO mismatches (seg, model_docs, docs, what)
SELECT seg, docs, NULL, 'scores'
FROM models WHERE seg = :seg
	AND coalesce(md5(nb_predict_proba(m, ARRAY['w' || (:k % :vocab), 'w' || ((:k / 5) % :vocab)])::text), 'none') <> ':kept';
COMMIT;
SQL

setup_db() {
	"$REL_BIN/dropdb" --if-exists "$db" 2>/dev/null && "$REL_BIN/createdb" -T template0 "$db" &&
		rel_psql -d "$db" <<SQL
CREATE EXTENSION nbc;
CREATE SEQUENCE batches;
CREATE TABLE docs (id bigserial PRIMARY KEY, batch bigint NOT NULL, seg int NOT NULL,
	label text NOT NULL, tokens text[] NOT NULL, attrs jsonb NOT NULL, weight int NOT NULL);
CREATE INDEX ON docs (batch);
CREATE INDEX ON docs (seg, id);
-- per segment, a model of the token bags and one of the categorical and
-- boolean attributes (integer counts too)
CREATE TABLE models (seg int PRIMARY KEY, m nb_model, mj nb_model, docs bigint NOT NULL DEFAULT 0);
CREATE TABLE mismatches (seg int, model_docs bigint, docs bigint, what text);
INSERT INTO models (seg) SELECT generate_series(1, $segs);
SQL
}

# the mixed load; add -t N or -T SECONDS and the database
pgbench_cmd=("$REL_BIN/pgbench" -n -c "$clients" -j 2 --random-seed="$seed" -D segs="$segs" -D vocab="$vocab"
	-f "$work/writer.sql@10" -f "$work/rollback.sql@1" -f "$work/rebuild.sql@1"
	-f "$work/reader.sql@5" -f "$work/checker.sql@2")

# check_models WHAT: every stored model equals nb_train over its committed rows
check_models() {
	local what=$1 out
	out=$(rel_psql -d "$db" <<'SQL'
SELECT count(*) FILTER (WHERE nbc_model_send(m.m) IS DISTINCT FROM nbc_model_send(t.m)
		OR nbc_model_send(m.mj) IS DISTINCT FROM nbc_model_send(t.mj) OR m.docs <> t.n),
	count(m.m) FILTER (WHERE m.mj IS NOT NULL), sum(t.n)
FROM models m
	LEFT JOIN LATERAL (SELECT nb_train(label, tokens, weight::float8) AS m,
			nb_train(label, attrs, weight::float8) AS mj, count(*) AS n
		FROM docs WHERE seg = m.seg) t ON true;
SQL
	) || { not_ok "$tag: $what: every stored model equals nb_train over its committed rows" "$out"; return; }
	local bad n docs
	IFS='|' read -r bad n docs <<<"$out"
	if [ "$bad" = 0 ] && [ "$n" = "$segs" ] && [ "${docs:-0}" -gt 0 ]; then
		ok "$tag: $what: $n segments' stored models (tokens, jsonb) equal nb_train over their $docs committed rows, byte for byte"
	else
		not_ok "$tag: $what: every stored model equals nb_train over its committed rows" \
			"$bad segments differ, $n of $segs have both models ($docs rows)"
	fi
	is "$tag: $what: no checker saw, in its snapshot, a stored model differ from its rows or score differently once kept prepared" \
		"$(rel_psql -d "$db" -c "SELECT count(*) || ' ' || coalesce(string_agg(DISTINCT what, ','), '') FROM mismatches")" "0 "
	# the merge of the segments' models is the model of all rows
	is "$tag: $what: nb_merge over the stored models equals nb_train over all rows" \
		"$(rel_psql -d "$db" <<'SQL'
SELECT nbc_model_send((SELECT nb_merge(m) FROM models)) = nbc_model_send((SELECT nb_train(label, tokens, weight::float8) FROM docs))
	AND nbc_model_send((SELECT nb_merge(mj) FROM models)) = nbc_model_send((SELECT nb_train(label, attrs, weight::float8) FROM docs));
SQL
		)" t
	# a probe set scores the same with a stored model and a fresh one
	is "$tag: $what: predictions of stored and freshly trained models agree" \
		"$(rel_psql -d "$db" <<'SQL'
SELECT count(*) FROM models m
	CROSS JOIN LATERAL (SELECT nb_train(label, tokens, weight::float8) AS f,
			nb_train(label, attrs, weight::float8) AS fj
		FROM docs WHERE seg = m.seg) t
	CROSS JOIN (SELECT ARRAY['w' || g, 'w' || (g * 7), 'w' || (g * 13)] AS x,
			jsonb_build_object('color', (ARRAY['red', 'blue', 'grün', 'violet'])[1 + g % 4], 'ok', g % 2 = 0) AS xj
		FROM generate_series(1, 50) g) p
WHERE nb_predict_proba(m.m, p.x)::text IS DISTINCT FROM nb_predict_proba(t.f, p.x)::text
	OR nb_predict_proba(m.mj, p.xj)::text IS DISTINCT FROM nb_predict_proba(t.fj, p.xj)::text;
SQL
		)" 0
}

if [ $crash -eq 0 ]; then
	if ! out=$(setup_db 2>&1); then
		not_ok "$tag: create the database $db" "$out"
		rel_finish
		exit
	fi
	rc=0
	"${pgbench_cmd[@]}" -t "$xacts" "$db" >"$work/pgbench.log" 2>&1 || rc=$?
	done_x=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.log")
	failed_x=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.log")
	if [ $rc -eq 0 ] && [ "${done_x:-0}" -eq $((clients * xacts)) ] && [ "${failed_x:-0}" -eq 0 ]; then
		ok "$tag: pgbench, $clients clients: $done_x transactions (writes, rollbacks, rebuilds, scoring, checks), none failed"
	else
		not_ok "$tag: pgbench, $clients clients, every transaction succeeds" \
			"status $rc, processed ${done_x:-?}, failed ${failed_x:-?}" "$(grep -v '^progress' "$work/pgbench.log" | tail -n 20)"
	fi
	check_models "after the load"
	[ "$REL_BAD" -eq 0 ] && "$REL_BIN/dropdb" "$db"
	rel_finish
	exit
fi

# --crash: a cluster of our own, killed under load
if ! rel_start_cluster "$work" >"$work/start.log" 2>&1; then
	not_ok "$tag: start a throwaway cluster ($REL_BIN)" "$(cat "$work/start.log")"
	rel_finish
	exit
fi
diag "$tag: throwaway cluster in $REL_PGDATA, port $PGPORT"
if ! out=$(setup_db 2>&1); then
	not_ok "$tag: create the database $db" "$out"
	rel_finish
	exit
fi
for ((round = 1; round <= rounds; round++)); do
	target=$((round * crash_docs))
	"${pgbench_cmd[@]}" -T 3600 "$db" >"$work/pgbench-$round.log" 2>&1 &
	pgb=$!
	# crash once enough rows are committed (a count, not a time)
	committed=0
	while kill -0 "$pgb" 2>/dev/null; do
		committed=$(rel_psql -d "$db" -c 'SELECT count(*) FROM docs') || committed=0
		[ "$committed" -ge "$target" ] && break
		sleep 0.3
	done
	if ! kill -0 "$pgb" 2>/dev/null; then
		not_ok "$tag: round $round: the load runs until the crash" "$(grep -v '^progress' "$work/pgbench-$round.log" | tail -n 20)"
		break
	fi
	# a lower bound of what is committed: all of it must survive
	before=$(rel_psql -d "$db" -c 'SELECT count(*) FROM docs')
	if rel_pg_ctl stop-immediate; then
		ok "$tag: round $round: immediate shutdown under load ($before rows committed, $clients clients)"
	else
		not_ok "$tag: round $round: immediate shutdown under load"
	fi
	# pgbench's clients lose their connections and abort; stop it if it lingers
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pgb" 2>/dev/null || break
		sleep 0.2
	done
	kill "$pgb" 2>/dev/null
	wait "$pgb" 2>/dev/null
	logged=$(wc -l <"$REL_PGDATA/server.log")
	if ! rel_pg_ctl start; then
		not_ok "$tag: round $round: the server restarts after the crash" "$(tail -n 30 "$REL_PGDATA/server.log")"
		break
	fi
	if tail -n +"$((logged + 1))" "$REL_PGDATA/server.log" | grep -q 'automatic recovery in progress'; then
		ok "$tag: round $round: the server restarts through crash recovery"
	else
		not_ok "$tag: round $round: the server restarts through crash recovery" \
			"no \"automatic recovery in progress\" in the server log" "$(tail -n 20 "$REL_PGDATA/server.log")"
	fi
	after=$(rel_psql -d "$db" -c 'SELECT count(*) FROM docs')
	if [ "${after:-0}" -ge "$before" ]; then
		ok "$tag: round $round: no committed row lost ($after >= $before rows)"
	else
		not_ok "$tag: round $round: no committed row lost" "$after rows after, $before committed before"
	fi
	check_models "round $round, after the crash"
	if out=$(rel_psql -d "$db" <<'SQL' 2>&1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT count(bt_index_check(c.oid, true)) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relkind = 'i' AND a.amname = 'btree' AND c.relnamespace = 'public'::regnamespace;
SQL
	); then
		ok "$tag: round $round: amcheck finds the $out indexes intact (heap entries included)"
	else
		not_ok "$tag: round $round: amcheck finds the indexes intact" "$out"
	fi
done
rel_finish
