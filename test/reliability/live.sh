#!/usr/bin/env bash
# Live models under concurrent writes, an immediate shutdown and a dump:
#
#   bash test/reliability/live.sh [--quick|--long]
#
# A throwaway cluster of its own (it stops its server with "pg_ctl stop -m
# immediate"), a table docs with three live models over it: token bags
# (label, tokens text[]), text tokenized by the default tokenizer (label,
# body) and weighted token bags (integer weights, so every order of merging
# gives the same bits).  pgbench clients insert, update labels and
# features, delete, roll back and run several statements in one
# transaction, while readers score rows through a view on nb_live and
# checkers, each in a REPEATABLE READ snapshot, record whether every live
# model equals nb_train over the table in that snapshot, byte for byte.
# Then: the run had no failed transaction, at least the wanted number of
# snapshots was sampled and none differed, the live models equal nb_train
# at the end and their pending and merged deltas stay bounded; the same load again,
# stopped by an immediate shutdown, restarted: still equal, and writes
# after it too; pg_dump -Fc and pg_restore into a new database: equal
# there, and kept equal by writes there.
# --quick: 8 clients for 15 s, at least 10 samples; --long: 16 clients for
# 60 s, at least 50 samples (README "Live models" gives a run's numbers).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"

rel_mode "$@"
if [ "$mode" = quick ]; then
	clients=8 secs=15 min_samples=10
else
	clients=16 secs=60 min_samples=50
fi
seed=20261128
db=nbc_rel_live
fold_after=32

work=$(mktemp -d /tmp/nbc-rel-live.XXXXXX)
trap 'rel_drop_cluster "$work"' EXIT
if ! rel_start_cluster "$work" 56080 >"$work/start.log" 2>&1; then
	not_ok "live: start a throwaway cluster" "$(cat "$work/start.log")"
	rel_finish
	exit 1
fi

# the pgbench scripts; :ids (the id range writers aim at) comes from -D
cat >"$work/insert.sql" <<'SQL'
\set k random(1, 1000000000)
\set n random(1, 3)
INSERT INTO docs (label, tokens, body, weight)
SELECT CASE WHEN (:k + i) % 11 = 0 THEN NULL ELSE (ARRAY['spam', 'ham', 'eggs', 'späm'])[1 + (:k + i) % 4] END,
	ARRAY(SELECT 'w' || (((:k::bigint + i) * 7919 + j * 104729) % 500) FROM generate_series(1, 1 + (:k + i) % 6) j),
	'Word ' || ((:k + i) % 97) || ' and word ' || ((:k + i) % 31),
	1 + (:k + i) % 3
FROM generate_series(1, :n) i;
SQL
cat >"$work/update.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
UPDATE docs SET label = (ARRAY['spam', 'ham', 'eggs', NULL])[1 + :k % 4] WHERE id = :id;
SQL
cat >"$work/update_features.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
UPDATE docs SET tokens = ARRAY['u' || (:k % 50), 'w' || (:k % 500)], body = 'updated ' || (:k % 13), weight = 1 + :k % 4
WHERE id BETWEEN :id AND :id + 2;
SQL
cat >"$work/delete.sql" <<'SQL'
\set id random(1, :ids)
DELETE FROM docs WHERE id BETWEEN :id AND :id + 1;
SQL
cat >"$work/rollback.sql" <<'SQL'
\set id random(1, :ids)
BEGIN;
INSERT INTO docs (label, tokens, body, weight) VALUES ('spam', '{rolled,back}', 'rolled back', 2);
DELETE FROM docs WHERE id = :id;
ROLLBACK;
SQL
cat >"$work/transaction.sql" <<'SQL'
\set id random(1, :ids)
\set k random(1, 1000000000)
BEGIN;
INSERT INTO docs (label, tokens, body, weight) VALUES ('ham', ARRAY['t' || (:k % 40)], 'in a transaction', 1);
UPDATE docs SET label = 'eggs' WHERE id = :id;
DELETE FROM docs WHERE id = :id + 7;
COMMIT;
SQL
cat >"$work/reader.sql" <<'SQL'
\set id random(1, :ids)
SELECT count(*) FILTER (WHERE predicted = label) FROM predicted WHERE id BETWEEN :id AND :id + 50;
SELECT nb_predict_proba((SELECT nb_live('text')), 'word ' || :id);
SQL
cat >"$work/checker.sql" <<'SQL'
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO samples (tokens, text, weighted, rows)
SELECT nbc_model_send(nb_live('tokens')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens) FROM docs)),
	nbc_model_send(nb_live('text')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, body) FROM docs)),
	nbc_model_send(nb_live('weighted')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens, weight::float8) FROM docs)),
	(SELECT count(*) FROM docs);
