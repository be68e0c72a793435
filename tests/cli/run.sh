#!/bin/sh
# End-to-end tests of the simhash command, in the manner of jq's tests/jq.test:
# each case in tests/cli/*.txt is a shell command with its expected standard
# output, exit status and standard error.
#
#   sh tests/cli/run.sh build/simhash      (from the repository root)
#   sh tests/cli/run.sh build/simhash tests/cli/store.txt   (those files only)
#
# Case files hold cases separated by their "%%" lines; '#' lines outside a
# case's output are comments:
#
#   %% NAME         starts a case
#   $ COMMAND       a shell command line (several "$" lines are joined by
#                   newlines); run by sh in an empty scratch directory, with
#                   `simhash` on PATH meaning the binary under test
#   > TEXT          the next line of standard output, exactly (">" alone: an
#                   empty line); without any ">" or "~" line, stdout must be empty
#   ~ REGEX         the next line of standard output matches this extended
#                   regular expression, whole line (grep -E)
#   ? N             the exit status (default 0)
#   ! TEXT          standard error contains TEXT; without any "!" line,
#                   standard error must be empty
#
# Prints one line per failure with what differed, then
# "cli: N passed, N failed"; exits 1 if any case failed.
bin=${1:?usage: sh tests/cli/run.sh PATH/TO/simhash}
here=$(cd "$(dirname "$0")" && pwd)
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
if [ ! -x "$bin" ]; then
	echo "cli: $bin is not an executable"
	echo "cli: 0 passed, 1 failed"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/bin"
ln -s "$bin" "$tmp/bin/simhash"
passed=0
failed=0
n=0

# Prints why the current case failed, indented.
report() {
	failed=$((failed + 1))
	echo "FAIL: $name ($file)"
	printf '%s\n' "$cmd" | sed 's/^/    $ /'
	echo "    $1"
	if [ -s "$dir.err" ]; then sed 's/^/    stderr: /' "$dir.err" | head -n 5; fi
	if [ -s "$dir.out" ]; then sed 's/^/    stdout: /' "$dir.out" | head -n 10; fi
}

# Checks stdout against the expectations in $dir.exp ("=TEXT" or "~REGEX" lines).
check_stdout() {
	want=$(wc -l <"$dir.exp")
	got=$(wc -l <"$dir.out")
	# A last line without a newline still counts as a line.
	if [ -s "$dir.out" ] && [ "$(tail -c 1 "$dir.out" | od -An -c | tr -d ' ')" != '\n' ]; then
		got=$((got + 1))
	fi
	if [ "$want" -ne "$got" ]; then
		report "expected $want line(s) of output, got $got"
		return 1
	fi
	i=0
	while IFS= read -r spec; do
		i=$((i + 1))
		line=$(sed -n "${i}p" "$dir.out")
		text=${spec#?}
		case $spec in
		=*) [ "$line" = "$text" ] && continue ;;
		~*) printf '%s\n' "$line" | grep -Eq "^($text)\$" && continue ;;
		esac
		report "output line $i: expected '$text', got '$line'"
		return 1
	done <"$dir.exp"
	return 0
}

run_case() {
	[ -n "$name" ] || return 0
	n=$((n + 1))
	dir=$tmp/case$n
	mkdir "$dir"
	(cd "$dir" && PATH="$tmp/bin:$PATH" LC_ALL=C sh -c "$cmd") >"$dir.out" 2>"$dir.err" </dev/null
	rc=$?
	if [ "$rc" -ne "$status" ]; then
		report "expected exit status $status, got $rc"
	elif ! check_stdout; then
		:
	elif [ -z "$has_err" ] && [ -s "$dir.err" ]; then
		report "expected no standard error"
	elif [ -n "$has_err" ] && ! err_ok; then
		:
	else
		passed=$((passed + 1))
	fi
	rm -rf "$dir" "$dir.out" "$dir.err" "$dir.exp" "$dir.want"
	name=
}

err_ok() {
	while IFS= read -r want; do
		if ! grep -qF -- "$want" "$dir.err"; then
			report "expected standard error to contain '$want'"
			return 1
		fi
	done <"$dir.want"
	return 0
}

shift
[ $# -gt 0 ] || set -- "$here"/*.txt
for file in "$@"; do
	name=
	while IFS= read -r l || [ -n "$l" ]; do
		case $l in
		"%% "*)
			run_case
			name=${l#%% }
			cmd=
			status=0
			has_err=
			dir=$tmp/case$((n + 1))
			: >"$dir.exp"
			: >"$dir.want"
			;;
		'$ '*)
			if [ -z "$cmd" ]; then cmd=${l#??}; else cmd="$cmd
${l#??}"; fi
			;;
		'>') echo "=" >>"$dir.exp" ;;
		'> '*) printf '=%s\n' "${l#??}" >>"$dir.exp" ;;
		'~ '*) printf '~%s\n' "${l#??}" >>"$dir.exp" ;;
		'? '*) status=${l#??} ;;
		'! '*)
			has_err=1
			printf '%s\n' "${l#??}" >>"$dir.want"
			;;
		'#'* | '') ;;
		*)
			echo "cli: $(basename "$file"): unrecognized line: $l"
			failed=$((failed + 1))
			;;
		esac
	done <"$file"
	run_case
done

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
