#!/usr/bin/env bash
# Peak memory of nbc's big operations, against the size of what they make
# and read; of preparing a model for scoring, against the model's size; of
# scoring and explaining a huge document, against the document; and of
# calls over a million classes (calibration scores, EM, nb_probability,
# nb_predict_proba, class_prior and sigmoid options), against the larger of
# 1 GB and 3x their input and result.
#
#   bash test/reliability/memory.sh          (libpq environment: PGHOST, PGPORT, ...)
#
# Runs on the same machine as the server, as a superuser role (COPY to and
# from server files) and as a user that may write /proc/<backend>/clear_refs
# (root or the server's user).  Per operation, in a fresh backend: set up,
# reset the backend's peak resident memory (writing 5 to clear_refs resets
# VmHWM to the current VmRSS), run the operation, read VmHWM.  Reports peak
# minus baseline as a ratio to (result + input) bytes and flags ratios above
# 3; a refused operation (an over-limit merge) counts its input only.
# Prints a TAP line per operation: "ok" within the bound of 3x (a document
# scored or explained: within what test/README.md states, see doc_bound).  The
# operations store what they make as users do: INSERT into a table (storage
# external, so that compression does not count), and COPY TO and FROM a
# file for the text form; PostgreSQL's own copies count too.
#
# Sizes follow the model size limit (the largest model whose text form fits
# in a PostgreSQL value, see nb_format.h); NBC_MEM_SCALE=0.25 runs all of
# them at a quarter of the size (the over-limit merge then fits).  Needs
# ~4 GB of free memory at full size.  Leaves nothing behind (works in schema
# nbc_mem, dropped at the end).  Exits 1 if an operation passed its bound.
set -uo pipefail

scale=${NBC_MEM_SCALE:-1}
# the text form goes through files the server writes and reads (a text value
# of 1 GB cannot be stored in a table: its row would be too large)
dir=$(mktemp -d /tmp/nbc-mem.XXXXXX)
chmod 777 "$dir"
trap 'rm -rf "$dir"' EXIT
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
psql_cmd=(psql -X -q -At -v ON_ERROR_STOP=0)

# The largest serialized model (NB_MODEL_MAX_SIZE in src/nb_format.h).
max_model=805306362
# A model of one row, text[] features ARRAY['a'] and a label of L bytes is
# L bytes larger than the same model with the label '' (measured, so that it
# follows the format: version 3 adds the document length histogram).
psql -X -q -c 'CREATE EXTENSION IF NOT EXISTS nbc' >/dev/null
overhead=$("${psql_cmd[@]}" -c "SELECT octet_length(nbc_model_send(nb_train('', ARRAY['a'])))")
sz() { awk -v s="$scale" -v n="$1" 'BEGIN { printf "%d", n * s }'; }

label_100mb=$(sz 100000000)
label_max=$(( $(sz $max_model) - overhead ))
# two models whose merge exceeds the limit by a little, two whose merge fits
label_over=$(( $(sz $max_model) / 2 - overhead + 64 ))
label_fit=$(( $(sz 350000000) - overhead ))
# one row of many distinct small tokens "t1", "t2", ...: the trainer's hash
# tables, not the strings, take most of its memory
n_tokens=$(sz 10000000)
# a text of about 100 MB of words (7 bytes each with its space) to tokenize
n_words=$(sz 14000000)
# models to prepare for scoring: distinct short tokens, each in one class of
# 2 or of 1,000 (the most items for their size: 28 bytes and the token's per
# item), and Gaussian features of 500 classes
n_prep=$(sz 2000000)
n_gauss=$(sz 2000)
# a document to score and explain: tokens of the 2-class model, every one known
n_doc=$(sz 5000000)
# a model of a million classes, one row each over 100 tokens, with a
# class_prior and a sigmoid naming every class; EM over n_em classes whose
# 20,000 labelled rows have about 63,000 distinct tokens (its dense counts
# per (token, class) were 16 bytes x 65,536 x n_em) and 20 unlabelled rows
n_classes=$(sz 1000000)
n_em=$(sz 5000)

