#!/bin/sh
# aarch64.sh syntax BUILD | run BUILD XBUILD - the library outside x86 (make check-aarch64).
#
#   syntax  every C file of lib/, cli/, server/, tests/ and fuzz/ must compile for
#           aarch64 with Debian's cross compiler (aarch64-linux-gnu-gcc -fsyntax-only);
#           the other libraries' headers are the host's (amd64) ones, searched after
#           aarch64's own (-idirafter), the generated headers those of BUILD/gen.
#           Prints "aarch64: N passed, N failed".
#   run     builds the library and the unit tests for aarch64 in XBUILD (with the
#           arm64 libraries: `dpkg --add-architecture arm64` and libicu-dev:arm64,
#           libxxhash-dev:arm64, liblmdb-dev:arm64, libjansson-dev:arm64,
#           libmicrohttpd-dev:arm64, libssl-dev:arm64) and runs each under
#           qemu-aarch64 (qemu-user). Prints "aarch64 qemu: N passed, N failed".
#
# Each part says "skipped" and why, and exits 0, when what it needs is absent.
# The x86 kernels are guarded (SH_X86 in lib/common/internal.h), so on aarch64
# every kernel is the scalar twin: these tests check that it gives the bits
# the x86 paths give, since the tests compare against fixed vectors.
cc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
mode=$1
build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "aarch64: skipped ($cc not found: apt-get install gcc-aarch64-linux-gnu)"
	exit 0
fi

syntax() {
	passed=0
	failed=0
	err=$(mktemp) || exit 1
	# the host's -I flags (for example /usr/include/opencc), then the host's
	# headers after aarch64's own
	host_inc=$(pkg-config --cflags-only-I icu-uc libxxhash lmdb jansson libmicrohttpd \
		libcrypto opencc 2>/dev/null)
	for f in lib/*/*.c cli/*.c server/*.c tests/*/*.c fuzz/*.c; do
		[ -f "$f" ] || continue
		# shellcheck disable=SC2086
		if "$cc" -std=gnu11 -fsyntax-only -Ilib -I"$build/gen" -Iserver -Icli -Itests \
			$host_inc -idirafter /usr/include -idirafter /usr/include/x86_64-linux-gnu \
			"$f" 2>"$err"; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "aarch64: $f does not compile:"
			head -n 5 "$err" | sed 's/^/    /'
		fi
	done
	rm -f "$err"
	echo "aarch64: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# qemu-user 7.2 (Debian 12) refuses an mmap of 64 GiB or more, and the store
# maps 1 TiB for LMDB: where this probe fails, the store's tests cannot run
# under qemu and are skipped, by name.
qemu_maps_1tib() {
	probe=$1/qemu_mmap
	cat >"$probe.c" <<'EOF'
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600) : -1;
	void *p;
	if (fd < 0 || ftruncate(fd, 4096))
		return 2;
	p = mmap(NULL, (size_t)1 << 40, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED;
}
EOF
	"$cc" -O1 -o "$probe" "$probe.c" && qemu-aarch64 "$probe" "$probe.dat"
}

run() {
	xbuild=$1
	pcdir=/usr/lib/aarch64-linux-gnu/pkgconfig
	if ! command -v qemu-aarch64 >/dev/null 2>&1; then
		echo "aarch64 qemu: skipped (qemu-aarch64 not found: apt-get install qemu-user)"
		return 0
	fi
	if ! PKG_CONFIG_LIBDIR=$pcdir:/usr/share/pkgconfig pkg-config --exists \
		icu-uc icu-i18n libxxhash libcrypto lmdb jansson libmicrohttpd; then
		echo "aarch64 qemu: skipped (no arm64 libraries in $pcdir: see tests/aarch64.sh)"
		return 0
	fi
	# the traditional -> simplified table is data: the host's generator made it
	# (OpenCC's arm64 package cannot sit beside the amd64 one)
	mkdir -p "$xbuild/gen" && cp "$build/gen/t2s_table.h" "$xbuild/gen/" || return 1
	tests=$(for f in tests/*/test_*.c; do
		t=${f#tests/}
		echo "$xbuild/tests/${t%.c}"
	done)
	# shellcheck disable=SC2086
	if ! PKG_CONFIG_LIBDIR=$pcdir:/usr/share/pkgconfig ${MAKE:-make} -s BUILD="$xbuild" \
		CC="$cc" -o "$xbuild/gen/t2s_table.h" $tests; then
		echo "aarch64 qemu: the cross build failed"
		echo "aarch64 qemu: 0 passed, 1 failed"
		return 1
	fi
	skip=
	if ! qemu_maps_1tib "$xbuild"; then
		skip=tests/store/
		echo "aarch64 qemu: skipping $skip (this qemu-aarch64 cannot map the store's 1 TiB)"
	fi
	passed=0
	failed=0
	log=$(mktemp) || return 1
	for t in $tests; do
		if [ -n "$skip" ]; then
			case ${t#"$xbuild"/} in "$skip"*) continue ;; esac
		fi
		qemu-aarch64 "$t" >"$log" 2>&1
		status=$?
		line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		p=$(printf '%s\n' "$line" | sed -nE 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*$/\2/p')
		f=$(printf '%s\n' "$line" | sed -nE 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed.*$/\3/p')
		if [ -z "$p" ] || { [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; }; then
			p=${p:-0}
			f=1
		fi
		echo "aarch64 qemu: ${line:-$t: no count line (exit status $status)}"
		if [ "$f" -ne 0 ]; then
			tail -n 20 "$log" | sed 's/^/    /'
		fi
		passed=$((passed + p))
		failed=$((failed + f))
	done
	rm -f "$log"
	echo "aarch64 qemu: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

case $mode in
syntax) syntax ;;
run) run "${3:-$build-aarch64}" ;;
*) echo "usage: aarch64.sh syntax BUILD | run BUILD XBUILD" >&2; exit 2 ;;
esac
