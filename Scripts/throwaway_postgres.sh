# A throwaway PostgreSQL 15 server for tests and benchmarks (issue 15), sourced by Scripts/test
# and Scripts/bench-postgres:
#   . Scripts/throwaway_postgres.sh
#   throwaway_postgres_start [-c name=value ...]   # sets THROWAWAY_POSTGRES_URI
#   trap throwaway_postgres_stop EXIT              # stops it and removes its files, however the script ends
# initdb + pg_ctl from Debian's postgresql-15 in a temporary directory, listening on 127.0.0.1 on
# a free port and on a socket in that directory; trust authentication (loopback only), UTF-8 with
# LC_CTYPE C.UTF-8 (pg_trgm then indexes Hangul as letters). Run as root, the server runs as the
# `postgres` user (PostgreSQL refuses to run as root). Extra arguments are server settings.

THROWAWAY_POSTGRES_BIN=${THROWAWAY_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}
THROWAWAY_POSTGRES_DIR=""
THROWAWAY_POSTGRES_URI=""

_throwaway_postgres_as_owner() {
  # From /: the caller's directory may be one the postgres user cannot enter (a checkout under /root).
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

throwaway_postgres_start() {
  [ -x "$THROWAWAY_POSTGRES_BIN/initdb" ] || {
    echo "throwaway_postgres: $THROWAWAY_POSTGRES_BIN/initdb is missing; install Debian's postgresql-15 (Scripts/bootstrap does)" >&2
    return 1
  }
  THROWAWAY_POSTGRES_DIR=$(mktemp -d "${TMPDIR:-/tmp}/incidents-postgres.XXXXXX") || return 1
  chmod 755 "$THROWAWAY_POSTGRES_DIR"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$THROWAWAY_POSTGRES_DIR"; fi
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()') || return 1
  _throwaway_postgres_as_owner "$THROWAWAY_POSTGRES_BIN/initdb" -D "$THROWAWAY_POSTGRES_DIR/data" -A trust -U postgres \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$THROWAWAY_POSTGRES_DIR/initdb.log" 2>&1 || {
    echo "throwaway_postgres: initdb failed:" >&2; cat "$THROWAWAY_POSTGRES_DIR/initdb.log" >&2; return 1
  }
  _throwaway_postgres_as_owner "$THROWAWAY_POSTGRES_BIN/pg_ctl" -D "$THROWAWAY_POSTGRES_DIR/data" -l "$THROWAWAY_POSTGRES_DIR/log" -w \
    -o "-k $THROWAWAY_POSTGRES_DIR -p $port -c listen_addresses=127.0.0.1 $*" start >/dev/null || {
    echo "throwaway_postgres: the server did not start:" >&2; cat "$THROWAWAY_POSTGRES_DIR/log" >&2; return 1
  }
  THROWAWAY_POSTGRES_URI="postgresql://postgres@127.0.0.1:$port/postgres"
}

throwaway_postgres_stop() {
  [ -n "$THROWAWAY_POSTGRES_DIR" ] || return 0
  if [ -f "$THROWAWAY_POSTGRES_DIR/data/postmaster.pid" ]; then
    _throwaway_postgres_as_owner "$THROWAWAY_POSTGRES_BIN/pg_ctl" -D "$THROWAWAY_POSTGRES_DIR/data" -m fast -w stop >/dev/null 2>&1 \
      || _throwaway_postgres_as_owner "$THROWAWAY_POSTGRES_BIN/pg_ctl" -D "$THROWAWAY_POSTGRES_DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$THROWAWAY_POSTGRES_DIR"
  THROWAWAY_POSTGRES_DIR=""
}
