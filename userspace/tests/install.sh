#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install / make uninstall into a scratch DESTDIR, twice (default
# PREFIX and PREFIX=/usr/local): every expected file appears with its mode,
# an existing /etc/tdm/tdm.conf is left alone, the units name the installed
# tdmd, and after uninstall nothing but that tdm.conf is left.  Built into
# O/tests as test_install and run by `make unit`; prints TAP lines.
#
# The modules are built for KDIR into a private folder (never build/kmod,
# which guest runs use).  KDIR is the testbed's 6.1 headers when the testbed
# cache exists, else the running kernel's; without headers the module part
# is skipped with a note.  Needs no root.
#
#   tests/install.sh        (from anywhere; finds the tree from its own path)
set -uo pipefail
# shellcheck source=../../selftests/tap.sh
. "$(dirname "$(readlink -f "$0")")/../../selftests/tap.sh"
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)

# A make run from `make unit` must not join that make's jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

kdir=${KDIR:-}
if [ -z "$kdir" ] && [ -d "${TDMWIN_CACHE:-$HOME/.cache/tdmwin}" ]; then
	kdir=$("$top/testbed/guest/kinfo" 6.1 KDIR 2>/dev/null) || kdir=
fi
[ -n "$kdir" ] || kdir=/lib/modules/$(uname -r)/build
kver=
if [ -d "$kdir" ]; then
	kver=$("$top/tools/kernelrelease" "$kdir") || kver=
fi
[ -n "$kver" ] || echo "# note: no kernel headers at $kdir: modules not built, their install not tested"

multiarch=$(${CC:-cc} -print-multiarch 2>/dev/null)
tclib=/usr/lib${multiarch:+/$multiarch}/tc
ma=${multiarch:+/$multiarch}

expected() { # PREFIX: every file install puts down, and its mode
	local p=$1 f
	if [ -n "$kver" ]; then
		echo "644 /lib/modules/$kver/extra/sch_tdmwin.ko"
		echo "644 /lib/modules/$kver/extra/tdmrx.ko"
	fi
	echo "644 $tclib/q_tdmwin.so"
	for f in tdmd tdmctl; do echo "755 $p/sbin/$f"; done
	for f in tdmgen tdmstat tdmplot; do echo "755 $p/bin/$f"; done
	for f in tdmd.service tdmd@.service; do echo "644 /lib/systemd/system/$f"; done
	for f in tdmgen.1 tdmstat.1 tdmplot.1; do echo "644 $p/share/man/man1/$f"; done
	echo "644 $p/share/man/man3/tdmgate.3"
	# libtdmgate: the library, its links (777: symlinks), header, pkg-config
	echo "644 $p/lib$ma/libtdmgate.so.1.0.0"
	echo "777 $p/lib$ma/libtdmgate.so.1"
	echo "777 $p/lib$ma/libtdmgate.so"
	echo "644 $p/lib$ma/pkgconfig/tdmgate.pc"
	echo "644 $p/include/tdmgate.h"
	echo "644 $p/lib$ma/libtdmgate-preload.so"
	echo "644 $p/share/man/man5/tdm.conf.5"
	for f in tdmd.8 tdmctl.8 tc-tdmwin.8 libtdmgate-preload.8; do
		echo "644 $p/share/man/man8/$f"
	done
	echo "644 /etc/tdm/tdm.conf.example"
	for f in "$top"/userspace/examples/*; do
		echo "644 $p/share/doc/tdmwin/examples/${f##*/}"
	done
	echo "644 $p/share/doc/tdmwin/README"
	for f in "$top"/Documentation/*.rst; do
		echo "644 $p/share/doc/tdmwin/${f##*/}"
	done
}