COMMIT;
SQL

ids=3000
pgbench_cmd=("$REL_BIN/pgbench" -n -c "$clients" -j 2 --random-seed="$seed" -D ids="$ids"
	-f "$work/insert.sql@10" -f "$work/update.sql@4" -f "$work/update_features.sql@3"
	-f "$work/delete.sql@4" -f "$work/rollback.sql@1" -f "$work/transaction.sql@2"
	-f "$work/reader.sql@3" -f "$work/checker.sql@1")

# equal DB WHAT: every live model equals nb_train over the table (one snapshot)
equal() {
	local got
	got=$(rel_psql -d "$1" <<'SQL'
SELECT (nbc_model_send(nb_live('tokens')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens) FROM docs)))
	AND (nbc_model_send(nb_live('text')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, body) FROM docs)))
	AND (nbc_model_send(nb_live('weighted')) IS NOT DISTINCT FROM nbc_model_send((SELECT nb_train(label, tokens, weight::float8) FROM docs)))
	AND nb_live('tokens') IS NOT NULL;
SQL
	) 2>&1
	is "live: $2: the three live models equal nb_train over the table, byte for byte" "$got" t
}

# write DB: a few more statements of each kind
write() {
	"$REL_BIN/pgbench" -n -c 2 -t 20 --random-seed="$seed" -D ids="$ids" -f "$work/insert.sql" \
		-f "$work/update.sql" -f "$work/delete.sql" -f "$work/update_features.sql" "$1" >"$work/write.log" 2>&1 ||
		diag "$(cat "$work/write.log")"
}

rel_psql -c "CREATE DATABASE $db" >/dev/null &&
	rel_psql -d "$db" <<SQL >/dev/null
CREATE EXTENSION nbc;
CREATE TABLE docs (id bigserial PRIMARY KEY, label text, tokens text[], body text, weight int NOT NULL);
CREATE TABLE samples (at timestamptz NOT NULL DEFAULT clock_timestamp(), tokens boolean, text boolean,
	weighted boolean, rows bigint);
INSERT INTO docs (label, tokens, body, weight)
SELECT (ARRAY['spam', 'ham', 'eggs'])[1 + i % 3], ARRAY['w' || i % 500, 'w' || (i * 7) % 500],
	'Word ' || (i % 97), 1 + i % 3
FROM generate_series(1, $ids / 2) i;
SELECT nb_live_create('tokens', 'docs', 'label', 'tokens', options => '{"fold_after": $fold_after}');
SELECT nb_live_create('text', 'docs', 'label', 'body', options => '{"fold_after": $fold_after}');
SELECT nb_live_create('weighted', 'docs', 'label', 'tokens', 'weight', options => '{"fold_after": $fold_after}');
CREATE VIEW predicted AS
SELECT d.id, d.label, nb_predict((SELECT nb_live('tokens')), d.tokens) AS predicted FROM docs d;
SQL
[ $? -eq 0 ] || { not_ok "live: set up the database"; rel_finish; exit 1; }

# the load
"${pgbench_cmd[@]}" -T "$secs" "$db" >"$work/load.log" 2>&1
rc=$?
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/load.log")
done_x=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/load.log")
if [ $rc -eq 0 ] && [ "${failed:-0}" = 0 ] && [ "${done_x:-0}" -gt 0 ]; then
	ok "live: $clients clients for $secs s: $done_x transactions, none failed"