"${psql_cmd[@]}" -v ON_ERROR_STOP=1 <<SQL || { echo "setup failed"; exit 1; }
CREATE EXTENSION IF NOT EXISTS nbc;
DROP SCHEMA IF EXISTS nbc_mem CASCADE;
CREATE SCHEMA nbc_mem;
-- labels of distinct bytes, so merged models keep two classes
CREATE TABLE nbc_mem.label (name text PRIMARY KEY, l text);
INSERT INTO nbc_mem.label VALUES
	('100mb', repeat('a', $label_100mb)),
	('max', repeat('b', $label_max)),
	('over1', repeat('c', $label_over)),
	('over2', repeat('d', $label_over)),
	('fit1', repeat('e', $label_fit)),
	('fit2', repeat('f', $label_fit));
CREATE TABLE nbc_mem.tokens (a text[]);
ALTER TABLE nbc_mem.tokens ALTER a SET STORAGE external;
INSERT INTO nbc_mem.tokens SELECT array_agg('t' || i) FROM generate_series(1, $n_tokens) i;
CREATE TABLE nbc_mem.body (body text);
ALTER TABLE nbc_mem.body ALTER body SET STORAGE external;
INSERT INTO nbc_mem.body SELECT string_agg('w' || (i % 50000), ' ') FROM generate_series(1, $n_words) i;
CREATE TABLE nbc_mem.model (name text PRIMARY KEY, m nb_model);
ALTER TABLE nbc_mem.model ALTER m SET STORAGE external;
INSERT INTO nbc_mem.model SELECT name, nb_train(l, ARRAY['a']) FROM nbc_mem.label
	WHERE name <> '100mb' GROUP BY name;
COPY (SELECT m FROM nbc_mem.model WHERE name = 'max') TO '$dir/max.txt';
CREATE TABLE nbc_mem.prep (name text PRIMARY KEY, m nb_model);
ALTER TABLE nbc_mem.prep ALTER m SET STORAGE external;
INSERT INTO nbc_mem.prep SELECT 'tokens, 2 classes', nb_train(l, a) FROM
	(SELECT (g % 2)::text l, array_agg('t' || i) a FROM generate_series(1, $n_prep) i,
		LATERAL (SELECT i / 10000 AS g) x GROUP BY g) s;
INSERT INTO nbc_mem.prep SELECT 'tokens, 1,000 classes', nb_train(l, a) FROM
	(SELECT 'c' || (g % 1000) l, array_agg('t' || i) a FROM generate_series(1, $n_prep) i,
		LATERAL (SELECT i / 200 AS g) x GROUP BY g) s;
INSERT INTO nbc_mem.prep SELECT 'Gaussian, 500 classes', nb_train('c' || (r % 500), f) FROM
	(SELECT r, jsonb_object_agg('f' || j, (r * 7 + j * 13) % 101 + 0.5) f
		FROM generate_series(1, 1000) r, generate_series(1, $n_gauss) j GROUP BY r) s;
CREATE TABLE nbc_mem.wide (m nb_model);
ALTER TABLE nbc_mem.wide ALTER m SET STORAGE external;
INSERT INTO nbc_mem.wide SELECT nb_train('c' || i, ARRAY['t' || (i % 100), 't' || (i % 7)])
	FROM generate_series(1, $n_classes) i;
CREATE TABLE nbc_mem.wide_classes AS SELECT array_agg('c' || i ORDER BY i) AS a
	FROM generate_series(1, $n_classes) i;
-- the wide model's first row, as a fold of it
CREATE TABLE nbc_mem.wide_fold AS SELECT nb_train('c1', ARRAY['t1', 't1']) AS f;
CREATE TABLE nbc_mem.wide_options AS
	SELECT jsonb_build_object('class_prior', jsonb_object_agg('c' || i, 1)) AS class_prior,
		jsonb_build_object('sigmoid', jsonb_object_agg('c' || i, jsonb_build_array(-1, 0))) AS sigmoid
	FROM generate_series(1, $n_classes) i;
CREATE TABLE nbc_mem.em AS
	SELECT 'c' || (i % $n_em) AS label,
		ARRAY(SELECT 't' || ((i * 7919 + j * 104729) % 100000) FROM generate_series(1, 5) j) AS tokens
	FROM generate_series(1, 20000) i
	UNION ALL SELECT NULL, ARRAY(SELECT 't' || ((i * 13 + j) % 100000) FROM generate_series(1, 5) j)
	FROM generate_series(1, 20) i;
CREATE TABLE nbc_mem.doc (a text[]);
ALTER TABLE nbc_mem.doc ALTER a SET STORAGE external;
INSERT INTO nbc_mem.doc SELECT array_agg('t' || (1 + i % $n_prep)) FROM generate_series(1, $n_doc) i;
SQL

