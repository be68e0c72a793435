# cluster.sh - sourced by pg/run-check.sh and bench/pg.sh: a scratch PostgreSQL
# server in a temporary folder, on a free port, with its socket in that folder.
# initdb and postgres refuse to run as root: as root, they run as the `postgres`
# user (runuser). pg_cluster_start sets PGHOST, PGPORT, PGUSER and PG_TMP;
# pg_cluster_stop stops the server and removes the folder (call it from a trap).

pg_bindir=$(pg_config --bindir 2>/dev/null)

# pg_available: 0 if a server, initdb and the server headers' pg_config are here.
pg_available() {
	[ -n "$pg_bindir" ] && [ -x "$pg_bindir/initdb" ] && [ -x "$pg_bindir/pg_ctl" ] || return 1
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 && command -v runuser >/dev/null 2>&1 || return 1
	fi
	return 0
}

pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pg_cluster_start [SETTING=VALUE...]: extra server settings, as -c options.
pg_cluster_start() {
	PG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/simhash-pg.XXXXXX") || return 1
	chmod 755 "$PG_TMP"
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres "$PG_TMP"
	fi
	PGPORT=$(pg_free_port)
	PGHOST=$PG_TMP
	PGUSER=postgres
	export PGHOST PGPORT PGUSER PG_TMP
	pg_as "$pg_bindir/initdb" -D "$PG_TMP/data" -U postgres -A trust -E UTF8 --locale=C \
		--no-sync >"$PG_TMP/initdb.log" 2>&1 || { cat "$PG_TMP/initdb.log"; return 1; }
	PG_OPTS="-p $PGPORT -k $PG_TMP -c listen_addresses= -c fsync=off"
	for s in "$@"; do
		PG_OPTS="$PG_OPTS -c $s"
	done
	pg_as "$pg_bindir/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -o "$PG_OPTS" -w start \
		>/dev/null || { cat "$PG_TMP/server.log"; return 1; }
}

# pg_cluster_crash: stops the server as a crash would (immediate mode: no
# checkpoint, shared buffers lost), then starts it again, so that it recovers
# from the WAL.
pg_cluster_crash() {
	pg_as "$pg_bindir/pg_ctl" -D "$PG_TMP/data" -m immediate -w stop >/dev/null || return 1
	pg_as "$pg_bindir/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/server.log" -o "$PG_OPTS" -w start \
		>/dev/null || { cat "$PG_TMP/server.log"; return 1; }
}

pg_cluster_stop() {
	if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP/data" ]; then
		pg_as "$pg_bindir/pg_ctl" -D "$PG_TMP/data" -m immediate -w stop >/dev/null 2>&1
	fi
	if [ -n "${PG_TMP:-}" ]; then
		rm -rf "$PG_TMP"
	fi
	PG_TMP=
}