else
	not_ok "live: $clients clients for $secs s without a failed transaction (pgbench status $rc)" "$(tail -20 "$work/load.log")"
fi
IFS='|' read -r n bad rows < <(rel_psql -d "$db" -c \
	"SELECT count(*), count(*) FILTER (WHERE NOT (tokens AND text AND weighted)), max(rows) FROM samples")
if [ "${n:-0}" -ge "$min_samples" ] && [ "$bad" = 0 ]; then
	ok "live: $n REPEATABLE READ snapshots sampled during the load (up to $rows rows), in each every live model equal to nb_train, byte for byte"
else
	not_ok "live: at least $min_samples snapshots sampled, none with a live model different from nb_train" "$n samples, $bad differed"
fi
equal "$db" "after the load"
# the deltas past the last fold, and the merged ones (at most 16, pg_live.c
# fold_auto; a writer's delta that a fold could not see yet counts among them)
read -r pending merged <<<"$(rel_psql -d "$db" -F ' ' -c "SELECT max(p), max(m) FROM (SELECT count(*) FILTER (WHERE d.id > l.folded_through) AS p, count(*) FILTER (WHERE d.id > l.based_through AND d.id <= l.folded_through) AS m FROM nbc_live l LEFT JOIN nbc_live_delta d ON d.live_id = l.id GROUP BY l.id) s")"
if [ "${pending:-999999}" -le $((fold_after + clients)) ] && [ "${merged:-999999}" -le $((16 + clients)) ]; then
	ok "live: deltas bounded by the automatic fold ($pending pending, bound $fold_after + $clients concurrent writers; $merged merged, bound 16 + $clients)"
else
	not_ok "live: deltas bounded by the automatic fold" "$pending pending, fold_after $fold_after; $merged merged"
fi
diag "$(grep -E '^(tps|latency average)' "$work/load.log" | tr '\n' ' ')"

# an immediate shutdown under the same load, a restart
"${pgbench_cmd[@]}" -T 60 "$db" >"$work/crash.log" 2>&1 &
load=$!
sleep 4
rows_before=$(rel_psql -d "$db" -c "SELECT count(*) FROM docs")
rel_pg_ctl stop-immediate
wait $load
if rel_pg_ctl start; then
	ok "live: restarted after an immediate shutdown under load"
	equal "$db" "after the immediate shutdown"
	write "$db"
	equal "$db" "after writes following the restart"
	diag "rows before the shutdown (one snapshot during the load): $rows_before; after: $(rel_psql -d "$db" -c 'SELECT count(*) FROM docs')"
else
	not_ok "live: restart after an immediate shutdown" "$(tail -20 "$REL_PGDATA/server.log")"
fi

# pg_dump and pg_restore
if "$REL_BIN/pg_dump" -Fc -f "$work/live.dump" "$db" 2>"$work/dump.log" &&
	rel_psql -c "CREATE DATABASE ${db}_restored" >/dev/null &&
	"$REL_BIN/pg_restore" -d "${db}_restored" "$work/live.dump" 2>>"$work/dump.log"; then
	ok "live: pg_dump -Fc and pg_restore"
	is "live: the restored live models are the dumped ones" \
		"$(rel_psql -d "${db}_restored" -c "SELECT string_agg(md5(nbc_model_send(nb_live(name))::text), ',' ORDER BY name) FROM nb_lives")" \
		"$(rel_psql -d "$db" -c "SELECT string_agg(md5(nbc_model_send(nb_live(name))::text), ',' ORDER BY name) FROM nb_lives")"
	equal "${db}_restored" "restored"
	write "${db}_restored"
	equal "${db}_restored" "after writes to the restored database"
else
	not_ok "live: pg_dump -Fc and pg_restore" "$(cat "$work/dump.log")"
fi

rel_finish
