#!/bin/sh
# quality.sh BUILD - the quality half of `make bench`: precision, recall and F1
# of "Hamming distance <= k" on the evaluation sets of ../shared/corpus/eval,
# for each feature configuration below, k = 0..12 (0..24 at 128 bits).
#
# For each configuration and set: `simhash fingerprint --jsonl` (one thread:
# two configurations run at once), build/bench/pairs lists the pairs within
# KMAX, and the corpus's own score.py scores them (--json). natural is scored
# at Jaccard >= 0.8 (the near-duplicate threshold) and at 0.5 and 0.9 too.
# quality_table.py then prints the summary and writes BUILD/bench/out/quality.md
# (summary + per-k tables of the default), from which docs/quality.md is made.
#
# Environment: SIMHASH_CORPUS (default ../shared/corpus), QUALITY_JOBS (2).
set -eu

# The configurations: NAME|OPTIONS. `default` must stay first (the per-k
# tables are printed for it). A line whose options the CLI does not know
# (simhash fingerprint --help) is skipped with a note, not failed.
configs() {
	cat <<'LIST'
default|
char2|--features char -n 2
char4|--features char -n 4
char5|--features char -n 5
char3-cjk1|--features char -n 3 --ngram-cjk 1
char3-cjk3|--features char -n 3 --ngram-cjk 3
char2-cjk2|--features char -n 2 --ngram-cjk 2
word|--features word
word-icu|--features word --tokenizer icu
shingle2|--features shingle -n 2
shingle3|--features shingle -n 3
shingle3-logtf|--features shingle -n 3 --weight logtf
shingle3-icu-logtf|--features shingle -n 3 --tokenizer icu --weight logtf
default-logtf|--weight logtf
default-binary|--weight binary
default-no-t2s|--no-t2s
default-punct-keep|--punct keep
default-128|--bits 128
shingle3-logtf-128|--features shingle -n 3 --weight logtf --bits 128
python-simhash|--compat python-simhash
python-simhash-128|--compat python-simhash --bits 128
LIST
}

# one BUILD CORPUS OUT NAME: score configuration NAME on every set.
one() {
	build=$1 corpus=$2 out=$3 name=$4
	opts=$(configs | sed -n "s/^$name|//p")
	kmax=12
	case " $opts " in *" --bits 128 "*) kmax=24 ;; esac
	tmp=$out/tmp.$name
	mkdir -p "$tmp"
	for set in natural short_zh short_en; do
		# shellcheck disable=SC2086 # opts is a list of words
		"$build/simhash" fingerprint -j 1 --jsonl "$corpus/eval/$set.jsonl" $opts > "$tmp/fp.tsv"
		"$build/bench/pairs" "$kmax" < "$tmp/fp.tsv" > "$tmp/pairs.tsv"
		if [ "$set" = natural ]; then
			for t in 0.8 0.5 0.9; do
				python3 "$corpus/score.py" natural "$tmp/pairs.tsv" --kmax "$kmax" \
					--threshold "$t" --json > "$out/json/$name.natural@$t.json"
			done
		else
			python3 "$corpus/score.py" "$set" "$tmp/pairs.tsv" --kmax "$kmax" \
				--json > "$out/json/$name.$set.json"
		fi
	done
	rm -rf "$tmp"
	echo "quality: $name done" >&2
}

if [ "${1:-}" = --one ]; then
	shift
	one "$@"
	exit 0
fi

BUILD=${1:-build}
CORPUS=${SIMHASH_CORPUS:-../shared/corpus}
OUT=$BUILD/bench/out
if [ ! -d "$CORPUS/eval" ]; then
	echo "bench: $CORPUS not found, skipped"
	exit 0
fi
rm -rf "$OUT/json"
mkdir -p "$OUT/json"

# Keep the configurations whose every option the CLI offers.
help=$("$BUILD/simhash" fingerprint --help)
: > "$OUT/configs.txt"
configs | while IFS='|' read -r name opts; do
	ok=1
	for o in $opts; do
		case $o in
		--*) printf '%s\n' "$help" | grep -q -- "$o\b" || ok=0 ;;
		esac
	done
	if [ $ok = 1 ]; then
		# shellcheck disable=SC2086 # opts is a list of words
		printf '%s|%s|%s\n' "$name" "$opts" "$("$BUILD/simhash" scheme $opts)" >> "$OUT/configs.txt"
	else
		echo "quality: $name skipped: this simhash has no option among: $opts" >&2
	fi
done

cut -d'|' -f1 "$OUT/configs.txt" |
	xargs -P "${QUALITY_JOBS:-2}" -I{} sh "$0" --one "$BUILD" "$CORPUS" "$OUT" {}
python3 bench/quality_table.py "$OUT/configs.txt" "$OUT/json" > "$OUT/quality.md"
cat "$OUT/quality.md"
echo "quality: table written to $OUT/quality.md"
