#!/bin/sh
# pg_cancel.sh [BUILD] - how soon a statement_timeout stops simhash_fingerprint()
# and simhash_text_similarity() on a long text: a text of MB megabytes
# (English-like lines, each numbered) in a table, fingerprinted whole (the
# baseline, same run), then again under a statement_timeout of TIMEOUT_MS and
# of half the whole call's time; prints the wall times and how late each
# timeout took effect (psql's start included), for the default options and
# each option that needs the whole text at once (--compat python-simhash,
# --html, the ICU tokenizer), and for simhash_text_similarity of the text
# with itself. The library polls the extension's interrupt hook through
# every step (docs/postgresql.md), so every case stops soon after its
# timeout. The baseline, in the same run: pg_sleep(1), which checks for
# interrupts all the time, so its lateness is psql's start and the error's
# way back. Skips cleanly without PostgreSQL or the installed extension.
#
# BUILD is not used (the text is made in SQL); it is taken as the other
# bench scripts take it. Environment: MB (50), TIMEOUT_MS (100).
set -eu
MB=${MB:-50}
TIMEOUT_MS=${TIMEOUT_MS:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/pg/cluster.sh"

if ! pg_available; then
	echo "bench pg cancel: PostgreSQL 15 not found, skipped"
	exit 0
fi
if [ ! -f "$(pg_config --sharedir)/extension/simhash.control" ] &&
	! make -s -C "$root" pg-install >/dev/null 2>&1; then
	echo "bench pg cancel: the extension is not installed (make pg-install), skipped"
	exit 0
fi
trap pg_cluster_stop EXIT
trap 'exit 1' INT TERM
pg_cluster_start
psql="psql -X -q -t -A -d postgres"
$psql -c "CREATE EXTENSION simhash"
# ~70 bytes a line; STORAGE EXTERNAL: stored uncompressed, as a large text
# column usually is (the call detoasts it either way).
$psql <<SQL
CREATE TABLE big (body text);
ALTER TABLE big ALTER body SET STORAGE EXTERNAL;
INSERT INTO big SELECT string_agg(format('%s the city council approved the new bicycle lanes %s', i,
					  substr(md5(i::text), 1, 12)), E'\n')
FROM generate_series(1, $MB * 1048576 / 70) i;
SQL
echo "PostgreSQL cancel: $($psql -c "SELECT round(octet_length(body) / 1048576.0) FROM big") MB" \
	"text, statement_timeout ${TIMEOUT_MS} ms, wall times on $(nproc) cores"
now_ms() { date +%s%3N; }
# case LABEL SQL: the whole call, then the two timeouts.
case_line() {
	t0=$(now_ms)
	$psql -c "$2" >/dev/null
	whole=$(($(now_ms) - t0))
	line="whole call $whole ms"
	for timeout in "$TIMEOUT_MS" $((whole / 2)); do
		t0=$(now_ms)
		$psql -c "SET statement_timeout = $timeout" -c "$2" >/dev/null 2>&1 || :
		took=$(($(now_ms) - t0))
		line="$line | timeout $timeout ms: stopped after $took ms ($((took - timeout)) ms late)"
	done
	printf '%-34s %s\n' "$1:" "$line"
}
case_line "pg_sleep(1) (baseline)" "SELECT pg_sleep(1)"
for opts in "" "--compat python-simhash" "--html" "--tokenizer icu --features word"; do
	case_line "${opts:-default options}" "SELECT simhash_fingerprint(body, '$opts') FROM big"
done
case_line "text_similarity --features shingle" \
	"SELECT cosine FROM big, simhash_text_similarity(body, body, '--features shingle')"
