#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through check()
#
# Every tool answers GNU style: --help prints its usage on stdout and exits
# 0, --version prints "TOOL VERSION" (dkms.conf's PACKAGE_VERSION) first
# and exits 0, and an unknown option prints a usage message on stderr and
# exits non-zero.  Built into O/tests as test_tools_cli (which passes the
# version and the programs) and run by `make unit`; prints TAP lines.
#
#   tests/tools_cli.sh VERSION PROGRAM...
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
version=$1
shift
status=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# run PROGRAM ARG: its stdout, stderr and exit status into $tmp.
run() {
	"$1" "$2" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}
usage_in() { grep -qi '^usage:' "$tmp/$1"; }
empty() { [ ! -s "$tmp/$1" ]; }
help_ok() { [ "$status" = 0 ] && usage_in out && empty err; }
version_ok() { [ "$status" = 0 ] && [ "$(head -n 1 "$tmp/out")" = "$1" ] && empty err; }
bogus_ok() { [ "$status" != 0 ] && usage_in err && empty out; }

for prog in "$@"; do
	tool=$(basename "$prog")
	run "$prog" --help
	check "$tool --help: exit 0, usage on stdout, nothing on stderr" help_ok
	run "$prog" --version
	check "$tool --version: exit 0, '$tool $version'" version_ok "$tool $version"
	run "$prog" --bogus
	check "$tool --bogus: exit non-zero, usage on stderr, nothing on stdout" bogus_ok
done
[ "$TDM_N" -gt 0 ] || check "programs given" false
tdm_exit