# The size in bytes of a query's single value.
bytes() { "${psql_cmd[@]}" -c "$1"; }

flagged=0
tap=()
printf '%-34s %10s %10s %10s %7s\n' operation "input MB" "result MB" "peak MB" ratio

# peak_of SETUP_SQL OPERATION_SQL: the operation's peak above the backend's
# baseline after the setup in a fresh backend, into peak_kb, and into
# peak_failed 1 if it printed an error (else 0)
peak_kb=0
peak_failed=0
peak_of() {
	local setup=$1 op=$2 pid base peak out
	peak_failed=0
	coproc SESSION { "${psql_cmd[@]}" 2>&1; }
	echo "SELECT pg_backend_pid();" >&"${SESSION[1]}"
	read -r pid <&"${SESSION[0]}"
	echo "$setup" >&"${SESSION[1]}"
	echo '\echo __ready__' >&"${SESSION[1]}"
	while read -r out <&"${SESSION[0]}" && [ "$out" != __ready__ ]; do echo "  setup: $out"; done
	echo 5 >"/proc/$pid/clear_refs"
	base=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
	echo "$op" >&"${SESSION[1]}"
	echo '\echo __done__' >&"${SESSION[1]}"
	while read -r out <&"${SESSION[0]}" && [ "$out" != __done__ ]; do
		echo "  $out"
		[[ $out == *ERROR:* ]] && peak_failed=1
	done
	peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
	exec {SESSION[1]}>&-
	wait "$SESSION_PID" 2>/dev/null
	peak_kb=$(( peak - base ))
}

# measure NAME INPUT_BYTES RESULT_BYTES SETUP_SQL OPERATION_SQL [BOUND [TRIES]]
# (TRIES fresh backends, the smallest peak kept: where the bound sits within
# a fresh backend's noise of the peak, as a real excess shows in every try)
measure() {
	local name=$1 input=$2 result=$3 setup=$4 op=$5 bound=${6:-3} tries=${7:-1} kb ratio mark
	peak_of "$setup" "$op"
	kb=$peak_kb
	while [ "$tries" -gt 1 ] && [ "$peak_failed" = 0 ]; do
		peak_of "$setup" "$op"
		[ "$peak_kb" -lt "$kb" ] && kb=$peak_kb
		tries=$((tries - 1))
	done
	# a refused operation made nothing
	if [ "$peak_failed" = 1 ]; then result=0; name="$name (refused)"; fi
	ratio=$(awk -v p=$(( kb * 1024 )) -v d=$(( input + result )) 'BEGIN { printf "%.2f", p / d }')
	mark=""
	if awk -v r="$ratio" 'BEGIN { exit !(r > 3) }'; then mark="  > 3x"; flagged=$((flagged + 1)); fi
	if awk -v r="$ratio" -v b="$bound" 'BEGIN { exit !(r <= b) }'; then
		tap+=("ok - memory: $name: ${ratio}x of result + input (bound ${bound}x)")
	else
		tap+=("not ok - memory: $name: ${ratio}x of result + input, over its bound of ${bound}x")
	fi
	printf '%-34s %10.1f %10.1f %10.1f %7s%s\n' "$name" \
		"$(awk -v b="$input" 'BEGIN { print b / 1e6 }')" "$(awk -v b="$result" 'BEGIN { print b / 1e6 }')" \
		"$(awk -v b=$(( kb * 1024 )) 'BEGIN { print b / 1e6 }')" "$ratio" "$mark"
}

# The merged model of two such models shares the header (32 bytes), the
# token "a" (1), its length (4) and its entry count (4): 41 bytes less.
out_table="CREATE TEMP TABLE r (m nb_model); ALTER TABLE r ALTER m SET STORAGE external;"
msize() { bytes "SELECT octet_length(nbc_model_send(m)) FROM nbc_mem.model WHERE name = '$1'"; }

measure "train, 100 MB label" "$label_100mb" $((label_100mb + overhead)) "$out_table" \
	"INSERT INTO r SELECT nb_train(l, ARRAY['a']) FROM nbc_mem.label WHERE name = '100mb';"
measure "train, largest model" "$label_max" "$(msize max)" "$out_table" \
	"INSERT INTO r SELECT nb_train(l, ARRAY['a']) FROM nbc_mem.label WHERE name = 'max';"
