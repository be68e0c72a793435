#!/bin/sh
# run-check.sh BUILD - `make pg-check`: pg_regress on pg/sql/*.sql against a
# scratch server started in a temporary folder (pg/cluster.sh) and stopped at the
# end, also when a test fails. The extension must be installed (make pg-install).
#
# What the tests compare with is made here, at test time, so that no test
# hard-codes a fingerprint of the default scheme:
#   cli.tsv       `simhash fingerprint --lines` of data/sample.txt plus a few
#                 texts of our own, under several option sets (opts.txt)
#   fuzz_*.tsv    every file of the fuzz corpora (fp_parse, jsonl, normalize) in
#                 hex, with what the command line says of the normalize ones
#   long.txt      a text of a few MiB (the library polls the interrupt hook
#                 many times over it), and
#   long_cli.tsv  the command line's fingerprint of it under several option sets
# After the tests, no line of the server log may be longer than LOG_LINE_MAX
# (an error on a huge input quotes a short prefix of it).
# The last line is "pg: N passed, N failed", as tests/run.sh expects of a suite.
set -u
BUILD=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cli=$(cd "$root" && cd "$(dirname "$BUILD/simhash")" && pwd)/simhash
. "$root/pg/cluster.sh"

if ! pg_available; then
	echo "pg-check: PostgreSQL 15 (postgresql-15, postgresql-server-dev-15) not found" >&2
	echo "pg: 0 passed, 1 failed"
	exit 1
fi
trap pg_cluster_stop EXIT
trap 'exit 1' INT TERM
# wal_consistency_checking: every generic WAL record (the simhash_scan index)
# carries a full page image that redo compares with its own result.
# max_prepared_transactions: simhash_trust holds rows in a prepared
# transaction (uncommitted, as another session's would be).
pg_cluster_start wal_consistency_checking=generic max_prepared_transactions=2 ||
	{ echo "pg: 0 passed, 1 failed"; exit 1; }
data=$PG_TMP/inputs
mkdir -p "$data"

# Texts: the sample, then edge cases (empty line, emoji, CJK, mixed scripts).
{
	cat "$root/data/sample.txt"
	printf '\n'
	printf 'Emoji 😀👍🏽 and a 4-byte 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 run\n'
	printf '今天天气很好，我们去公园散步吧。\n'
	printf '這是一個繁體中文的句子，測試簡繁轉換。\n'
	printf 'Ｆｕｌｌｗｉｄｔｈ ＴＥＸＴ and <b>html</b> &amp; entities\n'
	printf 'a\n'
} >"$data/texts.txt"
cat >"$data/opts.txt" <<'OPTS'

--bits 128
--features word
--features shingle --ngram 2
--hash md5 --no-t2s
--compat python-simhash
--compat python-simhash --bits 128
--weight logtf --tf-cap 2 --html
--no-casefold --punct keep --space drop -n 4
--ngram=5 --ngram-cjk 1 --max-repeat 2 --tokenizer icu
OPTS
n=0
: >"$data/cli.tsv"
while IFS= read -r opts; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # opts is a list of words
	"$cli" fingerprint --lines $opts "$data/texts.txt" | sed "s/^/$n	/" >>"$data/cli.tsv" || exit 1
done <"$data/opts.txt"

# A long text: the sample and the edge cases again and again, each line
# numbered, about 3.5 MB.
i=0
while [ $i -lt 1700 ]; do
	sed "s/^/$i /" "$data/texts.txt"
	i=$((i + 1))
done >"$data/long.txt"
: >"$data/long_cli.tsv"
for opts in "" "--bits 128" "--features word" "--features shingle --ngram 2" \
	"--compat python-simhash" "--weight logtf --html" "--tokenizer icu --features word"; do
	# shellcheck disable=SC2086 # opts is a list of words
	hex=$("$cli" fingerprint $opts "$data/long.txt" | cut -f1) || exit 1
	printf '%s\t%s\n' "$opts" "$hex" >>"$data/long_cli.tsv"
done

hexof() { od -An -v -tx1 "$1" | tr -d ' \n'; }
: >"$data/fuzz_fp.tsv"
for f in "$root"/fuzz/corpus/fp_parse/* "$root"/fuzz/corpus/jsonl/* "$root"/fuzz/corpus/normalize/*; do
	[ -f "$f" ] && printf '%s\t%s\n' "$(basename "$f")" "$(hexof "$f")" >>"$data/fuzz_fp.tsv"
done
: >"$data/fuzz_norm.tsv"
for f in "$root"/fuzz/corpus/normalize/*; do
	[ -f "$f" ] || continue
	a=$("$cli" fingerprint "$f" 2>/dev/null | cut -f1) || a=error
	b=$("$cli" fingerprint --utf8 reject --bits 128 "$f" 2>/dev/null | cut -f1) || b=error
	printf '%s\t%s\t%s\t%s\n' "$(basename "$f")" "$(hexof "$f")" "${a:-error}" "${b:-error}" \
		>>"$data/fuzz_norm.tsv"
done
export SIMHASH_PG_INPUTS="$data"

tests=$(cd "$root/pg/sql" && ls *.sql | sed 's/\.sql$//' | sort)
regress=$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress
"$regress" --inputdir="$root/pg" --outputdir="$root/pg" --bindir="$pg_bindir" \
	--host="$PGHOST" --port="$PGPORT" --user=postgres --dbname=contrib_regression \
	$tests >"$PG_TMP/regress.log" 2>&1
status=$?
cat "$PG_TMP/regress.log"
if [ $status -ne 0 ] && [ -f "$root/pg/regression.diffs" ]; then
	head -n 200 "$root/pg/regression.diffs"
fi
# Crash recovery of simhash_scan: changes, an immediate stop, a restart that
# replays the WAL, then the index compared with a sequential scan.
crash_ok=0
psql="psql -X -q -t -A -v ON_ERROR_STOP=1 -h $PGHOST -p $PGPORT -U postgres -d contrib_regression"
if $psql -f "$root/pg/crash/before.sql" >"$PG_TMP/crash.log" 2>&1 && pg_cluster_crash &&
	$psql -f "$root/pg/crash/after.sql" >>"$PG_TMP/crash.log" 2>&1; then
	line=$(grep '^crash:' "$PG_TMP/crash.log")
	echo "$line"
	case $line in
	"crash: 0 mismatches, "*) [ "${line#crash: 0 mismatches, }" != "0 rows found" ] && crash_ok=1 ;;
	esac
	grep -q 'redo done' "$PG_TMP/server.log" || { echo "crash: the server did not recover"; crash_ok=0; }
fi
[ $crash_ok -eq 1 ] || { echo "crash recovery check failed:"; cat "$PG_TMP/crash.log"; }

# No line of the server log quotes a huge input (simhash_trust's errors).
LOG_LINE_MAX=4096
log_ok=1
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$PG_TMP/server.log")
echo "log: longest server log line $longest bytes (at most $LOG_LINE_MAX)"
[ "$longest" -le $LOG_LINE_MAX ] || log_ok=0

total=$(($(printf '%s\n' $tests | wc -l) + 2))
failed=$(grep -cE '^(not ok|test .* \.\.\. FAILED| .* \.\.\. FAILED)' "$PG_TMP/regress.log")
[ $status -ne 0 ] && [ "$failed" -eq 0 ] && failed=1
if [ $crash_ok -eq 0 ]; then
	failed=$((failed + 1))
	status=1
fi
if [ $log_ok -eq 0 ]; then
	failed=$((failed + 1))
	status=1
fi
echo "pg: $((total - failed)) passed, $failed failed"
exit $status
