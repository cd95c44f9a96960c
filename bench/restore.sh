#!/usr/bin/env bash
# bench/restore.sh: backup and restore time per GiB (issue 24's figure).
#
# A 2-node sandbox (a backup copies a node that is not the writer) is
# filled with sysbench tables up to RESTORE_GIB of data, backed up with
# `galeon cluster backup` through its control plane (a galeon proxy with
# its embedded etcd), then restored with `galeon cluster restore` into a
# 1-node cluster and into a 3-node one (the others join by state
# transfer from the first). It prints the data size, each time and the
# time per GiB, and removes everything it made (sandboxes, the proxy by
# its PID, the backup).
#
#   RESTORE_GIB=1 bash bench/restore.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
G=${GALEON_BIN:-$ROOT/bin/galeon}
GIB=${RESTORE_GIB:-1}
BASE=${RESTORE_BASE_PORT:-7700}
NAME=benchrs
TMP=$(mktemp -d)
PROXY_PID=""
BACKUP_DIR=""

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}
cleanup() {
	set +e
	[[ -n $PROXY_PID ]] && kill "$PROXY_PID" 2>/dev/null && wait "$PROXY_PID" 2>/dev/null
	for n in "$NAME" "${NAME}r1" "${NAME}r3"; do
		[[ -e /var/tmp/galeon/$n ]] && "$G" sandbox destroy --name "$n" >/dev/null 2>&1
	done
	[[ -n $BACKUP_DIR && -d $BACKUP_DIR ]] && rm -rf "$BACKUP_DIR"
	rm -rf "$TMP"
	return 0
}
trap cleanup EXIT
[[ $GIB =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "RESTORE_GIB must be a number of GiB, got '$GIB'"
[[ -x $G ]] || die "$G is not built: make build"
for n in "$NAME" "${NAME}r1" "${NAME}r3"; do
	[[ -e /var/tmp/galeon/$n ]] && die "sandbox $n exists (an interrupted run?): $G sandbox destroy --name $n"
done

log "sandbox $NAME: 2 nodes on base port $BASE"
"$G" sandbox up --name "$NAME" --nodes 2 --base-port "$BASE" >"$TMP/up.log" 2>&1 || {
	tail -n 20 "$TMP/up.log" >&2
	die "sandbox up failed"
}
eval "$("$G" sandbox env --name "$NAME")"
"$G" sandbox proxy-config --name "$NAME" --listen 127.0.0.1:$((BASE + 33)) --admin-listen 127.0.0.1:$((BASE + 32)) \
	--http-listen 127.0.0.1:$((BASE + 80)) >"$TMP/proxy.toml"
"$G" proxy --config "$TMP/proxy.toml" >"$TMP/proxy.log" 2>&1 &
PROXY_PID=$!

IFS=, read -r -a NODES <<<"$GALEON_SANDBOX_NODES"
N1=${NODES[0]}
# sysbench's rows take about 240 bytes each with their index on disk.
TABLES=8
ROWS=$(python3 -c "print(int($GIB * 2**30 / 240 / $TABLES))")
log "filling sbtest: $TABLES tables of $ROWS rows (about $GIB GiB)"
t0=$SECONDS
sysbench oltp_read_write --mysql-host="${N1%:*}" --mysql-port="${N1##*:}" --mysql-user="$GALEON_APP_USER" \
	--mysql-password="$GALEON_APP_PASSWORD" --mysql-db=sbtest --tables=$TABLES --table-size="$ROWS" --threads=2 \
	prepare >"$TMP/prepare.log" 2>&1 || {
	tail -n 5 "$TMP/prepare.log" >&2
	die "sysbench prepare failed"
}
log "filled in $((SECONDS - t0)) s"
DATA_BYTES=$(MYSQL_PWD=$GALEON_ADMIN_PASSWORD mariadb -h"${N1%:*}" -P"${N1##*:}" -u"$GALEON_ADMIN_USER" -N -B -e \
	"SELECT SUM(data_length + index_length) FROM information_schema.TABLES WHERE table_schema = 'sbtest'")

# The agents must have registered the nodes in the proxy's etcd.
registered=0
for _ in $(seq 60); do
	if "$G" status --name "$NAME" --once 2>/dev/null | grep -q 'agent node2 .*Synced'; then
		registered=1
		break
	fi
	sleep 1
done
if ((!registered)); then
	tail -n 5 "$TMP/proxy.log" >&2
	die "the nodes' agents did not register in the proxy's etcd within 60 s"
fi
log "backup"
t0=$(date +%s.%N)
"$G" cluster backup --name "$NAME" --dir "$TMP/backups" >"$TMP/backup.log" 2>&1 || {
	tail -n 10 "$TMP/backup.log" >&2
	die "backup failed"
}
t1=$(date +%s.%N)
BACKUP_DIR=$TMP/backups
B=$(sed -n 's/^backup of [^ ]* in \([^:]*\): .*/\1/p' "$TMP/backup.log")
[[ -d $B ]] || die "no backup directory in: $(head -n 3 "$TMP/backup.log")"
BACKUP_S=$(python3 -c "print(round($t1 - $t0, 1))")
COPY_BYTES=$(du -sb "$B" | cut -f1)

restore() { # NAME NODES PORT -> seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$G" cluster restore --from-backup "$B" --name "$1" --nodes "$2" --base-port "$3" --discovery none >"$TMP/restore-$1.log" 2>&1 || {
		tail -n 10 "$TMP/restore-$1.log" >&2
		die "restore into $1 failed"
	}
	t1=$(date +%s.%N)
	"$G" sandbox destroy --name "$1" >/dev/null 2>&1
	python3 -c "print(round($t1 - $t0, 1))"
}
log "restore into 1 node"
R1=$(restore "${NAME}r1" 1 $((BASE + 1000)))
log "restore into 3 nodes"
R3=$(restore "${NAME}r3" 3 $((BASE + 1000)))

python3 - "$DATA_BYTES" "$COPY_BYTES" "$BACKUP_S" "$R1" "$R3" <<'EOF'
import sys
data, copy, b, r1, r3 = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
gib = copy / 2**30
print("data (sbtest, data+index): %.2f GiB; the prepared copy: %.2f GiB" % (data / 2**30, gib))
print("backup (copy, prepare, check; from a drained, desynchronised node): %.1f s = %.1f s per GiB" % (b, b / gib))
print("restore into 1 node (copy-back, start): %.1f s = %.1f s per GiB" % (r1, r1 / gib))
print("restore into 3 nodes (and two state transfers): %.1f s = %.1f s per GiB" % (r3, r3 / gib))
EOF
