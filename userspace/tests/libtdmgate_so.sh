#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libtdmgate.so.1 as a user gets it: its soname, that it exports every
# function tdmgate.h declares and nothing else (version TDMGATE_1, and
# TDMGATE_1.1 for those added with tdmd's plan store), that
# it needs no library but libc and libmnl, and that a program compiled
# against the header alone (C11 and C++, -Wall -Wextra -Werror -pedantic)
# links with it and gets a launch time.  Built into O/tests as
# test_tdmgate_so by userspace/Makefile; prints TAP lines.
#
#   tests/libtdmgate_so.sh LIBTDMGATE_SO TDMGATE_H
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
so=$1 hdr=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libtdmgate.so.1 ] && tdm_ok "soname libtdmgate.so.1" ||
	tdm_fail "soname libtdmgate.so.1 (is '$soname')"

# What the header declares: every "tdmgate_name(" at a line's start or
# after a return type.
grep -oE '^[a-z0-9_ ]*[ *]tdmgate_[a-z_]+\(' "$hdr" | grep -oE 'tdmgate_[a-z_]+' |
	sort -u >"$tmp/declared"
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/exported"
if diff "$tmp/declared" "$tmp/exported" >"$tmp/diff"; then
	tdm_ok "exports the $(wc -l <"$tmp/declared") functions of tdmgate.h, nothing else"
else
	tdm_fail "exports the functions of tdmgate.h, nothing else"
	sed 's/^/#   /' "$tmp/diff"
fi
# Each function's version node: TDMGATE_1, but for those added in
# TDMGATE_1.1 (following tdmd's plan store).
v11='tdmgate_follow_tdmd tdmgate_plan_from_tdmd'
bad=$(awk -v v11=" $v11 " '{
	split($3, a, "@@")
	want = index(v11, " " a[1] " ") ? "TDMGATE_1.1" : "TDMGATE_1"
	if (a[2] != want) print $3 " (want " want ")"
}' < <(nm -D --defined-only "$so" | awk '$2 == "T"'))
if [ -z "$bad" ]; then
	tdm_ok "every symbol has its version: TDMGATE_1, TDMGATE_1.1 for $v11"
else
	tdm_fail "every symbol has its version: $bad"
fi
needed=$(readelf -d "$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
[ "$needed" = "libc.so.6 libmnl.so.0 " ] && tdm_ok "needs libc and libmnl only" ||
	tdm_fail "needs libc and libmnl only (needs $needed)"
undef=$(nm -D --undefined-only "$so" | awk '$1 == "U" && $2 !~ /@(GLIBC|LIBMNL)_/')
[ -z "$undef" ] && tdm_ok "no undefined symbol outside libc and libmnl" ||
	{ tdm_fail "no undefined symbol outside libc and libmnl"; echo "# $undef"; }

cat >"$tmp/user.c" <<'EOF'
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tdmgate.h>

int main(void)
{
	struct tdmgate_plan p;
	struct tdmgate *g;
	int64_t t;

	memset(&p, 0, sizeof(p));
	p.active.cycle = 10000;
	p.active.nwin = 1;
	p.active.win[0].length = 5000;
	p.link_speed = 10000;
	p.clockid = CLOCK_MONOTONIC;
	if (tdmgate_create(&p, &g))
		return 1;
	/* 1500 bytes at 10 Gbit/s: 1220 ns; the fifth goes next cycle. */
	for (int i = 0; i < 5; i++)
		if (tdmgate_next_at(g, 0, 1500, &t))
			return 2;
	printf("%lld %s\n", (long long)t, tdmgate_version());
	tdmgate_destroy(g);
	return tdmgate_create(NULL, &g) == -EINVAL ? 0 : 3;
}
EOF
inc=$tmp/include lib=$tmp/lib
mkdir -p "$inc" "$lib" && cp "$hdr" "$inc/" && cp "$so" "$lib/" &&
	ln -s libtdmgate.so.1 "$lib/libtdmgate.so"
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -o "$tmp/user" \
	"$tmp/user.c" -L"$lib" -ltdmgate 2>"$tmp/cc.log" &&
   out=$(LD_LIBRARY_PATH=$lib "$tmp/user") && [ "${out%% *}" = 10000 ]; then
	tdm_ok "a C11 program against tdmgate.h links and gets launch time 10000"
else
	tdm_fail "a C11 program against tdmgate.h links and gets launch time 10000"
	sed 's/^/#   /' "$tmp/cc.log"; echo "# output: ${out:-}"
fi
if command -v "${CXX:-c++}" >/dev/null; then
	printf '#include <tdmgate.h>\nint main() { return tdmgate_version() ? 0 : 1; }\n' \
		>"$tmp/user.cc"
	if "${CXX:-c++}" -Wall -Wextra -Werror -pedantic -I"$inc" -o "$tmp/usercc" \
		"$tmp/user.cc" -L"$lib" -ltdmgate 2>"$tmp/cxx.log" &&
	   LD_LIBRARY_PATH=$lib "$tmp/usercc"; then
		tdm_ok "tdmgate.h compiles and links as C++"
	else
		tdm_fail "tdmgate.h compiles and links as C++"; sed 's/^/#   /' "$tmp/cxx.log"
	fi
else
	tdm_skip "tdmgate.h as C++" "no C++ compiler"
fi
tdm_exit
