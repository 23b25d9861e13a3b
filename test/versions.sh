#!/usr/bin/env bash
# nbc on other PostgreSQL major versions:  bash test/versions.sh [VERSION...]
#
# For each version (default "16 17 18"), obtains a server from Debian's archive
# and caches it under $NBC_PG_CACHE (default /var/cache/nbc-pg), so that only
# the first run pays for it:
#   18  the postgresql-18 source package (trixie/sid), built with ./configure
#       --prefix=$NBC_PG_CACHE/18 (about 4 min of make -j2 on 2 cores);
#   17  trixie's binary packages in a debootstrap chroot $NBC_PG_CACHE/17-root
#       (about 1 min); its source package is not served any more;
#   16  the postgresql-16 source package, when the archive still serves it.
# Then builds nbc against it in a copy of the tree (the source tree's PG15
# objects stay as they are), starts a throwaway cluster as user postgres, and
# runs pg_regress (make installcheck) and a short parity subset against it.
# The unit tests are pure C and do not depend on the server: test/run_all.sh
# runs them once.
#
# Prints TAP-like lines ("ok - pg17 pg_regress", "not ok - ...") and closes
# with "N passed, N failed".  A version that cannot be obtained (the archive
# does not serve it, no network) is reported LOUDLY as skipped, with why, and
# does not fail the run.  Exit status 1 when a check failed.
#
# NBC_PG_CACHE         where servers are cached (default /var/cache/nbc-pg)
# NBC_DEBIAN_MIRROR    the Debian archive to use (default: the one apt uses)
# NBC_VERSIONS_PARITY  parity.py/mixed.py subset: "mixed" (default: mixed.py
#                      without Fashion-MNIST, ~1 min) or "none"
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${NBC_PG_CACHE:-/var/cache/nbc-pg}
parity=${NBC_VERSIONS_PARITY:-mixed}
apt_dir=$cache/apt
# the Debian mirror this machine's apt is configured with (its main archive,
# not the security one), unless NBC_DEBIAN_MIRROR names another
debian=${NBC_DEBIAN_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
	grep -v -- '-security' | head -n 1)}
debian=${debian%/}

mkdir -p "$cache"
# every server here is one this script starts: none of the caller's libpq
# settings (test/run_all.sh runs it inside its PostgreSQL 15 cluster)
unset PGHOST PGPORT PGUSER PGDATABASE PGPASSWORD PGSERVICE PGOPTIONS PG_CONFIG

# apt_src ARGS...: apt-get with a private source list of deb-src entries, so
# the system's apt configuration is left as it is
apt_src() {
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/etc" "$apt_dir/cache/archives/partial"
	cat >"$apt_dir/etc/src.sources" <<-EOF
		Types: deb-src
		URIs: $debian
		Suites: trixie sid
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	apt-get -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/etc" \
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" "$@"
}

