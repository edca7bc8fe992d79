# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: GPL-2.0
#
# Shared by test-parse.sh and test-print.sh: run stock tc with the plugin
# from $plugdir in a new network namespace (root only), with tests/nlfake.so
# preloaded, and count results.
#
#   run_tc ARGS...	runs tc; sets $rc, and $tmp/out, $tmp/err hold its
#			output.  $capture / $reply (if set) are handed to
#			nlfake.so.
# Results through selftests/tap.sh: tdm_ok NAME, tdm_fail_why NAME
# [DETAIL...], tdm_done NAME.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
plugdir=$(cd "${1:-$here/../build/tc/asan}" 2>/dev/null && pwd)
tc=${TC:-/usr/sbin/tc}
nl="python3 $here/tests/tdmwin_nl.py"
# shellcheck source=../../selftests/tap.sh
. "$here/../selftests/tap.sh"

if [ ! -f "$plugdir/q_tdmwin.so" ] || [ ! -f "$plugdir/nlfake.so" ]; then
	echo "no q_tdmwin.so and nlfake.so in ${1:-$here/../build/tc/asan}: run make test"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "needs root, to run tc in its own network namespace (unshare -n)"
	exit 1
fi

# A plugin built with ASan needs the runtime loaded first: tc is not.
# (Not `ldd | grep -q`: under pipefail, ldd killed by SIGPIPE when grep
# quits early fails the test now and then.)
preload=$plugdir/nlfake.so
if [[ $(ldd "$plugdir/q_tdmwin.so") == *libasan* ]]; then
	preload="$(${CC:-cc} -print-file-name=libasan.so) $preload"
fi
export ASAN_OPTIONS=detect_leaks=0:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:exitcode=86

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
capture=''
reply=''

run_tc() {
	env TC_LIB_DIR="$plugdir" LD_PRELOAD="$preload" \
		${capture:+TDMWIN_NL_CAPTURE="$capture"} \
		${reply:+TDMWIN_NL_REPLY="$reply"} \
		unshare -n "$tc" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# Any sanitizer report fails the case that caused it.
sanitizer_report() {
	grep -qE 'Sanitizer|runtime error:' "$tmp/err"
}

