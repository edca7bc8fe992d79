# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The quiet-host rule: timing under TCG is judged only on a quiet host.
# Sourced by selftests/lib.sh and by host tests that judge timing (after
# selftests/tap.sh, whose tdm_log, tdm_skip and counters it uses):
# tdm_timing turns a timing check into a skip when TDM_LOADED is set.
# vm-run (testbed/guest) samples the host into TDM_HOSTLOAD; a host test
# runs testbed/guest/hostload itself.

# Timing under TCG can be judged only on a quiet host: when the host's CPUs
# are wanted by other work, it preempts the vCPU threads for milliseconds
# and a frame can leave up to ~3 ms after the qdisc let it go (taprio fails
# a strict departure check then too; ../shared/reference/testbed.md).
# vm-run samples the host every 0.5 s (testbed/guest/hostload) into
# $TDM_HOSTLOAD: how many CPUs ran something other than this guest.  The
# host is quiet when that stays below TDM_QUIET_CPUS (0.30: the host has 2
# CPUs and the guest 2 vCPUs, so a third of a CPU of other work is already
# a vCPU preempted about one interval in six; measured idle: 0.00-0.05).
# Outside vm-run (no TDM_HOSTLOAD) the host cannot be measured and is
# taken as quiet, which the log says.
TDM_QUIET_CPUS=${TDM_QUIET_CPUS:-0.30}
TDM_LOADED=

tdm_hostload_mark() { # prints the number of samples so far
	if [ -n "${TDM_HOSTLOAD:-}" ] && [ -r "$TDM_HOSTLOAD" ]; then
		wc -l <"$TDM_HOSTLOAD"
	else
		echo 0
	fi
}

# tdm_hostload_since MARK: "mean max" of the samples after MARK.
tdm_hostload_since() {
	if [ -z "${TDM_HOSTLOAD:-}" ] || [ ! -r "$TDM_HOSTLOAD" ]; then
		echo "0.00 0.00"
		return
	fi
	awk -v m="$1" 'NR > m { s += $2; n++; if ($2 > x) x = $2 }
		END { printf "%.2f %.2f\n", n ? s / n : 0, x }' "$TDM_HOSTLOAD"
}

# tdm_quiet_wait SECONDS: wait, bounded, until the last 4 samples (2 s) of
# the host are quiet; 1 if they never were (TDM_LOADED says how busy).
tdm_quiet_wait() {
	local secs=$1 end=$((SECONDS + $1)) mean
	if [ -z "${TDM_HOSTLOAD:-}" ]; then
		tdm_log "host load unknown (not run by vm-run): timing judged as on a quiet host"
		return 0
	fi
	# Bounded by time, not by polls: on a loaded host one poll (tail, awk
	# and a sleep in a starved guest) takes seconds, and 2 * SECONDS polls
	# took minutes.
	while [ "$SECONDS" -lt "$end" ]; do
		mean=$(tail -n 4 "$TDM_HOSTLOAD" 2>/dev/null |
			awk '{ s += $2; n++ } END { if (n == 4) printf "%.2f", s / n }')
		if [ -n "$mean" ] && awk -v m="$mean" -v q="$TDM_QUIET_CPUS" 'BEGIN { exit !(m < q) }'; then
			TDM_LOADED=
			return 0
		fi
		sleep 0.5
	done
	TDM_LOADED="the host stayed busy for $secs s (other work on ${mean:-?} CPUs, quiet below $TDM_QUIET_CPUS)"
	return 1
}

# tdm_quiet_judge MARK: was the host quiet since MARK (a mean below
# TDM_QUIET_CPUS)?  Sets TDM_LOADED to the measured load if not.
tdm_quiet_judge() {
	local load
	load=$(tdm_hostload_since "$1")
	tdm_log "host load during the run: other work on ${load% *} CPUs (mean), ${load#* } (max)"
	if awk -v m="${load% *}" -v q="$TDM_QUIET_CPUS" 'BEGIN { exit !(m < q) }'; then
		TDM_LOADED=
		return 0
	fi
	TDM_LOADED="host loaded: other work on ${load% *} CPUs during the run (quiet below $TDM_QUIET_CPUS)"
	return 1
}

# tdm_timing CHECK ARGS...: a check of timing (check, check_num, ...),
# judged only on a quiet host: with TDM_LOADED set it is a skip that says
# why.  With TDM_TIMING=report a failure is reported, not judged (see the
# top of selftests/lib.sh).
tdm_timing() {
	local rc
	if [ -n "$TDM_LOADED" ]; then
		tdm_skip "$2" "$TDM_LOADED"
		TDM_TIMING_SKIPPED=$((TDM_TIMING_SKIPPED + 1))
		TDM_TIMING_WHY=${TDM_TIMING_WHY:-$TDM_LOADED}
		return 0
	fi
	TDM_TIMING_JUDGED=$((TDM_TIMING_JUDGED + 1))
	# shellcheck disable=SC2034  # tap.sh's tdm_fail reads it
	TDM_TIMING_NOW=1
	"$@"
	rc=$?
	# shellcheck disable=SC2034
	TDM_TIMING_NOW=
	return "$rc"
}
