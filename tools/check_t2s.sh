#!/bin/sh
# check_t2s.sh TABLE - fails the build if the traditional-to-simplified table
# generated from this machine's OpenCC differs from the pinned one.
#
# The table decides fingerprints under t2s (on by default): a different OpenCC
# data set would silently change them. The digest in tools/t2s_table.sha256 is
# that of the table generated from Debian 12's OpenCC 1.1.6 (pkg-config
# reports 1.1.5). To accept a new table on purpose, the scheme version must
# change (docs/algorithms.md); then update the digest.
set -eu
table=$1
want=$(cut -d ' ' -f 1 "$(dirname "$0")/t2s_table.sha256")
got=$(sha256sum "$table" | cut -d ' ' -f 1)
if [ "$got" != "$want" ]; then
	echo "error: the traditional-to-simplified table generated from this OpenCC ($(pkg-config --modversion opencc 2>/dev/null || echo unknown)) differs from the pinned one:" >&2
	echo "error:   sha256 $got, tools/t2s_table.sha256 wants $want" >&2
	echo "error: fingerprints with t2s would change; build with the OpenCC data the digest names (Debian 12's opencc)" >&2
	exit 1
fi