# the text form as pg_dump writes and restores it: COPY, text format
# label "x", n tokens: the model of label '' and token "a", plus the label's
# byte, less the token's, plus per further token 4 + 4 and an entry 4 + 8 + 8,
# plus the tokens' bytes
token_bytes=$(bytes "SELECT sum(length('t' || i)) FROM generate_series(1, $n_tokens) i")
# The trainer's item map is most of this (nb_vocab.h, nb_trainer.h): 2.77x
# at a quarter of the size; with 64-byte slots at most half full it was 9.4x.
measure "train, $n_tokens small tokens" "$(bytes "SELECT pg_column_size(a) FROM nbc_mem.tokens")" \
	$(( overhead + (n_tokens - 1) * (8 + 20) + token_bytes )) "$out_table" \
	"INSERT INTO r SELECT nb_train('x', a) FROM nbc_mem.tokens;"
# a text tokenized (nb_tokens' text[] the result): the detoasted text, its
# lowercased copy and the result
body_bytes=$(bytes "SELECT octet_length(body) FROM nbc_mem.body")
measure "nb_tokens, $((body_bytes / 1000000)) MB text" "$body_bytes" \
	"$(bytes "SELECT pg_column_size(nb_tokens(body)) FROM nbc_mem.body")" \
	"CREATE TEMP TABLE t (a text[]); ALTER TABLE t ALTER a SET STORAGE external;" \
	"INSERT INTO t SELECT nb_tokens(body) FROM nbc_mem.body;"
text_len=$(( $(stat -c %s "$dir/max.txt") - 1 ))
measure "output: COPY TO, largest model" "$(msize max)" "$text_len" "" \
	"COPY (SELECT m FROM nbc_mem.model WHERE name = 'max') TO '$dir/out.txt';"
rm -f "$dir/out.txt"
measure "input: COPY FROM, largest model" "$text_len" "$(msize max)" "$out_table" \
	"COPY r FROM '$dir/max.txt';"
over_sum=$(( $(msize over1) + $(msize over2) ))
measure "merge over the limit" "$over_sum" "$(( over_sum - 41 ))" "$out_table" \
	"INSERT INTO r SELECT nb_merge(a.m, b.m) FROM nbc_mem.model a, nbc_mem.model b WHERE a.name = 'over1' AND b.name = 'over2';"
fit_sum=$(( $(msize fit1) + $(msize fit2) ))
measure "merge of two that fit" "$fit_sum" "$(( fit_sum - 41 ))" "$out_table" \
	"INSERT INTO r SELECT nb_merge(a.m, b.m) FROM nbc_mem.model a, nbc_mem.model b WHERE a.name = 'fit1' AND b.name = 'fit2';"

# nb_metrics of as many labels as it allows (2,047 besides the one it keeps
# for NULL): its result is mostly the confusion matrix, about 20 bytes a
# cell, written in place (it was a tree of about 150 bytes a cell); at every
# scale, since it takes a second; the setup loads nbc
n_labels=2047
metrics_rows="SELECT 'l' || i AS actual, 'l' || (i * 7 % $n_labels) AS predicted FROM generate_series(1, $n_labels) i"
measure "nb_metrics, $n_labels labels" \
	"$(bytes "SELECT sum(octet_length(actual) + octet_length(predicted)) FROM ($metrics_rows) r")" \
	"$(bytes "SELECT pg_column_size(nb_metrics(actual, predicted)) FROM ($metrics_rows) r")" \
	"CREATE TEMP TABLE j (a jsonb); ALTER TABLE j ALTER a SET STORAGE external;"$'\n\\o /dev/null\n'"SELECT nb_metrics('a', 'b');"$'\n\\o' \
	"INSERT INTO j SELECT nb_metrics(actual, predicted) FROM ($metrics_rows) r;"