run() { # PREFIX
	local p=$1 d=$tmp/root log=$tmp/make.log mode path bad=0 args
	args=(KDIR="$kdir" KMODOUT="$tmp/kmod" DESTDIR="$d")
	[ "$p" = /usr ] || args+=(PREFIX="$p")
	rm -rf "$d" && mkdir -p "$d/etc/tdm" || return 1
	echo "role member  # the admin's own" >"$d/etc/tdm/tdm.conf"
	cp "$d/etc/tdm/tdm.conf" "$tmp/conf.orig"

	if make -C "$top" install "${args[@]}" >"$log" 2>&1; then
		tdm_ok "PREFIX=$p: make install"
	else
		tdm_fail "PREFIX=$p: make install"; sed 's/^/#   /' "$log" | tail -n 30
		return 0
	fi
	expected "$p" | sort -k2 >"$tmp/want"
	while read -r mode path; do
		if [ ! -f "$d$path" ]; then
			echo "#   missing: $path"; bad=1
		elif [ "$(stat -c %a "$d$path")" != "$mode" ]; then
			echo "#   mode $(stat -c %a "$d$path") (not $mode): $path"; bad=1
		fi
	done <"$tmp/want"
	[ $bad = 0 ] && tdm_ok "PREFIX=$p: $(wc -l <"$tmp/want") files installed with their modes" ||
		tdm_fail "PREFIX=$p: files installed with their modes"
	# Nothing else was installed.
	(cd "$d" && find . ! -type d | sed 's/^\.//' | grep -vx /etc/tdm/tdm.conf | sort) >"$tmp/have"
	if awk '{ print $2 }' "$tmp/want" | sort | diff - "$tmp/have" >"$tmp/diff"; then
		tdm_ok "PREFIX=$p: nothing unexpected installed"
	else
		tdm_fail "PREFIX=$p: nothing unexpected installed"; sed 's/^/#   /' "$tmp/diff"
	fi
	if cmp -s "$d/etc/tdm/tdm.conf" "$tmp/conf.orig"; then
		tdm_ok "PREFIX=$p: existing /etc/tdm/tdm.conf left alone"
	else
		tdm_fail "PREFIX=$p: existing /etc/tdm/tdm.conf left alone"
	fi
	if grep -qx "ExecStart=$p/sbin/tdmd -f /etc/tdm/tdm.conf" "$d/lib/systemd/system/tdmd.service" &&
	   grep -qx "ExecStart=$p/sbin/tdmd -f /etc/tdm/%i.conf" "$d/lib/systemd/system/tdmd@.service"; then
		tdm_ok "PREFIX=$p: units start $p/sbin/tdmd"
	else
		tdm_fail "PREFIX=$p: units start $p/sbin/tdmd"
	fi
	# libtdmgate as pkg-config hands it to a program: it compiles, links, runs.
	if flags=$(PKG_CONFIG_PATH="$d$p/lib$ma/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$d" \
		   pkg-config --cflags --libs tdmgate 2>&1) &&
	   printf '#include <tdmgate.h>\nint main(void) { return !tdmgate_version(); }\n' |
		${CC:-cc} -x c - $flags -o "$tmp/pcuser" 2>"$tmp/pc.log" &&
	   LD_LIBRARY_PATH="$d$p/lib$ma" "$tmp/pcuser"; then
		tdm_ok "PREFIX=$p: a program built with pkg-config tdmgate runs"
	else
		tdm_fail "PREFIX=$p: a program built with pkg-config tdmgate runs"
		echo "#   $flags"; sed 's/^/#   /' "$tmp/pc.log"
	fi
	if [ -n "$kver" ] && command -v modinfo >/dev/null; then
		if modinfo -F vermagic "$d/lib/modules/$kver/extra/sch_tdmwin.ko" | grep -q "^$kver "; then
			tdm_ok "PREFIX=$p: sch_tdmwin.ko is built for $kver"
		else
			tdm_fail "PREFIX=$p: sch_tdmwin.ko is built for $kver"
		fi
	fi

	if make -C "$top" uninstall "${args[@]}" >"$log" 2>&1; then
		tdm_ok "PREFIX=$p: make uninstall"
	else
		tdm_fail "PREFIX=$p: make uninstall"; sed 's/^/#   /' "$log" | tail -n 30
	fi
	(cd "$d" && find . ! -type d | sed 's/^\.//') >"$tmp/left"
	if [ "$(cat "$tmp/left")" = /etc/tdm/tdm.conf ] && cmp -s "$d/etc/tdm/tdm.conf" "$tmp/conf.orig"; then
		tdm_ok "PREFIX=$p: uninstall leaves only the admin's tdm.conf"
	else
		tdm_fail "PREFIX=$p: uninstall leaves only the admin's tdm.conf"
		sed 's/^/#   left: /' "$tmp/left"
	fi
	if [ ! -e "$d$p/share/doc/tdmwin" ]; then
		tdm_ok "PREFIX=$p: uninstall removes $p/share/doc/tdmwin"
	else
		tdm_fail "PREFIX=$p: uninstall removes $p/share/doc/tdmwin"
	fi
}

run /usr
run /usr/local
tdm_exit
