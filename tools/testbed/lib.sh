# shellcheck shell=bash disable=SC2034
# Common definitions for the testbed scripts (sourced, not run).

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$TESTBED_DIR/../.." && pwd)

if [ -n "${TDMWIN_CACHE:-}" ]; then
	CACHE=$TDMWIN_CACHE
elif [ -n "${HOME:-}" ]; then
	CACHE=$HOME/.cache/tdmwin
else
	echo "${0##*/}: neither TDMWIN_CACHE nor HOME is set" >&2
	exit 1
fi
case $CACHE in
/*) ;;
*) CACHE=$PWD/$CACHE ;;
esac

# The pinned virtme-ng release (PyPI).
VNG_VERSION=1.42
# The testbed kernels, by short name.
TESTBED_KERNELS="6.1 6.12"

die() {
	echo "${0##*/}: error: $*" >&2
	exit 1
}

note() {
	echo "${0##*/}: $*" >&2
}

check_short() {
	case " $TESTBED_KERNELS " in
	*" $1 "*) ;;
	*) die "unknown kernel '$1' (known: $TESTBED_KERNELS)" ;;
	esac
}

# load_kernel SHORT: set KVER, VMLINUZ, KDIR, MODDIR, ROOT from the record
# that setup wrote, after checking that what it names is still there.
load_kernel() {
	local short=$1 env
	check_short "$short"
	env=$CACHE/kernels/$short.env
	[ -r "$env" ] || die "kernel $short is not set up (no $env); run tools/testbed/setup"
	KVER='' VMLINUZ='' KDIR='' MODDIR='' ROOT=''
	# shellcheck disable=SC1090
	. "$env"
	[ -n "$KVER" ] && [ -f "$VMLINUZ" ] && [ -f "$KDIR/Makefile" ] &&
		[ -f "$MODDIR/modules.dep" ] ||
		die "kernel $short: the files named in $env are missing; run tools/testbed/setup"
}
