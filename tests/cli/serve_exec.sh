#!/bin/sh
# serve_exec.sh BUILD - `simhash serve` runs the service, BUILD/simhash-serve,
# in its own place (cli/serve_exec.c):
#   1. the command links no libmicrohttpd and no GnuTLS (ldd);
#   2. help, a bad option and its exit status come through unchanged;
#   3. a copy of the command alone fails with one line naming both places
#      looked in, exit 1; beside bin/ + libexec/simhash/ (an install) it runs;
#   4. the server keeps the pid of `simhash serve`, and SIGTERM to that pid
#      stops it gracefully (exit 0).
# Prints "serve exec: N passed, N failed".
build=${1:-build}
sh=$build/simhash
passed=0
failed=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "serve exec: FAIL: $*"; }

# expect NAME STATUS WANT_OUT_LINE1 WANT_ERR CMD...: checks the exit status,
# stdout's first line and all of stderr.
expect() {
	name=$1 want_st=$2 want_out=$3 want_err=$4
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	out=$(head -n 1 "$tmp/out")
	err=$(cat "$tmp/err")
	if [ "$st" = "$want_st" ] && [ "$out" = "$want_out" ] && [ "$err" = "$want_err" ]; then
		ok
	else
		bad "$name: exit $st, stdout '$out', stderr '$err'"
	fi
}

libs=$(ldd "$sh" 2>&1)
case $libs in
*libmicrohttpd* | *libgnutls*) bad "simhash links the HTTP/TLS libraries: $libs" ;;
*libjansson*) ok ;;
*) bad "ldd $sh: $libs" ;;
esac

usage='usage: simhash serve [--store PATH] [--listen HOST:PORT] [OPTION]...'
expect "serve --help" 0 "$usage" "" "$sh" serve --help
expect "help serve" 0 "$usage" "" "$sh" help serve
expect "serve --bogus" 2 "" "simhash: serve: unknown option '--bogus'" "$sh" serve --bogus

mkdir -p "$tmp/alone" "$tmp/inst/bin" "$tmp/inst/libexec/simhash"
cp "$sh" "$tmp/alone/simhash"
expect "without simhash-serve" 1 "" "simhash: serve: cannot run $tmp/alone/simhash-serve or \
$tmp/alone/../libexec/simhash/simhash-serve: No such file or directory (the HTTP service is a \
program of its own)" "$tmp/alone/simhash" serve --help
cp "$sh" "$tmp/inst/bin/simhash"
cp "$build/simhash-serve" "$tmp/inst/libexec/simhash/simhash-serve"
expect "installed layout" 0 "$usage" "" "$tmp/inst/bin/simhash" serve --help

# 4: the same pid, and SIGTERM reaches the server
"$sh" serve --listen 127.0.0.1:0 >"$tmp/log" 2>&1 &
pid=$!
i=0
while [ $i -lt 300 ] && ! grep -q '^listening on' "$tmp/log"; do
	sleep 0.1
	i=$((i + 1))
done
exe=$(readlink "/proc/$pid/exe")
if [ "${exe##*/}" = simhash-serve ] && grep -q '^listening on' "$tmp/log"; then
	ok
else
	bad "pid $pid runs '$exe', log: $(cat "$tmp/log")"
fi
kill -TERM "$pid"
wait "$pid"
st=$?
if [ "$st" = 0 ]; then ok; else bad "SIGTERM: exit $st, log: $(cat "$tmp/log")"; fi

echo "serve exec: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