# nb_grid_options of the largest grid it takes, 100 values of each of two
# keys (10,000 option sets), stored as rows of jsonb; and of a grid of 300
# numbers over three keys (a million combinations), refused before any is
# made.  Each within 3x of the grid and the result, plus what PostgreSQL
# itself takes to store 10,000 rows of the same objects made without nbc
# (its executor, the rows' tuples), plus what the first call of
# nb_grid_options takes in a fresh backend on a grid of one set (PL/pgSQL
# compiling it, the catalog's caches).  At every scale.
grid_sql="(SELECT jsonb_build_object('alpha', jsonb_agg(i / 100.0), 'var_smoothing', jsonb_agg(i * 1e-10)) FROM generate_series(1, 100) i)"
grid3_sql="(SELECT jsonb_build_object('alpha', jsonb_agg(i / 100.0), 'var_smoothing', jsonb_agg(i * 1e-10), 'fit_prior', jsonb_agg(i % 2 = 0)) FROM generate_series(1, 100) i)"
grid_table="CREATE TEMP TABLE g (o jsonb); ALTER TABLE g ALTER o SET STORAGE external;"
grid_bytes=$(bytes "SELECT pg_column_size($grid_sql)")
grid_result=$(bytes "SELECT sum(pg_column_size(o)) FROM nb_grid_options($grid_sql) o")
# (each the largest of three fresh backends: one backend's peak varies by
# tens of kilobytes, which moved the bound by a third of a unit)
largest_peak() {
	largest_bytes=0
	for _ in 1 2 3; do
		peak_of "$1" "$2"
		if [ $(( peak_kb * 1024 )) -gt "$largest_bytes" ]; then
			largest_bytes=$(( peak_kb * 1024 ))
		fi
	done
}
largest_peak "$grid_table" "INSERT INTO g SELECT jsonb_build_object('alpha', a / 100.0, 'var_smoothing', v * 1e-10) FROM generate_series(1, 100) a, generate_series(1, 100) v;"
grid_own=$largest_bytes
largest_peak "$grid_table" "INSERT INTO g SELECT nb_grid_options('{}');"
grid_first=$largest_bytes
grid_bound() {
	awk -v own="$grid_own" -v first="$grid_first" -v d="$1" 'BEGIN { printf "%.2f", (own + first + 3 * d) / d }'
}
echo "# the grid's rows made without nbc: $grid_own bytes; a first call on a grid of one set: $grid_first bytes"
measure "nb_grid_options, 10,000 sets" "$grid_bytes" "$grid_result" "$grid_table" \
	"INSERT INTO g SELECT nb_grid_options($grid_sql);" "$(grid_bound $(( grid_bytes + grid_result )))" 3
grid3_bytes=$(bytes "SELECT pg_column_size($grid3_sql)")
measure "nb_grid_options, a million sets" "$grid3_bytes" 0 "$grid_table" \
	"INSERT INTO g SELECT nb_grid_options($grid3_sql);" "$(grid_bound "$grid3_bytes")"

# Preparing a model for scoring (nbc.prepared_model_cache = 0: each query
# prepares it; the setup's query loads nbc and prepares it once): the
# model's bytes fetched (kept: the key that recognizes it byte for byte),
# its index and the scorer of the default options, within 3x the model.
mapfile -t prep < <(bytes "SELECT name, octet_length(nbc_model_send(m)) FROM nbc_mem.prep ORDER BY name DESC")
for row in "${prep[@]}"; do
	IFS='|' read -r name model <<<"$row"
	score="SELECT nb_predict(m, CASE WHEN name LIKE 'Gaussian%' THEN '{\"f1\": 1}' ELSE '{\"\": [\"t1\"]}' END::jsonb) IS NULL FROM nbc_mem.prep WHERE name = '$name';"
	score=$'\\o /dev/null\n'"$score"$'\n\\o'
	measure "prepare: $name" "$model" 0 "SET nbc.prepared_model_cache = 0;"$'\n'"$score" "$score"
done

# Scoring and explaining a document of n_doc tokens, every one known, with
# the 2-class model prepared in the setup: against the document's stored
# bytes, within what test/README.md states (Reliability): PostgreSQL's own
# detoasting of the argument (measured here: the peak of cardinality() of
# it), the model's stored bytes (fetched to find its prepared form), and 64
# bytes per known occurrence (its item in the document, 24 bytes, whose room
# doubles as it grows); nb_explain 40 more (its row of the result, before
# the result's rows, which spill to disk past work_mem).
doc_bytes=$(bytes "SELECT pg_column_size(a) FROM nbc_mem.doc")
peak_of "SELECT 1;" "SELECT cardinality(a) IS NULL FROM nbc_mem.doc;"
doc_own=$(( peak_kb * 1024 ))
model2="(SELECT m FROM nbc_mem.prep WHERE name = 'tokens, 2 classes')"
model2_bytes=$(bytes "SELECT pg_column_size(m) FROM nbc_mem.prep WHERE name = 'tokens, 2 classes'")
doc_bound() {
	awk -v own="$doc_own" -v m="$model2_bytes" -v per="$1" -v n="$n_doc" -v d="$doc_bytes" \
		'BEGIN { printf "%.2f", (own + m + per * n) / d }'
}
echo "# the document: $doc_bytes bytes stored, PostgreSQL's own detoasting of it $doc_own bytes"
prepared="SET nbc.prepared_model_cache = '1GB';"$'\n\\o /dev/null\n'"SELECT nb_predict($model2, ARRAY['t1']);"$'\n\\o'
measure "nb_predict, $n_doc-token document" "$doc_bytes" 0 "$prepared" \
	$'\\o /dev/null\n'"SELECT nb_predict($model2, a) IS NULL FROM nbc_mem.doc;"$'\n\\o' "$(doc_bound 64)"
