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
# spead2 (PyPI), the unmodified UDP sender of selftests/tdmgate_preload.sh.
SPEAD2_VERSION=4.5.1
# The testbed kernels, by short name: the ones setup fetches, and the debug
# kernel that testbed/guest/debug-kernel builds (make check-debug).
TESTBED_KERNELS="6.1 6.12"
TESTBED_DEBUG_KERNEL=6.1-debug

die() {
	echo "${0##*/}: error: $*" >&2
	exit 1
}

note() {
	echo "${0##*/}: $*" >&2
}

check_short() {
	case " $TESTBED_KERNELS $TESTBED_DEBUG_KERNEL " in
	*" $1 "*) ;;
	*) die "unknown kernel '$1' (known: $TESTBED_KERNELS $TESTBED_DEBUG_KERNEL)" ;;
	esac
}

# load_kernel SHORT: set KVER, VMLINUZ, KDIR, MODDIR, ROOT from the record
# that setup wrote, after checking that what it names is still there.
load_kernel() {
	local short=$1 env
	check_short "$short"
	env=$CACHE/kernels/$short.env
	if [ ! -r "$env" ]; then
		[ "$short" != "$TESTBED_DEBUG_KERNEL" ] ||
			die "kernel $short is not built (no $env); run testbed/guest/debug-kernel (make check-debug does)"
		die "kernel $short is not set up (no $env); run testbed/guest/setup"
	fi
	KVER='' VMLINUZ='' KDIR='' MODDIR='' ROOT=''
	# shellcheck disable=SC1090
	. "$env"
	[ -n "$KVER" ] && [ -f "$VMLINUZ" ] && [ -f "$KDIR/Makefile" ] &&
		[ -f "$MODDIR/modules.dep" ] ||
		die "kernel $short: the files named in $env are missing; run testbed/guest/setup"
}

# write_env SHORT KVER: record kernel SHORT, unpacked or built into
# $CACHE/kernels/KVER, for load_kernel.
write_env() {
	local short=$1 kver=$2 root=$CACHE/kernels/$2 f=$CACHE/kernels/$1.env
	{
		echo "# written by testbed/guest/${0##*/} on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		printf 'KVER=%q\n' "$kver"
		printf 'ROOT=%q\n' "$root"
		printf 'VMLINUZ=%q\n' "$root/boot/vmlinuz-$kver"
		printf 'KDIR=%q\n' "$root/usr/src/linux-headers-$kver"
		printf 'MODDIR=%q\n' "$root/lib/modules/$kver"
	} >"$f.new"
	mv "$f.new" "$f"
}

# env_ok SHORT: kernel SHORT is recorded and its files are there.
env_ok() {
	(load_kernel "$1") >/dev/null 2>&1
}
