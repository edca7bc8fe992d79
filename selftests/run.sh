#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the tdmwin selftests (in a guest: testbed/guest/vm-run 6.1 -- selftests/run.sh)
#
#   selftests/run.sh [TEST...]        TEST: tdmwin_gate.sh, tdmwin_gate or gate
#   TESTS="gate hold" selftests/run.sh
#
# Loads sch_tdmwin (unless loaded: modprobe if the module tree has the same
# file, else insmod build/kmod/$(uname -r)/sch_tdmwin.ko or $TDM_KO), runs every test
# with a timeout, and prints KTAP.  After each test it looks for new kernel
# warnings (dmesg since a marker, and the taint flags) and fails the test if
# there are any.  Last line: "N passed, N failed[, N skipped][; N checks
# skipped in passed tests]".  Exit status non-zero if any failed.
#
# Skips never pass (selftests/README, "Skips"):
#   - run as root, a module that does not load fails every test;
#   - once sch_tdmwin is loaded (root, and a module for this kernel built or
#     installed: this machine can run the tests), a core test
#     (TDM_CORE_TESTS: the qdisc gate, tdmd's plan, tdmrx's record) that
#     skips as a whole fails;
#   - a test whose every timing check was skipped because the host was
#     loaded (lib.sh's tdm_exit: "SKIP: every timing check skipped: ...")
#     is a skip, core test or not: the machine can run it, the host was
#     busy;
#   - the checks a passed test skipped (a timing check on a loaded host,
#     say) are counted and shown beside it, not hidden in the pass.
#
# Captures are judged on the host, after the guest (lib.sh's tdm_judge):
# the tests leave them under TDM_JUDGE_ROOT (build/judge/KERNEL) and
# `testbed/tb judge build/judge/KERNEL` gives those checks' results.

set -u
dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$dir/.." && pwd)
cd "$dir" || exit 1

# Per-test timeout: settings (kselftest format), TDM_TEST_TIMEOUT overrides.
timeout_s=$(sed -n 's/^timeout=//p' "$dir/settings" 2>/dev/null)
timeout_s=${TDM_TEST_TIMEOUT:-${timeout_s:-120}}

# make_list NAME: the tests of the Makefile's list NAME, one a line.
make_list() {
	sed -n "/^$1/,/^\$/p" "$dir/Makefile" | tr -d '\134' |
		sed "s/^$1[ :+]*=//" | tr -s ' \t' '\n' | grep '\.sh$'
}
all=$(make_list TEST_PROGS)

resolve() {
	local t=$1
	t=${t##*/}
	t=${t%.sh}
	[ -f "$dir/$t.sh" ] && { echo "$t.sh"; return; }
	[ -f "$dir/tdmwin_$t.sh" ] && { echo "tdmwin_$t.sh"; return; }
	echo "$t.sh"
}

# TDM_SUITE=kernel: TEST_PROGS without USERSPACE_PROGS (the Makefile says
# which and why); the log names what was left out.
suite_note=
case ${TDM_SUITE:-all} in
all) ;;
kernel)
	userspace=$(make_list USERSPACE_PROGS)
	all=$(grep -vxF -f <(echo "$userspace") <<<"$all")
	suite_note="TDM_SUITE=kernel: left out, tests of user space run on another kernel:"
	suite_note+=" $(tr '\n' ' ' <<<"$userspace")"
	;;
*) echo "run.sh: TDM_SUITE is all or kernel, not '$TDM_SUITE'" >&2; exit 2 ;;
esac