measure "nb_explain, $n_doc-token document" "$doc_bytes" 0 "$prepared" \
	"SELECT count(*) > 0 FROM nbc_mem.doc, nb_explain($model2, a);" "$(doc_bound 104)"

# Many classes (issue #40): each call within the larger of 1 GB and 3x its
# input and result, which no call of nbc may pass; memory that grows with
# the classes is refused (54000) before it is taken.  The calibration
# aggregate over 1,100 rows of n_classes classes (scored by the wide model
# minus one row of it, the fold's) is refused at its limit of 256 MB of rows (it reserved 1,024 rows of 1 + classes doubles at
# its first row, and passed 8 GB at a million classes); EM over n_em
# classes, 2 iterations, against its input only.
wide_bound() {
	awk -v d="$1" 'BEGIN { b = 1073741824 / d; printf "%.2f", (b > 3 ? b : 3) }'
}
wide_model=$(bytes "SELECT pg_column_size(m) FROM nbc_mem.wide")
wide_classes=$(bytes "SELECT pg_column_size(a) FROM nbc_mem.wide_classes")
no_cache="SET nbc.prepared_model_cache = 0;"
measure "calibration scores, $n_classes classes" $(( wide_model + wide_classes )) 0 "$no_cache" \
	"SELECT nbc_calibration(0, ARRAY['t1'], 'c1', w.m, ARRAY[f.f], ARRAY[0], c.a, NULL, 'auto') IS NULL FROM nbc_mem.wide w, nbc_mem.wide_fold f, nbc_mem.wide_classes c, generate_series(1, 1100);" \
	"$(wide_bound $(( wide_model + wide_classes )))"
em_bytes=$(bytes "SELECT sum(pg_column_size(label) + pg_column_size(tokens)) FROM nbc_mem.em")
measure "nb_train_em, $n_em classes" "$em_bytes" 0 "" \
	"SELECT nb_info(nb_train_em('nbc_mem.em', 'label', 'tokens', '{\"iterations\": 2}')) IS NULL;" \
	"$(wide_bound "$em_bytes")"
measure "nb_probability, $n_classes classes" "$wide_model" 0 "$no_cache" \
	"SELECT nb_probability(m, ARRAY['t1'], 'c1') IS NULL FROM nbc_mem.wide;" "$(wide_bound "$wide_model")"
proba_bytes=$(bytes "SELECT pg_column_size(nb_predict_proba(m, ARRAY['t1'])) FROM nbc_mem.wide")
measure "nb_predict_proba, $n_classes classes" "$wide_model" "$proba_bytes" "$no_cache" \
	"SELECT pg_column_size(nb_predict_proba(m, ARRAY['t1'])) IS NULL FROM nbc_mem.wide;" \
	"$(wide_bound $(( wide_model + proba_bytes )))"
for option in class_prior sigmoid; do
	option_bytes=$(bytes "SELECT pg_column_size($option) FROM nbc_mem.wide_options")
	measure "$option of $n_classes classes" $(( wide_model + option_bytes )) 0 "$no_cache" \
		"SELECT nb_predict(m, ARRAY['t1'], $option) IS NULL FROM nbc_mem.wide, nbc_mem.wide_options;" \
		"$(wide_bound $(( wide_model + option_bytes )))"
done

"${psql_cmd[@]}" -c "DROP SCHEMA nbc_mem CASCADE"
echo "# $flagged operation(s) above 3x (scale $scale)"
printf '%s\n' "${tap[@]}"
! printf '%s\n' "${tap[@]}" | grep -q '^not ok'

