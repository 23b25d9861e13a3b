#!/usr/bin/env bash
# Parity of nbc against scikit-learn on real data:
#
#   bash test/parity/run.sh [parity.py options]
#
# Assumes the libpq environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD,
# PGDATABASE) point at a database where it may create tables, with nbc
# installed (make install); it runs CREATE EXTENSION IF NOT EXISTS nbc.
# Seven suites, each printing one "ok - ..." / "not ok - ..." line per check:
#   parity.py  token bags: loads SpamAssassin (test/data/load_spamassassin.py,
#              which runs test/data/fetch_data.sh if the corpus is not cached
#              yet) and Reuters Grain (test/data/load_reuters.py, from
#              Debian's weka package);
#   mixed.py   jsonb and float8[] features (categorical, Gaussian, boolean,
#              missing values): loads test/data/load_mixed.py (scikit-learn's
#              bundled iris, wine, breast_cancer, digits; Weka's weather,
#              vote, soybean, credit-g; Debian's dataset-fashion-mnist);
#   dcm.py     kind "dcm" against an independent implementation from the
#              papers (dcm_ref.py: numpy/scipy) on SpamAssassin and Reuters
#              Grain: parameters, posteriors, merged models;
#   metrics.py nb_metrics against sklearn.metrics on predictions of models of
#              SpamAssassin, Reuters Grain, digits, wine and soybean (loads
#              what the suites before it did not);
#   crossval.py nb_cross_validate against scikit-learn's cross_validate with
#              the same folds: SpamAssassin, Reuters Grain, and iris, wine and
#              breast_cancer as float8[] and jsonb (loads the same way);
#   tokens.py  nb_tokens against CountVectorizer's analyzers, element for
#              element: SpamAssassin and Debian's Russian and Chinese fortunes
#              (test/data/load_fortunes.py) under a grid of options, and every
#              code point;
#   text_pipeline.py from raw text to probabilities: nb_train(label, body,
#              tokenizer) and the scoring functions given text against
#              scikit-learn's Pipeline(CountVectorizer, MultinomialNB /
#              BernoulliNB / ComplementNB) on SpamAssassin and the fortunes;
#   em.py      nb_train_em_trace against an independent numpy implementation
#              of EM (Nigam et al. 2000) on SpamAssassin and Reuters Grain
#              with 5% of the labels: every iteration's posteriors and log
#              likelihood; and nb_cross_validate_em's rows for a lambda grid
#              (3 folds, multinomial and Bernoulli): every fold's EM, its
#              metrics, their means, the gain and its standard error, and
#              the lambda chosen.
#   calibration.py nb_calibrate's temperature and sigmoid against
#              scikit-learn's CalibratedClassifierCV and numpy/scipy fits on
#              SpamAssassin, Reuters Grain and the fortunes, and the held-out
#              log loss and Brier score against uncalibrated and sklearn's.
# Each suite's own closing count becomes a "# ..." comment; the output closes
# with one "N passed, N failed" over both.  Exit status 1 if anything failed,
# including a loader or a suite that exited non-zero without a failed check.
#
# Needs: python3-sklearn python3-pandas python3-psycopg2 python3-mpmath weka npm
# dataset-fashion-mnist fortunes-ru fortunes-zh (test/setup.sh installs them).
# NBC_PARITY_SKIP_LOAD=1 reuses already loaded tables; NBC_PARITY_SUITES
# (default "parity mixed dcm metrics crossval tokens text em calibration") runs a subset; NBC_MIXED_ARGS passes options to
# mixed.py (e.g. "--no-fashion"); NBC_PYTHON overrides /usr/bin/python3 (the
# interpreter that sees sklearn).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/../data
py=${NBC_PYTHON:-/usr/bin/python3}
suites=${NBC_PARITY_SUITES:-parity mixed dcm metrics crossval tokens text em calibration}

log=$(mktemp /tmp/nbc-parity.XXXXXX)
out=$(mktemp /tmp/nbc-parity-out.XXXXXX)
trap 'rm -f "$log" "$out"' EXIT

# say LINE: print LINE and keep it for the closing count
say() {
	echo "$1" | tee -a "$out"
}

# finish: the closing count over every check line printed so far
finish() {
	local ok bad
	ok=$(grep -cE '^ok([[:space:]]|$)' "$out" || true)
	bad=$(grep -cE '^not ok([[:space:]]|$)' "$out" || true)
	echo "$ok passed, $bad failed"
	[ "$bad" -eq 0 ]
	exit
}

# load LOADER [ARGS...]: run a loader; on failure report it as one failed check
load() {
	local loader=$1
	shift
	if "$py" "$data/$loader" "$@" >"$log" 2>&1; then
		sed 's/^/# /' "$log"
		return 0
	fi
	say "not ok - test/data/$loader: $(tail -n 3 "$log" | tr '\n' ' ')"
	return 1
}

# run_suite SCRIPT [ARGS...]: run a suite, its closing count turned into a comment
run_suite() {
	local script=$1 rc before
	shift
	before=$(wc -l <"$out")
	"$py" "$here/$script" "$@" 2>&1 |
		sed -u -E "s/^([0-9]+ passed, [0-9]+ failed.*)$/# $script: \1/" | tee -a "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && ! tail -n +$((before + 1)) "$out" | grep -qE '^not ok([[:space:]]|$)'; then
		say "not ok - $script exited with status $rc"
	fi
}

if ! psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' \
	-c 'CREATE EXTENSION IF NOT EXISTS nbc' >"$log" 2>&1; then
	say "not ok - CREATE EXTENSION nbc: $(tail -n 3 "$log" | tr '\n' ' ')"
	finish
fi

# load_text, load_mixed, load_fortunes: the loaders of the token, mixed and
# fortune data sets, once
text_loaded=${NBC_PARITY_SKIP_LOAD:-0}
mixed_loaded=${NBC_PARITY_SKIP_LOAD:-0}
fortunes_loaded=${NBC_PARITY_SKIP_LOAD:-0}
load_text() {
	[ "$text_loaded" = 1 ] && return 0
	load load_spamassassin.py && load load_reuters.py && text_loaded=1
}
load_mixed() {
	[ "$mixed_loaded" = 1 ] && return 0
	load load_mixed.py "$@" && mixed_loaded=1
}
load_fortunes() {
	[ "$fortunes_loaded" = 1 ] && return 0
	load load_fortunes.py && fortunes_loaded=1
}

for suite in $suites; do
	case $suite in
	parity)
		load_text && run_suite parity.py "$@"
		;;
	mixed)
		mixed_args=()
		read -r -a mixed_args <<<"${NBC_MIXED_ARGS:-}"
		loader_args=()
		for a in "${mixed_args[@]}"; do
			[ "$a" = --no-fashion ] && loader_args+=(--no-fashion)
		done
		if load_mixed "${loader_args[@]}"; then
			run_suite mixed.py "${mixed_args[@]}"
		fi
		;;
	dcm)
		load_text && run_suite dcm.py
		;;
	metrics)
		load_text && load_mixed --no-fashion && run_suite metrics.py
		;;
	crossval)
		load_text && load_mixed --no-fashion && run_suite crossval.py
		;;
	tokens)
		load_text && load_fortunes && run_suite tokens.py
		;;
	text)
		load_text && load_fortunes && run_suite text_pipeline.py
		;;
	em)
		load_text && run_suite em.py
		;;
	calibration)
		load_text && load_fortunes && run_suite calibration.py
		;;
	*)
		say "not ok - NBC_PARITY_SUITES: unknown suite '$suite' (parity, mixed, dcm, metrics, crossval, tokens, text, em, calibration)"
		;;
	esac
done
finish