tests=()
if [ $# -gt 0 ]; then
	for t in "$@"; do tests+=("$(resolve "$t")"); done
elif [ -n "${TESTS:-}" ]; then
	for t in $TESTS; do tests+=("$(resolve "$t")"); done
else
	for t in $all; do tests+=("$t"); done
fi

# On a kernel with kmemleak (a debug build), one more result: a leak scan
# after all tests.
kmemleak=/sys/kernel/debug/kmemleak
if [ "$(id -u)" -eq 0 ] && [ ! -e "$kmemleak" ] && [ -d /sys/kernel/debug ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
fi
[ -w "$kmemleak" ] || kmemleak=
nplan=${#tests[@]}
[ -n "$kmemleak" ] && nplan=$((nplan + 1))

echo "TAP version 13"
echo "1..$nplan"
echo "# kernel $(uname -r), tc $(tc -V 2>&1 | head -n 1)"
[ -z "$suite_note" ] || echo "# $suite_note"

pass=0 fail=0 skip=0 subskip=0
skip_all=
fail_all=
core=" ${TDM_CORE_TESTS:-tdmwin_gate.sh tdmd_plan.sh tdmrx_record.sh} "

if [ "$(id -u)" -ne 0 ]; then
	skip_all="not root: cannot load modules"
fi

# ---- the module -----------------------------------------------------------

load_module() {
	local kver ko inst
	kver=$(uname -r)
	ko=${TDM_KO:-$root/build/kmod/$kver/sch_tdmwin.ko}
	if [ -d /sys/module/sch_tdmwin ]; then
		echo "# sch_tdmwin already loaded"
		return 0
	fi
	inst=$(modinfo -n sch_tdmwin 2>/dev/null)
	if [ -n "$inst" ] && { [ ! -f "$ko" ] || cmp -s "$inst" "$ko"; }; then
		if modprobe sch_tdmwin; then
			export TDM_KO=
			echo "# loaded sch_tdmwin with modprobe ($inst)"
			return 0
		fi
	fi
	if [ -f "$ko" ]; then
		[ -n "$inst" ] && echo "# installed $inst differs from $ko: using the build"
		if insmod "$ko"; then
			export TDM_KO=$ko
			echo "# loaded $ko"
			return 0
		fi
		fail_all="sch_tdmwin did not load: insmod $ko failed"
		return 1
	fi
	fail_all="sch_tdmwin did not load: build/kmod/$kver/sch_tdmwin.ko is missing (make modules-testbed) and the module is not installed for $kver"
	[ -n "$inst" ] && fail_all="sch_tdmwin did not load: modprobe sch_tdmwin ($inst) failed and build/kmod/$kver/sch_tdmwin.ko is missing"
	return 1
}

# TDM_NO_MODULES=1: load no module of ours (tdmrx_lockdown.sh, in a guest
# booted with lockdown=integrity, where they are refused by design).
if [ -z "$skip_all" ] && [ "${TDM_NO_MODULES:-0}" = 1 ]; then
	echo "# TDM_NO_MODULES=1: sch_tdmwin not loaded"
elif [ -z "$skip_all" ]; then
	load_module
	# Modules the tests use, loaded up front so that a missing one shows here.
	for m in veth sch_fq_codel sch_mq; do
		modprobe -q "$m" 2>/dev/null
	done
	[ -f "$root/build/tc/q_tdmwin.so" ] || [ -n "${TDM_TC_LIB:-}" ] ||
		echo "# warning: $root/build/tc/q_tdmwin.so missing (make plugin)"
fi

# ---- kernel health after each test -----------------------------------------

# On a debug kernel (make check-debug) also ODEBUG reports and lockdep
# switching itself off.
kpat='WARNING:|BUG:|Oops|KASAN|kmemleak|UBSAN|cut here|soft lockup|hard LOCKUP|rcu_sched self-detected|rcu: INFO|detected stall|stall on CPU|blocked for more than|general protection|unreferenced object|list_add corruption|list_del corruption|refcount_t:|double free|use-after-free|ODEBUG:|DEBUG_LOCKS_WARN_ON|turning off the locking correctness validator'
# Taint bits that do not mean trouble: P(0) F(1) O(12) E(13) (out-of-tree,
# unsigned module) and K(15) (livepatch).
taint_ok=$(( (1 << 0) | (1 << 1) | (1 << 12) | (1 << 13) | (1 << 15) ))

kmarker() {
	echo "tdmwin-selftest: $1" >/dev/kmsg 2>/dev/null
}

# Kernel messages since the marker that look like trouble.
kcheck() {
	dmesg 2>/dev/null | sed -n "/tdmwin-selftest: begin $1\$/,\$p" |
		grep -E "$kpat"
}

taint() {
	cat /proc/sys/kernel/tainted 2>/dev/null || echo 0
}

# ---- the python server --------------------------------------------------

# tdmwin_util.py's commands through one server (lib.sh, TDM_PYC): a python
# start takes seconds under TCG and the suite starts hundreds.  Without it
# (no tdm_pyc built, or the server did not come up) every command starts a
# python of its own: slower, the same results.
pyserv_pid=
start_pyserv() {
	local sock sdir py=/usr/bin/python3
	[ -x "$root/build/selftests/tdm_pyc" ] || return 0
	[ -x "$py" ] || py=python3
	sdir=$(mktemp -d "${TMPDIR:-/tmp}/tdmwin-pyserv.XXXXXX") || return 0
	sock=$sdir/sock
	"$py" -S "$dir/tdmwin_util.py" serve "$sock" >"$sdir/log" 2>&1 &
	pyserv_pid=$!
	for _ in $(seq 300); do
		grep -q '^ready' "$sdir/log" 2>/dev/null && break
		kill -0 "$pyserv_pid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q '^ready' "$sdir/log" 2>/dev/null; then
		export TDM_PYSERV=$sock
	else
		echo "# the python server did not start (tests start python themselves): $(head -c 300 "$sdir/log")"
		kill "$pyserv_pid" 2>/dev/null
		pyserv_pid=
		rm -rf "$sdir"
	fi
}
stop_pyserv() {
	[ -n "$pyserv_pid" ] && kill "$pyserv_pid" 2>/dev/null
	[ -n "${TDM_PYSERV:-}" ] && rm -rf "${TDM_PYSERV%/sock}"
}
[ -z "$skip_all" ] && start_pyserv
trap stop_pyserv EXIT

# ---- the host's part ---------------------------------------------------------

# What the tests leave for the host to judge (lib.sh's tdm_judge): one
# directory per test under TDM_JUDGE_ROOT (default build/judge/KERNEL in
# the work tree, which the host shares), emptied first; after the guest,
# `testbed/tb judge ROOT` judges them (tools/check does).
judge_root=${TDM_JUDGE_ROOT:-$root/build/judge/$(uname -r)}
rm -rf "$judge_root" && mkdir -p "$judge_root" ||
	echo "# warning: cannot make $judge_root: the checks judged on the host will fail"

# ---- run ------------------------------------------------------------------

n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	if [ -n "$skip_all" ]; then
		echo "ok $n $t # SKIP $skip_all"
		skip=$((skip + 1))
		continue
	fi
	if [ -n "$fail_all" ]; then
		echo "not ok $n $t # $fail_all"
		fail=$((fail + 1))
		continue
	fi
	# make check's time budget (tools/check, TDM_CHECK_DEADLINE: the
	# epoch second after which no test starts): the rest are skipped,
	# each named, never passed; core tests too (the budget, not the
	# machine, is what could not run them).
	if [ -n "${TDM_CHECK_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$TDM_CHECK_DEADLINE" ]; then
		echo "ok $n $t # SKIP make check's time budget is spent (TDM_CHECK_DEADLINE)"
		skip=$((skip + 1))
		continue
	fi
	if [ ! -x "$dir/$t" ]; then
		echo "not ok $n $t # no such test"
		fail=$((fail + 1))
		continue
	fi
	taint0=$(taint)
	kmarker "begin $t"
	out=$(mktemp)
	start=$(date +%s.%N)
	TDM_JUDGE_DIR=$judge_root/$(printf '%02d' "$n")-${t%.sh} \
		timeout --foreground -k 10 "$timeout_s" "$dir/$t" 2>&1 |
		tee "$out" | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	secs=$(echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}')
	kmarker "end $t"
	sleep 0.2
	kmsgs=$(kcheck "$t")
	taint1=$(taint)
	newtaint=$(( (taint1 & ~taint0) & ~taint_ok ))
	reason=
	if [ -n "$kmsgs" ]; then
		echo "# kernel messages during $t:"
		dmesg | sed -n "/tdmwin-selftest: begin $t\$/,\$p" | grep -E -A 12 "$kpat" |
			head -n 80 | sed 's/^/#   /'
		reason="kernel warnings"
	fi
	if [ "$newtaint" -ne 0 ]; then
		echo "# new kernel taint during $t: $taint0 -> $taint1"
		reason="${reason:+$reason, }kernel tainted"
	fi
	echo "# $t: exit $rc after ${secs} s"
	# Timing checks reported, not judged (TDM_TIMING=report, lib.sh).
	timing=$(grep -c '^not ok .* # TODO timing' "$out")
	# Checks the test skipped (lib.sh's tdm_skip), and the first reason.
	nsub=$(grep -cE '^ok [0-9]+ - .* # SKIP' "$out")
	subwhy=$(sed -n 's/^ok [0-9]* - .* # SKIP //p' "$out" | head -n 1)
	note=
	[ "$timing" -gt 0 ] && note="$timing timing checks missed, reported only"
	more=
	[ "$nsub" -gt 1 ] && more=", ..."
	[ "$nsub" -gt 0 ] &&
		note="${note:+$note; }$nsub checks skipped (${subwhy:-no reason given}$more)"
	if [ -n "$reason" ]; then
		echo "not ok $n $t # $reason"
		fail=$((fail + 1))
	elif [ "$rc" -eq 0 ] && [ -n "$note" ]; then
		echo "ok $n $t # $note"
		pass=$((pass + 1))
		subskip=$((subskip + nsub))
	elif [ "$rc" -eq 0 ]; then
		echo "ok $n $t"
		pass=$((pass + 1))
	elif [ "$rc" -eq 4 ] && why=$(sed -n 's/^SKIP: //p' "$out" | tail -n 1) &&
		[[ $core == *" $t "* ]] && [[ $why != "every timing check skipped: "* ]]; then
		# This machine can run it: the module is loaded (above).  Only
		# a skip for load (lib.sh's tdm_exit: every timing check skipped
		# on a busy host) is not the machine's fault: a skip below.
		echo "not ok $n $t # core test skipped on a machine that can run it: ${why:-no reason given}"
		fail=$((fail + 1))
	elif [ "$rc" -eq 4 ]; then
		echo "ok $n $t # SKIP ${why:-skipped}"
		skip=$((skip + 1))
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok $n $t # TIMEOUT after ${timeout_s}s"
		fail=$((fail + 1))
	else
		echo "not ok $n $t # exit $rc"
		fail=$((fail + 1))
	fi
	rm -f "$out"
done

if [ -n "$kmemleak" ]; then
	n=$((n + 1))
	# Objects must be a few seconds old before a scan reports them.
	sleep 6
	echo scan >"$kmemleak"
	sleep 1
	echo scan >"$kmemleak"
	leaks=$(cat "$kmemleak")
	if [ -n "$leaks" ]; then
		echo "# kmemleak:"
		head -n 100 <<<"$leaks" | sed 's/^/#   /'
		echo "not ok $n kmemleak # $(grep -c '^unreferenced object' <<<"$leaks") objects"
		fail=$((fail + 1))
	else
		echo "ok $n kmemleak"
		pass=$((pass + 1))
	fi
fi

njudge=$(find "$judge_root" -name judge.tsv 2>/dev/null | wc -l)
[ "$njudge" -gt 0 ] &&
	echo "# $njudge tests left checks for the host: testbed/tb judge ${judge_root#"$root"/}"
sub=
[ "$subskip" -gt 0 ] && sub="; $subskip checks skipped in passed tests"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped$sub"
else
	echo "$pass passed, $fail failed$sub"
fi
[ "$fail" -eq 0 ]
