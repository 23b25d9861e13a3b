#!/bin/sh
# cross-pg.sh ARCH — run by cross.sh beside the unit tests of ARCH (aarch64,
# s390x): the extension itself (the PGXS build of the top Makefile) compiled
# and linked for ARCH by ARCH-linux-gnu-gcc with -Werror, against PostgreSQL
# 15's headers and PGXS files for ARCH (Makefile.global: its CFLAGS, such as
# aarch64's -moutline-atomics).  Prints one line: "ok - ARCH: ...",
# "not ok - ...", or "# SKIP ..." when the packages cannot be obtained.
#
# Debian cannot install postgresql-server-dev-15:arm64 beside the amd64 one:
# the package is not Multi-Arch (the same paths) and would pull arm64 clang
# and llvm.  So its .deb and postgresql-client-15's (which holds PGXS) are
# downloaded by apt-get with ARCH's as the only architecture and a private
# state (lists and cache), unpacked by dpkg-deb -x into $cache/root, and a
# pg_config there answers PostgreSQL 15's paths rewritten into it.  The
# system's apt configuration and PostgreSQL installation stay as they are.
# The tree is built in a copy (its own objects stay x86-64).  The first run
# downloads about 12 MB (lists and packages); later ones use the cache.
#
# NBC_PG_CACHE    the cache's parent, as test/versions.sh's (/var/cache/nbc-pg)
# NBC_PG_CONFIG   the amd64 PostgreSQL 15 pg_config (/usr/lib/postgresql/15/bin/pg_config)
arch=${1:?usage: cross-pg.sh ARCH}
# Debian's name of the architecture, and the bytes 18 and 19 of its ELF
# header (e_machine in its byte order: EM_AARCH64 183, EM_S390 22)
case $arch in
aarch64) debian=arm64 machine="183 0" ;;
s390x) debian=s390x machine="0 22" ;;
*)
	echo "cross-pg.sh: unknown architecture $arch" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/../.." || exit 2
cache=${NBC_PG_CACHE:-/var/cache/nbc-pg}/15-$debian
pg_config=${NBC_PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
name="$arch: the extension compiles and links without a warning against PostgreSQL 15's $debian headers"

if ! command -v "$arch-linux-gnu-gcc" >/dev/null 2>&1 || [ ! -x "$pg_config" ]; then
	echo "# SKIP $name: $arch-linux-gnu-gcc or $pg_config is not installed"
	exit 0
fi

# one run at a time per cache (the test suites of several trees may share it)
mkdir -p "$cache" 2>/dev/null
if [ ! -w "$cache" ]; then
	echo "# SKIP $name: cannot write $cache"
	exit 0
fi
exec 9>"$cache/.lock"
flock 9

# obtain: ARCH's packages unpacked into $cache/root; on failure, sets why
obtain() {
	[ -f "$cache/root/.complete" ] && return 0
	rm -rf "$cache/root" "$cache/debs"
	mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/debs"
	set -- -q -o APT::Architecture="$debian" -o APT::Architectures::="$debian" \
		-o Dir::State::Lists="$cache/lists" -o Dir::Cache="$cache" -o Dir::Cache::archives="$cache/archives"
	if ! apt-get "$@" update >"$cache/obtain.log" 2>&1; then
		why="apt-get update of the $debian lists failed (no network?), see $cache/obtain.log"
		return 1
	fi
	if ! (cd "$cache/debs" && apt-get "$@" download postgresql-server-dev-15 postgresql-client-15) \
		>>"$cache/obtain.log" 2>&1; then
		why="the archive does not serve postgresql-server-dev-15 and postgresql-client-15 for $debian, see $cache/obtain.log"
		return 1
	fi
	for deb in "$cache"/debs/*.deb; do
		dpkg-deb -x "$deb" "$cache/root" || {
			why="cannot unpack $deb"
			return 1
		}
	done
	touch "$cache/root/.complete"
}

if ! obtain; then
	echo "# SKIP $name: $why"
	exit 0
fi
cat >"$cache/pg_config" <<-PG_CONFIG
	#!/bin/sh
	"$pg_config" "\$@" | sed 's|^/usr/|$cache/root/usr/|'
PG_CONFIG
chmod +x "$cache/pg_config"

tree=$(mktemp -d "/tmp/nbc-$arch.XXXXXX")
trap 'rm -rf "$tree"' EXIT
cp -r Makefile nbc.control src sql "$tree"/
rm -f "$tree"/src/*.o "$tree"/src/*.bc "$tree"/src/workflows/*.o "$tree"/src/workflows/*.bc "$tree"/*.so
# with_llvm=no: the JIT's bitcode is compiled by the host's clang, not the
# cross compiler; COPT is PGXS's way to add to CFLAGS
if ! make -s -C "$tree" PG_CONFIG="$cache/pg_config" CC="$arch-linux-gnu-gcc" with_llvm=no \
	COPT=-Werror >"$tree/build.log" 2>&1; then
	echo "not ok - $name: $(grep -m 1 -E 'error|warning' "$tree/build.log")"
	sed 's/^/# /' "$tree/build.log" | head -n 40
	exit 1
fi
if [ "$(od -An -tu1 -j18 -N2 "$tree/nbc.so" | tr -s ' ' | sed 's/^ //')" != "$machine" ]; then
	echo "not ok - $name: nbc.so is not an ELF object for $arch"
	exit 1
fi
echo "ok - $name"
