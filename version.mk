# SPDX-License-Identifier: GPL-2.0
#
# The one version number: dkms.conf's PACKAGE_VERSION.  Included by the top
# Makefile (DKMS) and by userspace/Makefile (every tool's --version).
VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' \
		   $(dir $(lastword $(MAKEFILE_LIST)))dkms.conf)
