# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The project's one TAP writer for shell: results, checks and the exit of
# a test.  selftests/lib.sh sources it; so do the host tests that print
# TAP (userspace/tests/*.sh, tools/test-skips, tools/test-dkms).  It has
# no side effects but its variables and functions:
#
#   . "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
#
#   tdm_ok DESC / tdm_fail DESC / tdm_skip DESC WHY / tdm_log TEXT
#   check DESC CMD... / check_fails / check_refused / check_eq / check_num /
#   check_match
#   tdm_exit          "1..N", "# N passed, N failed, N skipped", exit 0/1/4
#   tdm_skip_all WHY  "SKIP: WHY", exit 4: the whole test cannot run here
#
# Sub-results are "ok N - description", "not ok N - description" and
# "ok N - description # SKIP reason".  Timing checks (lib.sh's tdm_timing)
# count through TDM_TIMING_*: a failed one under TDM_TIMING=report is
# "not ok N - ... # TODO timing (TDM_TIMING=report)" and not a failure;
# a test that ran timing checks and had every one skipped for load is a
# skip (tdm_exit).

# kselftest exit codes
ksft_pass=0
ksft_fail=1
ksft_skip=4

TDM_N=0
TDM_FAILS=0
TDM_SKIPS=0
TDM_TIMING=${TDM_TIMING:-judge}
TDM_TIMING_NOW=
TDM_TIMING_MISSES=0
# Timing checks judged, and skipped for load with the first reason.
TDM_TIMING_JUDGED=0
TDM_TIMING_SKIPPED=0
TDM_TIMING_WHY=

# ---- results --------------------------------------------------------------

tdm_log() { echo "# $*"; }

tdm_ok() {
	TDM_N=$((TDM_N + 1))
	echo "ok $TDM_N - $*"
}

tdm_fail() {
	TDM_N=$((TDM_N + 1))
	if [ -n "$TDM_TIMING_NOW" ] && [ "$TDM_TIMING" = report ]; then
		TDM_TIMING_MISSES=$((TDM_TIMING_MISSES + 1))
		echo "not ok $TDM_N - $* # TODO timing (TDM_TIMING=report)"
		return
	fi
	TDM_FAILS=$((TDM_FAILS + 1))
	echo "not ok $TDM_N - $*"
}

tdm_skip() {
	TDM_N=$((TDM_N + 1))
	TDM_SKIPS=$((TDM_SKIPS + 1))
	echo "ok $TDM_N - $1 # SKIP $2"
}

# check DESC CMD...: passes if CMD succeeds; its output is shown on failure.
check() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		tdm_ok "$desc"
	else
		tdm_fail "$desc"
		tdm_log "  command: $*"
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/#   /' | head -n 20
	fi
	return "$rc"
}

# check_here DESC CMD...: passes if CMD succeeds, run in this shell (not
# in check's subshell): what it sets and starts stays; its output is not
# captured.
check_here() {
	local desc=$1
	shift
	if "$@"; then
		tdm_ok "$desc"
		return 0
	fi
	tdm_fail "$desc"
	return 1
}

# check_fails DESC CMD...: passes if CMD fails.
check_fails() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		tdm_ok "$desc"
		return 0
	fi
	tdm_fail "$desc (succeeded unexpectedly)"
	tdm_log "  command: $*"
	return 1
}

# check_refused DESC ERE CMD...: CMD fails and what it prints matches ERE.
check_refused() {
	local desc=$1 re=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		tdm_fail "$desc: accepted"
		return 1
	fi
	out=$(grep -v '^Usage\|^ \|^$' <<<"$out" | head -n 3 | tr '\n' ' ')
	if grep -qiE -- "$re" <<<"$out"; then
		tdm_ok "$desc: refused ($out)"
	else
		tdm_fail "$desc: refused, but the message '$out' does not match /$re/"
	fi
}

# check_eq DESC GOT WANT
check_eq() {
	if [ "$2" = "$3" ]; then
		tdm_ok "$1"
		return 0
	fi
	tdm_fail "$1: got '$2', want '$3'"
	return 1
}

# check_num DESC GOT OP WANT (OP: -eq -ne -gt -ge -lt -le)
check_num() {
	local desc=$1 got=$2 op=$3 want=$4
	if [[ "$got" =~ ^-?[0-9]+$ ]] && test "$got" "$op" "$want"; then
		tdm_ok "$desc"
		return 0
	fi
	tdm_fail "$desc: got '$got', want $op $want"
	return 1
}

# check_match DESC TEXT ERE: TEXT matches ERE (case-insensitive).
check_match() {
	if grep -qiE -- "$3" <<<"$2"; then
		tdm_ok "$1"
		return 0
	fi
	tdm_fail "$1: '$2' does not match /$3/"
	return 1
}

tdm_exit() {
	local timing=
	[ "$TDM_TIMING_MISSES" = 0 ] || timing=", $TDM_TIMING_MISSES timing reported"
	echo "1..$TDM_N"
	echo "# $((TDM_N - TDM_FAILS - TDM_SKIPS - TDM_TIMING_MISSES)) passed," \
		"$TDM_FAILS failed, $TDM_SKIPS skipped$timing"
	[ "$TDM_FAILS" -eq 0 ] || exit $ksft_fail
	# Timing checks run, none judged: the test's point went unjudged, so
	# it is a skip, not a pass.  run.sh matches these words to tell it
	# from a core test's skip on a machine that cannot run it.
	if [ "$TDM_TIMING_SKIPPED" -gt 0 ] && [ "$TDM_TIMING_JUDGED" -eq 0 ]; then
		tdm_skip_all "every timing check skipped: $TDM_TIMING_WHY"
	fi
	exit $ksft_pass
}

# The whole test cannot run here.
tdm_skip_all() {
	echo "SKIP: $*"
	exit $ksft_skip
}


# tdm_fail_why DESC DETAIL...: a failure, each line of each DETAIL a
# "#   " line.
tdm_fail_why() {
	tdm_fail "$1"
	shift
	printf '%s\n' "$@" | sed 's/^/#   /'
}

# tdm_done [NAME]: for a host test that make check adds up (tools/check's
# tally): the plan and "[NAME: ]N passed, N failed, N skipped"; false if
# anything failed.
tdm_done() {
	echo "1..$TDM_N"
	echo "${1:+$1: }$((TDM_N - TDM_FAILS - TDM_SKIPS)) passed, $TDM_FAILS failed, $TDM_SKIPS skipped"
	[ "$TDM_FAILS" = 0 ]
}
