# timev.sh - sourced by the bench scripts that need it; $tmp must be a scratch folder.
# timev CMD...: runs CMD under /usr/bin/time -v, its output to /dev/null;
# sets wall (s), cpu (user + system, s) and rss (peak, MB).
timev() {
	/usr/bin/time -v "$@" 2>"$tmp/time" >/dev/null
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0;
		for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$tmp/time")
	rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tmp/time")
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$tmp/time")
}