# obtain_source VERSION LOG: build postgresql-VERSION from Debian's source
# package into $cache/VERSION; on failure, sets why
obtain_source() {
	local v=$1 log=$2 prefix=$cache/$1 work tarball
	[ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.nbc-complete" ] && return 0
	[ -n "$debian" ] || { why="apt has no Debian mirror configured"; return 1; }
	: >"$log"
	# a version the archive did not serve is asked for again after a day only
	if [ -n "$(find "$cache/$v.unavailable" -mmin -1440 2>/dev/null)" ]; then
		why="$(cat "$cache/$v.unavailable") (checked $(date -r "$cache/$v.unavailable" '+%F %R'))"
		return 1
	fi
	work=$cache/build-$v
	rm -rf "$prefix"
	mkdir -p "$work"
	tarball=$(ls "$work"/postgresql-"$v"_*.orig.tar.* 2>/dev/null | head -n 1)
	if [ -z "$tarball" ]; then
		if ! apt_src -q update >>"$log" 2>&1; then
			why="apt-get update of Debian's source lists failed (no network?)"
			return 1
		fi
		if ! (cd "$work" && apt_src -q source --download-only "postgresql-$v") >>"$log" 2>&1; then
			why="Debian's archive does not serve the postgresql-$v source package"
			echo "$why" >"$cache/$v.unavailable"
			rm -rf "$work"
			return 1
		fi
	fi
	# release tarballs since 18 leave the parsers and scanners to be generated
	if ! command -v bison >/dev/null || ! command -v flex >/dev/null; then
		if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q bison flex >>"$log" 2>&1; then
			why="bison and flex, needed to build postgresql-$v, could not be installed"
			return 1
		fi
	fi
	tarball=$(ls "$work"/postgresql-"$v"_*.orig.tar.* 2>/dev/null | head -n 1)
	if [ -z "$tarball" ]; then
		why="no upstream tarball in the postgresql-$v source package"
		return 1
	fi
	rm -rf "$work"/postgresql-"$v".*/
	if ! (cd "$work" && tar xf "$tarball" && cd postgresql-"$v".*/ &&
		./configure --prefix="$prefix" --without-icu --without-readline --without-zlib &&
		make -j2 && make install) >>"$log" 2>&1; then
		why="building postgresql-$v failed (see $log)"
		return 1
	fi
	touch "$prefix/.nbc-complete"
	rm -rf "$work"
}

# obtain_chroot VERSION SUITE LOG: a minimal SUITE chroot with postgresql-VERSION
# and what building nbc needs, in $cache/VERSION-root; on failure, sets why
obtain_chroot() {
	local v=$1 suite=$2 log=$3 r=$cache/$1-root m
	[ -f "$r/.nbc-complete" ] && return 0
	[ -n "$debian" ] || { why="apt has no Debian mirror configured"; return 1; }
	: >"$log"
	if ! command -v debootstrap >/dev/null; then
		if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q debootstrap >>"$log" 2>&1; then
			why="debootstrap could not be installed"
			return 1
		fi
	fi
	# what an interrupted run left: never remove files through a mount
	for m in "$r/proc" "$r/dev/shm"; do
		mountpoint -q "$m" && umount -l "$m"
	done
	rm -rf --one-file-system "$r"
	if ! debootstrap --variant=minbase "$suite" "$r" "$debian" >>"$log" 2>&1; then
		rm -rf --one-file-system "$r"
		why="debootstrap of Debian $suite failed (no network?)"
		return 1
	fi
	# no service starts inside the chroot while packages install
	printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
	chmod +x "$r/usr/sbin/policy-rc.d"
	if ! chroot_mount "$r" ||
		! chroot "$r" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
			--no-install-recommends "postgresql-$v" "postgresql-server-dev-$v" make gcc libc6-dev \
			>>"$log" 2>&1; then
		chroot_umount "$r"
		why="installing postgresql-$v in the $suite chroot failed (see $log)"
		return 1
	fi
	chroot_umount "$r"
	chroot "$r" apt-get clean >/dev/null 2>&1
	touch "$r/.nbc-complete"
}

# the mounts this run made (/proc and /dev/shm, which parallel query needs, in
# the chroot), unmounted as soon as they are not needed and on any exit
mounted=()
chroot_mount() {
	local r=$1
	mountpoint -q "$r/proc" || { mount -t proc proc "$r/proc" && mounted+=("$r/proc"); } || return 1
	mkdir -p "$r/dev/shm"
	mountpoint -q "$r/dev/shm" || { mount -t tmpfs tmpfs "$r/dev/shm" && mounted+=("$r/dev/shm"); } || return 1
}
chroot_umount() {
	local m i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		[[ $m == "$1"/* ]] || continue
		umount "$m" 2>/dev/null || umount -l "$m"
		unset 'mounted[i]'
	done
	mounted=("${mounted[@]}")
}

# --- running the tests against one server ----------------------------------

work=$(mktemp -d /tmp/nbc-versions.XXXXXX)
chmod 755 "$work"
servers=()   # "pg_ctl DATADIR [CHROOT]" of every server started, to stop on exit

cleanup() {
	local s ctl data r
	for s in "${servers[@]}"; do
		read -r ctl data r <<<"$s"
		if [ -n "$r" ]; then
			chroot "$r" runuser -u postgres -- "$ctl" stop -D "$data" -m immediate >/dev/null 2>&1
		else
			runuser -u postgres -- "$ctl" stop -D "$data" -m immediate >/dev/null 2>&1
		fi
	done
	for s in "${mounted[@]}"; do
		umount "$s" 2>/dev/null || umount -l "$s" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

out=$work/tap
: >"$out"
say() {
	echo "$1" | tee -a "$out"
}

# free_port: a TCP port nobody listens on
free_port() {
	local port i
	for ((i = 0; i < 500; i++)); do
		port=$((56500 + RANDOM % 2000))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
		echo "$port"
		return
	done
	return 1
}

# copy_tree DEST: the sources of nbc, without the objects of the PG15 build,
# with what the pg_regress test upgrade reads from test/ (the root of the
# update chain, the catalog view)
copy_tree() {
	mkdir -p "$1"
	tar -C "$root" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=results --exclude=regression.diffs --exclude=regression.out \
		-cf - Makefile nbc.control src sql expected test/fixtures test/reliability/catalog.sql | tar -C "$1" -xf -
}

# in_server CMD...: run CMD where the server of the current version lives
# (its chroot, or this machine)
in_server() {
	if [ -n "$chroot_dir" ]; then
		chroot "$chroot_dir" "$@"
	else
		"$@"
	fi
}

# test_version VERSION: obtain, build, start, test; prints TAP-like lines
test_version() {
	local v=$1 bindir pg_config tree data port log=$work/pg$1.log rc
	chroot_dir= why=
	echo "=== PostgreSQL $v"
	case $v in
	17)
		obtain_chroot 17 trixie "$cache/obtain-17.log"
		chroot_dir=$cache/17-root bindir=/usr/lib/postgresql/17/bin
		;;
	*)
		obtain_source "$v" "$cache/obtain-$v.log"
		bindir=$cache/$v/bin
		;;
	esac
	if [ -n "$why" ] || { [ -n "$chroot_dir" ] && [ ! -f "$chroot_dir/.nbc-complete" ]; } ||
		{ [ -z "$chroot_dir" ] && [ ! -x "$bindir/pg_config" ]; }; then
		echo "#"
		echo "# !!! SKIPPED PostgreSQL $v: ${why:-it could not be obtained}"
		echo "# !!! nbc was NOT tested on PostgreSQL $v in this run"
		echo "#"
		skipped+=("$v (${why:-not obtained})")
		return 0
	fi
	pg_config=$bindir/pg_config
	echo "# $(in_server "$pg_config" --version)"

	# build and install nbc from a copy of the tree
	tree=/nbc-build-$v
	if [ -n "$chroot_dir" ]; then
		rm -rf "${chroot_dir:?}$tree"
		copy_tree "$chroot_dir$tree"
		chroot_mount "$chroot_dir" || {
			say "not ok - pg$v mount /proc and /dev/shm in the chroot"
			return 0
		}
	else
		tree=$work/nbc-$v
		copy_tree "$tree"
	fi
	if in_server make -C "$tree" -j2 PG_CONFIG="$pg_config" >"$log" 2>&1 &&
		in_server make -C "$tree" install PG_CONFIG="$pg_config" >>"$log" 2>&1; then
		say "ok - pg$v build and install nbc"
	else
		tail -n 30 "$log"
		say "not ok - pg$v build and install nbc"
		return 0
	fi
	grep -E 'warning:' "$log" | sed 's/^/# build: /'

	# a throwaway cluster as user postgres, on a free port, trusting local connections
	data=/tmp/nbc-pg$v-data
	port=$(free_port)
	in_server rm -rf "$data"
	if ! in_server runuser -u postgres -- "$bindir/initdb" -D "$data" -A trust -U postgres \
		--no-sync >>"$log" 2>&1; then
		tail -n 20 "$log"
		say "not ok - pg$v initdb"
		return 0
	fi
	servers+=("$bindir/pg_ctl $data $chroot_dir")
	if ! in_server runuser -u postgres -- "$bindir/pg_ctl" start -D "$data" -w -l "$data/server.log" \
		-o "-p $port -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off" >>"$log" 2>&1; then
		tail -n 20 "$log"
		in_server cat "$data/server.log" | tail -n 20
		say "not ok - pg$v start the server"
		return 0
	fi

	# pg_regress with this version's pg_regress and psql
	rc=0
	in_server env PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres \
		make -C "$tree" installcheck PG_CONFIG="$pg_config" >"$log" 2>&1 || rc=$?
	grep -E '\.\.\. |^ok |^not ok |tests passed|failed' "$log" | sed 's/^/# /'
	if [ "$rc" -eq 0 ]; then
		say "ok - pg$v pg_regress"
	else
		[ -n "$chroot_dir" ] && tree=$chroot_dir$tree
		[ -f "$tree/regression.diffs" ] && head -n 300 "$tree/regression.diffs"
		say "not ok - pg$v pg_regress"
	fi

	echo "# unit tests: not run here, they are pure C without the server (test/run_all.sh runs them once)"

	# a short parity subset, with this machine's scikit-learn, over TCP
	if [ "$parity" != none ]; then
		rc=0
		PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres PGDATABASE=postgres PGPASSWORD= \
			NBC_PARITY_SUITES=mixed NBC_MIXED_ARGS=--no-fashion \
			bash "$root/test/parity/run.sh" >"$log" 2>&1 || rc=$?
		sed 's/^/# /' "$log"
		if [ "$rc" -eq 0 ] && grep -qE '^ok ' "$log"; then
			say "ok - pg$v parity (mixed, without Fashion-MNIST)"
		else
			say "not ok - pg$v parity (mixed, without Fashion-MNIST)"
		fi
	fi

	in_server runuser -u postgres -- "$bindir/pg_ctl" stop -D "$data" -m fast >/dev/null 2>&1
	in_server rm -rf "$data" "$tree"
	[ -n "$chroot_dir" ] && chroot_umount "$chroot_dir"
	return 0
}

# one run at a time: they share the cache, the chroot's build tree and data paths
exec 9>"$cache/.lock"
flock 9

versions=("$@")
[ $# -gt 0 ] || versions=(16 17 18)
skipped=()
for v in "${versions[@]}"; do
	test_version "$v"
done

ok=$(grep -cE '^ok ' "$out")
bad=$(grep -cE '^not ok ' "$out")
if [ ${#skipped[@]} -gt 0 ]; then
	echo "#"
	for v in "${skipped[@]}"; do
		echo "# !!! SKIPPED PostgreSQL $v"
	done
	echo "#"
fi
echo "$ok passed, $bad failed"
[ "$bad" -eq 0 ]
