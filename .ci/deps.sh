#!/bin/bash
# deps.sh - installs everything simhash needs to build, test and document itself on
# Debian 12, with apt-get. The one list of packages: .ci/run and the README use it.
#   compilers:   build-essential, clang, libclang-rt-14-dev (ASan/UBSan/libFuzzer runtime:
#                `clang -fsanitize=address,undefined` does not link without it)
#   libraries:   ICU, OpenCC (and its data: libopencc1.1, opencc), xxHash, LMDB,
#                libmicrohttpd, jansson, OpenSSL (MD5)
#   PostgreSQL:  postgresql-15 and postgresql-server-dev-15 (the extension in pg/,
#                built with PGXS, tested by `make pg-check` on a scratch server)
#   tests/docs:  python3 and python3-jieba (reference checks, jieba's idf.txt),
#                xxhash (xxhsum), man-db and groff-base (the man page), git
#   with --all, for `make check-all` and `make bench` only: chromium, nodejs and npm
#                (the page in headless Chromium, playwright-core from npm), wrk (load)
#   python:      python3-cffi, python3-dev (the module), python3-pytest, python3-numpy
#                (its tests; numpy also runs the original package they compare with),
#                python3-sklearn (the original package's own test suite imports it)
set -euo pipefail

packages=(
	build-essential clang libclang-rt-14-dev pkg-config
	libicu-dev libopencc-dev libopencc1.1 opencc libxxhash-dev xxhash
	liblmdb-dev libmicrohttpd-dev libjansson-dev libssl-dev
	postgresql-15 postgresql-server-dev-15
	python3 python3-jieba man-db groff-base ca-certificates git
	python3-cffi python3-dev python3-pytest python3-numpy python3-sklearn
)

extra=(chromium nodejs npm wrk)
if [ "${1:-}" = "--all" ]; then
	packages+=("${extra[@]}")
fi

if [ "${1:-}" = "--list" ]; then # for .ci/run
	printf '%s\n' "${packages[@]}"
	exit 0
fi

sudo=
if [ "$(id -u)" -ne 0 ]; then
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends "${packages[@]}"
