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
#   with --all, for the browser test of `make check-all` and for `make bench`:
#                chromium (the page in headless Chromium, driven by playwright-core
#                from npm) and wrk (load), gcc-aarch64-linux-gnu and libc6-dev-arm64-cross
#                (check-all compiles every C file for aarch64; `make check-aarch64` also
#                runs the unit tests under qemu-user: see tests/aarch64.sh)
#   python:      python3-cffi, python3-dev (the module), python3-pytest, python3-numpy
#                (its tests; numpy also runs the original package they compare with),
#                python3-sklearn (the original package's own test suite imports it)
#   dask:        python3-dask, python3-distributed, python3-fsspec (simhash-dask and its
#                tests), python3-setuptools, python3-venv, python3-pip (pip install
#                ./python into a venv, tested by make check-all)
set -euo pipefail

packages=(
	build-essential clang libclang-rt-14-dev pkg-config
	libicu-dev libopencc-dev libopencc1.1 opencc libxxhash-dev xxhash
	liblmdb-dev libmicrohttpd-dev libjansson-dev libssl-dev
	postgresql-15 postgresql-server-dev-15
	python3 python3-jieba man-db groff-base ca-certificates git
	python3-cffi python3-dev python3-pytest python3-numpy python3-sklearn
	python3-dask python3-distributed python3-fsspec python3-setuptools python3-venv python3-pip
)

# Node.js and npm come with the machine image (its nodejs package carries npm);
# Debian's npm would pull an older nodejs, so it is not listed.
extra=(chromium wrk gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
list=0
for arg in "$@"; do
	case $arg in
	--all) packages+=("${extra[@]}") ;;
	--list) list=1 ;; # for .ci/run
	*) echo "usage: deps.sh [--all] [--list]" >&2; exit 2 ;;
	esac
done

if [ "$list" -eq 1 ]; then
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
