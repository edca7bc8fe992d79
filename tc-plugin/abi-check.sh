#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# abi-check.sh [PLUGIN.so]
#
# Checks iproute2.h, the plugin's copy of iproute2's declarations, against
# iproute2's own headers: compiles abi-check.c against each iproute2 source
# tree, which fails on any difference in layout, enum value or prototype.
#   iproute2 6.1   Debian 12 (bookworm), the /usr/sbin/tc there: required
#   iproute2 6.15  bookworm-backports: checked when its source can be
#                  fetched, else skipped with a note
# With PLUGIN.so, also checks that the functions abi-check.c compares are
# exactly those the plugin takes from tc (its undefined symbols), that each
# tc binary exports all of them, that q_tdmwin.c uses every inline
# iproute2.h copies, and that the plugin exports only tdmwin_qdisc_util.
#
# The Debian sources come from `apt-get source` through a private sources
# list and lists folder under $TDMWIN_CACHE/iproute2 (default
# ~/.cache/tdmwin); the machine's apt configuration is not touched.  They are
# fetched once and kept.
#
# Environment:
#   TDMWIN_CACHE	cache folder (default ~/.cache/tdmwin)
#   DEBIAN_MIRROR	default http://deb.debian.org/debian
#   IPROUTE2_SRC	check these source trees (space-separated) instead of
#			fetching
#   TC			tc binaries for the export check, space-separated
#			(default /usr/sbin/tc, iproute2 6.1 on Debian 12, and
#			$TDMWIN_CACHE/tc-new, the 6.15 testbed/guest/setup
#			fetches, if it is there)
#   CC			compiler (default cc)
#
# Prints one ok / not ok / skip line per check and "N passed, N failed,
# N skipped"; exits non-zero if any check failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${TDMWIN_CACHE:-$HOME/.cache/tdmwin}/iproute2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
tcs=${TC:-/usr/sbin/tc ${TDMWIN_CACHE:-$HOME/.cache/tdmwin}/tc-new}
cc=${CC:-cc}
plugin=${1:-}
pass=0 fail=0 skip=0

ok()     { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }
skip()   { skip=$((skip + 1)); echo "skip - $*"; }

apt_opts=(-q -o Dir::Etc::SourceParts=/dev/null
	  -o Dir::Etc::sourcelist="$cache/sources.list"
	  -o Dir::State::Lists="$cache/lists"
	  -o Dir::Cache="$cache/apt-cache")
