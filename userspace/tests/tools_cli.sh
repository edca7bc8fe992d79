#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317  # the checks are called through tap()
#
# Every tool answers GNU style: --help prints its usage on stdout and exits
# 0, --version prints "TOOL VERSION" (dkms.conf's PACKAGE_VERSION) first
# and exits 0, and an unknown option prints a usage message on stderr and
# exits non-zero.  Built into O/tests as test_tools_cli (which passes the
# version and the programs) and run by `make unit`; prints TAP lines.
#
#   tests/tools_cli.sh VERSION PROGRAM...
set -uo pipefail
version=$1
shift
n=0 failed=0 rc=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# tap TEXT COMMAND...: one TAP line for the command's success.
tap() {
	local what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=1
	fi
}
# run PROGRAM ARG: its stdout, stderr and exit status into $tmp.
run() {
	"$1" "$2" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}
usage_in() { grep -qi '^usage:' "$tmp/$1"; }
empty() { [ ! -s "$tmp/$1" ]; }
help_ok() { [ "$rc" = 0 ] && usage_in out && empty err; }
version_ok() { [ "$rc" = 0 ] && [ "$(head -n 1 "$tmp/out")" = "$1" ] && empty err; }
bogus_ok() { [ "$rc" != 0 ] && usage_in err && empty out; }

for prog in "$@"; do
	tool=$(basename "$prog")
	run "$prog" --help
	tap "$tool --help: exit 0, usage on stdout, nothing on stderr" help_ok
	run "$prog" --version
	tap "$tool --version: exit 0, '$tool $version'" version_ok "$tool $version"
	run "$prog" --bogus
	tap "$tool --bogus: exit non-zero, usage on stderr, nothing on stdout" bogus_ok
done
[ "$n" -gt 0 ] || tap "programs given" false
exit $failed