# Downloads run as _apt when apt starts as root; it cannot write our cache.
[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

# The private source index, refreshed at most once per run.
updated=
update_lists() {
	[ -n "$updated" ] && return 0
	updated=1
	mkdir -p "$cache/lists/partial" "$cache/apt-cache/archives/partial"
	local signed=
	[ -r "$keyring" ] && signed="[signed-by=$keyring] "
	cat >"$cache/sources.list" <<-EOF
		deb-src $signed$mirror bookworm main
		deb-src $signed$mirror bookworm-backports main
	EOF
	apt-get "${apt_opts[@]}" update >"$cache/update.log" 2>&1
}

# fetch SUITE: unpack iproute2's upstream tarball from SUITE into
# $cache/SUITE/src (headers only matter; Debian's patches do not touch them)
# and print that path.
fetch() {
	local suite=$1 dir=$cache/$1
	if [ -f "$dir/src/tc/tc_util.h" ]; then
		echo "$dir/src"
		return 0
	fi
	command -v apt-get >/dev/null || return 1
	rm -rf "$dir" && mkdir -p "$dir/dl" "$dir/src" || return 1
	update_lists || return 1
	(cd "$dir/dl" && apt-get "${apt_opts[@]}" source --download-only \
		"iproute2/$suite") >"$dir/fetch.log" 2>&1 || return 1
	tar -xf "$dir"/dl/iproute2_*.orig.tar.* -C "$dir/src" \
		--strip-components=1 >>"$dir/fetch.log" 2>&1 || return 1
	[ -f "$dir/src/tc/tc_util.h" ] && echo "$dir/src"
}

version_of() { # source tree
	sed -n 's/.*version\[\] = "\(.*\)".*/\1/p' "$1/include/version.h" 2>/dev/null
}

# check SRC: compile abi-check.c against the iproute2 tree SRC.
check() {
	local src=$1 ver log qual
	ver=$(version_of "$src")
	log=$(mktemp)
	if grep -q 'parse_qopt)(const struct qdisc_util' "$src/tc/tc_util.h"; then
		qual="const struct qdisc_util * callbacks"
	else
		qual="struct qdisc_util * callbacks"
	fi
	if "$cc" -std=gnu11 -fsyntax-only -Wall -Werror \
		-I"$src/include" -I"$src/include/uapi" -I"$src/tc" \
		-I"$here" "$here/abi-check.c" >"$log" 2>&1; then
		ok "iproute2.h matches iproute2 ${ver:-?} ($qual) in $src"
	else
		not_ok "iproute2.h differs from iproute2 ${ver:-?} in $src:"
		grep -E 'error|warning|note' "$log" | sed 's/^/#   /' | head -40
	fi
	rm -f "$log"
}

if [ -n "${IPROUTE2_SRC:-}" ]; then
	for src in $IPROUTE2_SRC; do
		check "$src"
	done
else
	if src=$(fetch bookworm); then
		check "$src"
	else
		not_ok "iproute2 source for bookworm not fetched (see $cache/bookworm/fetch.log or $cache/update.log)"
		tail -n 5 "$cache/bookworm/fetch.log" "$cache/update.log" 2>/dev/null |
			sed 's/^/#   /'
	fi
	if src=$(fetch bookworm-backports); then
		check "$src"
	else
		skip "iproute2 source for bookworm-backports not fetchable here (see $cache/bookworm-backports/fetch.log)"
	fi
fi

# What the plugin takes from tc: its undefined symbols without a version
# (libc's carry @GLIBC_...), against what abi-check.c lists.
if [ -n "$plugin" ]; then
	name=$(basename "$plugin")
	imports=$(nm -D --undefined-only "$plugin" |
		awk '$1 == "U" && $2 !~ /@/ { print $2 }' | sort)
	list=$("$cc" -E -P -DABI_CHECK_LIST "$here/abi-check.c")
	listed=$(awk '{ for (i = 1; i < NF; i++) if ($i == "import") print $(i + 1) }' \
		<<<"$list" | sort)
	inlines=$(awk '{ for (i = 1; i < NF; i++) if ($i == "inline") print $(i + 1) }' \
		<<<"$list" | sort)
	if [ -z "$imports" ] || [ -z "$listed" ]; then
		not_ok "no imports of $name, or no list in abi-check.c"
	elif [ "$imports" = "$listed" ]; then
		ok "abi-check.c compares exactly the $(wc -l <<<"$imports") functions $name imports from tc"
	else
		not_ok "abi-check.c and $name's imports differ;" \
			"imported, not compared: $(comm -23 <(echo "$imports") <(echo "$listed") | tr '\n' ' ');" \
			"compared, not imported: $(comm -13 <(echo "$imports") <(echo "$listed") | tr '\n' ' ')"
	fi
	unused=
	for f in $inlines; do
		grep -qw "$f" "$here/q_tdmwin.c" || unused="$unused $f"
	done
	if [ -z "$unused" ]; then
		ok "q_tdmwin.c uses every inline iproute2.h copies ($(wc -w <<<"$inlines"))"
	else
		not_ok "iproute2.h copies inlines q_tdmwin.c does not use:$unused"
	fi
	for tc in $tcs; do
		if [ ! -x "$tc" ]; then
			skip "no $tc to check the plugin's imports against"
			continue
		fi
		missing=$(comm -23 <(echo "$imports") \
			<(nm -D --defined-only "$tc" | awk '{ print $3 }' | sed 's/@.*//' | sort -u))
		if [ -z "$missing" ]; then
			ok "$tc ($("$tc" -V 2>/dev/null | head -1)) exports all that $name imports"
		else
			not_ok "$tc does not export: $(tr '\n' ' ' <<<"$missing")"
		fi
	done
	exports=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[A-TV-Z]$/ { print $3 }')
	if [ "$exports" = tdmwin_qdisc_util ]; then
		ok "$name exports only tdmwin_qdisc_util"
	else
		not_ok "$name exports: $(tr '\n' ' ' <<<"$exports")"
	fi
fi

echo "abi-check: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
