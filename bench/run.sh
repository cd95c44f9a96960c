#!/usr/bin/env bash
# galeon benchmark: direct node1 vs HAProxy 2.6 (TCP) vs galeon proxy, on a
# private 3-node MariaDB Galera sandbox. See bench/README.md.
#
# Everything this script starts (sandbox, haproxy, galeon, sysbench,
# connscale) is stopped by the PID it recorded, and the sandbox is destroyed,
# whether the run succeeds, fails or is interrupted.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)

BENCH_TIME=${BENCH_TIME:-20}                      # seconds per sysbench run and for the 2,000-client test
BENCH_ROUNDS=${BENCH_ROUNDS:-1}                   # repeat the round-robin; the report shows medians
BENCH_GALEON_READS=${BENCH_GALEON_READS:-writer}  # writer: reads on node1 like HAProxy; readers: node2/node3
BENCH_WORKLOADS=${BENCH_WORKLOADS:-all}           # comma list of workload ids (see WORKLOADS below)
BENCH_LARGE=${BENCH_LARGE:-1}                      # 0 skips the large-value memory test
BENCH_LARGE_VALUES=${BENCH_LARGE_VALUES:-6}        # values sent through and read back (3 connections)
BENCH_LARGE_MIB=${BENCH_LARGE_MIB:-24}             # MiB per value
BENCH_LARGE_QUIET=${BENCH_LARGE_QUIET:-30}         # seconds idle before the last RSS reading
BENCH_CONNSCALE=${BENCH_CONNSCALE:-1}             # 0: skip the connection-scale tests
BENCH_IDLE=${BENCH_IDLE:-5000}                    # idle client connections
BENCH_CLIENTS=${BENCH_CLIENTS:-2000}              # concurrent point-select clients
BENCH_MANY=${BENCH_MANY-1000 4000}               # client counts of the think-time test (direct, HAProxy, galeon); empty skips it
BENCH_THINK_MS=${BENCH_THINK_MS:-50}              # think time between one client's statements, ms (uniformly 0.5x-1.5x)
BENCH_CHURN=${BENCH_CHURN:-8}                     # workers of the churn test (connect, one statement, quit); 0 skips it
BENCH_PROFILE=${BENCH_PROFILE-point_select_t8,read_write_t16}  # workloads run once more against galeon under a Go CPU profile (/api/profile): where its CPU goes per query; empty skips
BENCH_REPLICA=${BENCH_REPLICA:-0}                 # 1: an asynchronous replica of node1; the write workloads report its lag (bench/cmd/replag)
BENCH_PROXY_NICE=${BENCH_PROXY_NICE:-}            # both proxies start with this nice value (e.g. -5: ahead of the nodes and sysbench for the CPU); empty: the bench's own
BENCH_SANDBOX=${BENCH_SANDBOX:-bench}
# Where the nodes' data lives. On this VM the disk stalls now and then under
# the write workloads: nodes were seen blocked for 5-9 s ("InnoDB: Long wait
# (5 seconds) for double-write buffer flush", Galera's "last inactive check
# ... PT8.8S" on 2026-11-28), which the proxies then see as dead nodes. The
# bench compares proxies, not disks, so by default the data goes to memory
# (/dev/shm) when it and the machine's available memory have 8 GiB free; set
# a directory on disk to include it.
if [[ -z ${BENCH_SANDBOX_DIR:-} ]]; then
	BENCH_SANDBOX_DIR=/var/tmp/galeon/$BENCH_SANDBOX
	if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] && (($(df -k --output=avail /dev/shm | tail -n1) > 8 * 1024 * 1024)) &&
		(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) > 8 * 1024 * 1024)); then
		BENCH_SANDBOX_DIR=/dev/shm/galeon-bench/$BENCH_SANDBOX
	fi
fi
BENCH_BASE_PORT=${BENCH_BASE_PORT:-7400}          # node i on BENCH_BASE_PORT+i
BENCH_MAX_CONNECTIONS=${BENCH_MAX_CONNECTIONS:-6000}  # mariadbd max_connections: HAProxy's idle test needs one per client
# The sandbox's failover-tuned timeouts (suspect after 1 s) evict a node that
# is merely starved of CPU by the benchmark; on this shared 2-core host
# Galera threads were seen unscheduled for 11 s. No failover is tested here,
# so use very generous ones.
BENCH_PROVIDER_OPTIONS=${BENCH_PROVIDER_OPTIONS:-evs.suspect_timeout=PT30S evs.inactive_timeout=PT60S evs.install_timeout=PT30S evs.keepalive_period=PT1S}
BENCH_HAPROXY_PORT=${BENCH_HAPROXY_PORT:-7306}
BENCH_GALEON_PORT=${BENCH_GALEON_PORT:-7433}
BENCH_GALEON_ADMIN_PORT=${BENCH_GALEON_ADMIN_PORT:-7432}
BENCH_GALEON_HTTP_PORT=${BENCH_GALEON_HTTP_PORT:-7480}
BENCH_GALEON_MAX_BACKEND=${BENCH_GALEON_MAX_BACKEND:-50}  # galeon max backend connections per node in the 2,000-client test
BENCH_GALEON_THREADS=${BENCH_GALEON_THREADS:-}     # galeon proxy.threads (GOMAXPROCS); empty: galeon's default
# off: kernel.sched_autogroup_enabled = 0 while the bench runs (restored at
# exit), when this user may write it; keep: leave it. With autogroups (the
# Debian default) every process that starts its own session (each mariadbd
# of the sandbox, galeon --background) gets its own scheduling group, and on
# this 2-core VM (kernel 6.18) whole nodes were left unrun for 2-9 s under
# load: 3-7 such stalls of 2 s or more per bench run, none in two runs with
# autogroups off (bench/README, 2026-11-28).
BENCH_AUTOGROUP=${BENCH_AUTOGROUP:-off}
# galeon pool.max_missed_checks. HAProxy here has no health checks, so it
# never takes a node out; galeon's plain check would, when a node's threads
# do not run for over 2 checks (4 s): on this 2-core VM runnable node threads
# were seen not running for 2-4 s (schedstat, 2026-11-28) while sysbench's 64
# threads and a proxy ran. 10 (about 20 s of silence) keeps both routing the
# same way; a node still taken out is marked in the report.
# Set it empty for a galeon built before pool.max_missed_checks existed.
BENCH_GALEON_MAX_MISSED=${BENCH_GALEON_MAX_MISSED-10}
BENCH_GALEON_RYW=${BENCH_GALEON_RYW:-}             # galeon galera.read_your_writes: on or off; empty: galeon's default (on)
BENCH_GALEON_OUTCOME=${BENCH_GALEON_OUTCOME:-}     # galeon galera.commit_outcome: on, commits or off (transaction_replay: off with off, else on); empty: galeon's default (on)
BENCH_GALEON_SYSBENCH_BACKEND=${BENCH_GALEON_SYSBENCH_BACKEND:-200}  # ... in the sysbench runs (galeon's default pool size: one per client, as HAProxy has)
BENCH_GALEON_ADMIN_QUERY=${BENCH_GALEON_ADMIN_QUERY:-SELECT ConnUsed, ConnFree FROM stats_connection_pool}  # integers summed
GALEON_BIN=${GALEON_BIN:-$ROOT/bin/galeon}

TABLES=4
TABLE_SIZE=10000
# id|sysbench test|threads|--db-ps-mode|more sysbench options
WORKLOADS=(
	"point_select_t8|oltp_point_select|8|disable|"
	"point_select_t64|oltp_point_select|64|disable|"
	"read_only_t8|oltp_read_only|8|disable|"
	"read_only_t64|oltp_read_only|64|disable|"
	"read_write_t16|oltp_read_write|16|disable|"
	"read_write_t16_ps|oltp_read_write|16|auto|"
	"write_only_t16|oltp_write_only|16|disable|"
	# The same writes, each in autocommit (galeon wraps each with a
	# commit marker: galera.commit_outcome). Without a transaction the
	# DELETE and INSERT of one id by two threads can collide: 1062 and
	# 1213 are ignored (and counted).
	"write_only_autocommit_t16|oltp_write_only|16|disable|--skip_trx=on --mysql-ignore-errors=1062,1213"
	# Large results: each range query returns 1,000 rows (~190 KiB), so
	# the cost per byte relayed shows.
	"read_only_range1000_t8|oltp_read_only|8|disable|--range_size=1000"
)
TARGETS=(direct haproxy galeon)

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $BENCH_TIME =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIME must be a positive integer (seconds), got '$BENCH_TIME'"
[[ $BENCH_ROUNDS =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer, got '$BENCH_ROUNDS'"
case $BENCH_GALEON_READS in writer | readers) ;; *) die "BENCH_GALEON_READS must be writer or readers" ;; esac
case $BENCH_AUTOGROUP in off | keep) ;; *) die "BENCH_AUTOGROUP must be off or keep" ;; esac
for tool in sysbench haproxy mariadb python3 go ss getconf; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install sysbench haproxy mariadb-client iproute2 python3; Go from go.mod)"
done

# 5,000 idle clients need ~2 fds each in the proxy (HAProxy: client + server
# socket). Raise the soft limit as far as allowed; children inherit it.
ulimit -n 65535 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE=$(ulimit -n)
CLK_TCK=$(getconf CLK_TCK)

# ------------------------------------------------------------ state, cleanup

TS=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$BENCH_DIR/results/$TS
LOGS=$RESULTS/logs
RAW=$RESULTS/raw.jsonl
TMP=$(mktemp -d /tmp/galeon-bench.XXXXXX)
mkdir -p "$LOGS"
: >"$RAW"

SANDBOX_OWNED=0
HAPROXY_PID=""
GALEON_PID=""
CHILD_PID="" # the sysbench or connscale run in progress
FETCH_PID="" # the request for a CPU profile in progress (run_profile)
LAG_PID=""   # replag sampling the replica's lag (BENCH_REPLICA=1)
PERF_PID=""  # perf stat counting the proxy's system calls
G=""         # the galeon binary (a private copy)
START_SECONDS=$SECONDS

# stop_pid PID: TERM, up to 10 s grace, then KILL; only if PID is still our
# child (guards against a recycled PID).
stop_pid() {
	local pid=$1 i
	[[ -n $pid ]] || return 0
	proc_stat "$pid" || return 0
	[[ ${STAT[1]} == "$$" ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

destroy_sandbox() {
	# `sandbox up` removes the directory itself when it fails.
	[[ -e $BENCH_SANDBOX_DIR ]] || SANDBOX_OWNED=0
	if [[ $SANDBOX_OWNED == 1 ]]; then
		local f n
		for f in "$BENCH_SANDBOX_DIR"/node*/error.log; do
			[[ -f $f ]] || continue
			n=$(basename "$(dirname "$f")")
			tail -n 2000 "$f" >"$LOGS/$n-error.log" 2>/dev/null || true
		done
		log "destroying sandbox $BENCH_SANDBOX"
		"$G" sandbox destroy --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR" >>"$TMP/sandbox.log" 2>&1 ||
			log "WARNING: sandbox destroy failed: $(tail -n 3 "$TMP/sandbox.log")"
		SANDBOX_OWNED=0
	fi
}

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	stop_pid "$CHILD_PID"
	stop_pid "$LAG_PID"
	stop_pid "$FETCH_PID"
	stop_pid "$PERF_PID"
	stop_pid "$GALEON_PID"
	stop_pid "$HAPROXY_PID"
	destroy_sandbox
	if [[ -n $AUTOGROUP_WAS ]]; then
		echo "$AUTOGROUP_WAS" >/proc/sys/kernel/sched_autogroup_enabled ||
			log "WARNING: could not set kernel.sched_autogroup_enabled back to $AUTOGROUP_WAS"
	fi
	rm -rf "$TMP"
	exit "$rc"
}
AUTOGROUP_WAS=
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

record() { python3 "$BENCH_DIR/report.py" record "$RAW" "$@"; }

# ------------------------------------------------------------ /proc helpers

# Pure bash (no fork): these run every 0.5 s next to the benchmark.
# proc_stat PID: the fields of /proc/PID/stat after "PID (comm) " in the
# array STAT (STAT[0] is field 3, the state: field N is STAT[N-3]);
# fails if PID is gone.
proc_stat() {
	local line
	[[ -n $1 ]] && read -r line 2>/dev/null </proc/"$1"/stat || return 1
	read -r -a STAT <<<"${line##*) }"
}
cpu_ticks() { # utime+stime of PID (all threads), in clock ticks; -1 if gone
	REPLY=-1
	proc_stat "$1" || return 0
	REPLY=$((STAT[11] + STAT[12]))
}
nodes_cpu_ticks() { # utime+stime of the three mariadbd, in clock ticks; -1 if any is gone
	local sum=0 pid
	((${#NODE_PIDS[@]} == 3)) || { REPLY=-1; return; }
	for pid in "${NODE_PIDS[@]}"; do
		cpu_ticks "$pid"
		((REPLY >= 0)) || return 0
		sum=$((sum + REPLY))
	done
	REPLY=$sum
}
# nodes_questions: the three nodes' Questions (statements they ran for
# clients, galeon's own included) summed; -1 if a node does not answer.
# Per client query it shows what a proxy adds on the nodes (state
# restores, pings, causal waits, markers).
nodes_questions() {
	local sum=0 n q
	for n in "${NODES[@]}"; do
		q=$(MYSQL_PWD=$GALEON_ADMIN_PASSWORD mariadb -h"${n%:*}" -P"${n##*:}" -u"$GALEON_ADMIN_USER" --connect-timeout=3 -N -B -e \
			"SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'" 2>/dev/null) || q=""
		[[ $q =~ ^[0-9]+$ ]] || { REPLY=-1; return; }
		sum=$((sum + q))
	done
	REPLY=$sum
}
# nodes_counters: the three nodes' summed status counters that say what
# a proxy asks of them besides statements, as "NAME=VALUE ..." in REPLY.
NODE_COUNTERS="'COM_ADMIN_COMMANDS','COM_CHANGE_USER','BYTES_RECEIVED','BYTES_SENT','CONNECTIONS'"
nodes_counters() {
	local n out
	REPLY=""
	declare -A tot=()
	for n in "${NODES[@]}"; do
		out=$(MYSQL_PWD=$GALEON_ADMIN_PASSWORD mariadb -h"${n%:*}" -P"${n##*:}" -u"$GALEON_ADMIN_USER" --connect-timeout=3 -N -B -e \
			"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ($NODE_COUNTERS)" 2>/dev/null) || return 0
		while read -r k v; do
			[[ $v =~ ^[0-9]+$ ]] && tot[$k]=$((${tot[$k]:-0} + v))
		done <<<"$out"
	done
	for k in "${!tot[@]}"; do REPLY+="$k=${tot[$k]} "; done
}
# run_delay_us PID: how long PID's threads have waited, runnable, for a
# CPU (the second field of each thread's /proc/PID/task/TID/schedstat),
# summed, in µs; -1 if PID is gone. A thread that exits takes its total
# with it: exact for the proxies (their threads live as long as they
# do), approximate for the nodes, whose connection threads come and go
# (a run's delta can even come out negative).
run_delay_us() {
	local v
	REPLY=-1
	[[ -n $1 && -r /proc/$1/schedstat ]] || return 0
	v=$({ cat /proc/"$1"/task/*/schedstat 2>/dev/null || true; } | awk '{s += $2} END {printf "%.0f", s / 1000}') || return 0
	[[ $v =~ ^[0-9]+$ ]] && REPLY=$v
	return 0
}
# nodes_sched: the three mariadbd's user and system clock ticks, their
# threads' voluntary and involuntary context switches and the time they
# waited for a CPU (µs), as counters for counters_delta ("UTIME=…
# STIME=… VCSW=… NVCSW=… RUN_DELAY_US=…").
nodes_sched() {
	local pid a b u=0 st=0 v=0 nv=0 rd=0
	for pid in "${NODE_PIDS[@]}"; do
		proc_stat "$pid" || continue
		u=$((u + STAT[11])) st=$((st + STAT[12]))
		read -r a b < <(awk '/^voluntary_ctxt_switches/ {v += $2} /^nonvoluntary_ctxt_switches/ {n += $2} END {print v+0, n+0}' /proc/"$pid"/task/*/status 2>/dev/null)
		v=$((v + ${a:-0})) nv=$((nv + ${b:-0}))
		run_delay_us "$pid"
		((REPLY >= 0)) && rd=$((rd + REPLY))
	done
	REPLY="UTIME_TICKS=$u STIME_TICKS=$st VCSW=$v NVCSW=$nv RUN_DELAY_US=$rd"
}
# counters_delta BEFORE AFTER QUERIES: per-query deltas, for the log.
counters_delta() {
	python3 - "$1" "$2" "$3" <<'PY'
import sys
b = dict(kv.split("=") for kv in sys.argv[1].split())
a = dict(kv.split("=") for kv in sys.argv[2].split())
q = max(int(sys.argv[3] or 0), 1)
print(" ".join("%s/query=%.4g" % (k.lower(), (int(a[k]) - int(b.get(k, 0))) / q) for k in sorted(a)))
PY
}
# perf_start PID: counts PID's system calls (all of them: read, write,
# recv, send, epoll, futex...) with perf until perf_stop, which leaves the
# count in REPLY (-1 if perf could not count). /proc/PID/io is no use
# here: its syscr/syscw count read(2)/write(2) but not recv/send, which
# HAProxy uses.
perf_start() {
	rm -f "$TMP/perf.out"
	PERF_PID=""
	[[ -n $1 ]] && command -v perf >/dev/null || return 0
	perf stat -e raw_syscalls:sys_enter -x, -o "$TMP/perf.out" -p "$1" >/dev/null 2>&1 &
	PERF_PID=$!
}
perf_stop() {
	REPLY=-1
	[[ -n $PERF_PID ]] || return 0
	kill -INT "$PERF_PID" 2>/dev/null || true
	wait "$PERF_PID" 2>/dev/null || true # perf ends with the signal: not a failure
	PERF_PID=""
	local n
	n=$(awk -F, '/raw_syscalls:sys_enter/ {print $1}' "$TMP/perf.out" 2>/dev/null) || true
	[[ $n =~ ^[0-9]+$ ]] && REPLY=$n
	return 0
}
rss_kib() { # VmRSS of PID in KiB; -1 if gone
	local k v
	REPLY=-1
	[[ -n $1 && -r /proc/$1/status ]] || return 0
	while read -r k v _; do
		if [[ $k == VmRSS: ]]; then
			REPLY=$v
			return 0
		fi
	done </proc/"$1"/status 2>/dev/null || true
}
port_listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
# wait_listen PORT PID SECONDS: 0 once PORT listens, 1 if PID exits or time runs out
wait_listen() {
	local deadline=$((SECONDS + $3))
	while ((SECONDS < deadline)); do
		kill -0 "$2" 2>/dev/null || return 1
		port_listening "$1" && return 0
		sleep 0.2
	done
	return 1
}

# ------------------------------------------------------------ preflight

for p in "$BENCH_HAPROXY_PORT" "$BENCH_GALEON_PORT" "$BENCH_GALEON_ADMIN_PORT" "$BENCH_GALEON_HTTP_PORT"; do
	port_listening "$p" && die "port $p is already in use (set BENCH_*_PORT to move it)"
done
if [[ ! -x $GALEON_BIN ]]; then
	log "building $GALEON_BIN"
	(cd "$ROOT" && go build -o "$GALEON_BIN" ./cmd/galeon)
fi
# A private copy: a concurrent rebuild of bin/galeon cannot change the binary
# under a running benchmark (and the sandbox is destroyed with the same one).
cp "$GALEON_BIN" "$TMP/galeon"
G=$TMP/galeon
log "building connscale, largevalues and replag"
(cd "$ROOT" && go build -o "$TMP/connscale" ./bench/cmd/connscale && go build -o "$TMP/largevalues" ./bench/cmd/largevalues &&
	go build -o "$TMP/replag" ./bench/cmd/replag)

# A sandbox left by an interrupted run, in this run's directory or in the
# other default one (it would hold the same ports).
for d in "$BENCH_SANDBOX_DIR" "/var/tmp/galeon/$BENCH_SANDBOX" "/dev/shm/galeon-bench/$BENCH_SANDBOX"; do
	[[ -e $d ]] &&
		die "sandbox '$BENCH_SANDBOX' already exists in $d (left by an interrupted run?); remove it with: $GALEON_BIN sandbox destroy --name $BENCH_SANDBOX --dir $d"
done

# Autogroups off before anything of the run starts: a process keeps the
# scheduling group it started in.
AUTOGROUP_STATE=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo "n/a")
if [[ $BENCH_AUTOGROUP == off && $AUTOGROUP_STATE == 1 ]]; then
	if (echo 0 >/proc/sys/kernel/sched_autogroup_enabled) 2>/dev/null; then
		AUTOGROUP_WAS=1
		AUTOGROUP_STATE="0 (turned off for this run, 1 again after it)"
		log "kernel.sched_autogroup_enabled 1 -> 0 for this run (BENCH_AUTOGROUP=keep leaves it on)"
	else
		AUTOGROUP_STATE="1 (could not turn it off)"
		log "WARNING: could not turn autogroups off (kernel.sched_autogroup_enabled needs root): nodes may stall for seconds (bench/README)"
	fi
fi

record kind=meta started="$TS" git="$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)" \
	host="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)" \
	loadavg="$(cut -d' ' -f1-3 /proc/loadavg)" \
	sysbench="$(sysbench --version 2>&1 | head -n1)" \
	haproxy="$(haproxy -v 2>&1 | head -n1 | sed 's/ - https.*//')" \
	mariadb="$( (mariadbd --version 2>/dev/null || /usr/sbin/mariadbd --version 2>/dev/null) | head -n1 | sed 's/^.*Ver //')" \
	bench_time="$BENCH_TIME" rounds="$BENCH_ROUNDS" galeon_reads="$BENCH_GALEON_READS" nofile="$NOFILE" \
	galeon_max_backend="$BENCH_GALEON_MAX_BACKEND" galeon_sysbench_backend="$BENCH_GALEON_SYSBENCH_BACKEND" galeon_threads="${BENCH_GALEON_THREADS:-default}" galeon_max_missed="${BENCH_GALEON_MAX_MISSED:-default}" autogroup="$AUTOGROUP_STATE" proxy_nice="${BENCH_PROXY_NICE:-$(nice)}" clk_tck="$CLK_TCK" sandbox_dir="$BENCH_SANDBOX_DIR"

# ------------------------------------------------------------ sandbox

log "starting sandbox $BENCH_SANDBOX in $BENCH_SANDBOX_DIR (3 nodes, base port $BENCH_BASE_PORT); results in $RESULTS"
SANDBOX_OWNED=1
PROVIDER_ARGS=()
for o in $BENCH_PROVIDER_OPTIONS; do PROVIDER_ARGS+=(--provider-option "$o"); done
# Two attempts: on a loaded 2-core host a joiner occasionally fails its state
# transfer; `up` removes what it started when it fails.
# TLS on the nodes (and galeon's listener, with the same certificate) for
# the churn test with TLS, when this galeon's sandbox can make it.
TLS_ARGS=()
UP_HELP=$("$G" sandbox up --help 2>&1 || true) # --help exits 2
if [[ $UP_HELP == *--tls* ]]; then TLS_ARGS=(--tls); fi
REPLICA_ARGS=()
if [[ $BENCH_REPLICA == 1 ]]; then REPLICA_ARGS=(--replicas 1); fi
for attempt in 1 2; do
	if "$G" sandbox up --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR" --nodes 3 --base-port "$BENCH_BASE_PORT" "${PROVIDER_ARGS[@]}" "${TLS_ARGS[@]}" "${REPLICA_ARGS[@]}" \
		--server-option "max_connections=$BENCH_MAX_CONNECTIONS" --server-option "max_allowed_packet=64M" >"$TMP/sandbox.log" 2>&1; then
		break
	fi
	tail -n 20 "$TMP/sandbox.log" >&2
	((attempt < 2)) || die "sandbox up failed twice"
	log "sandbox up failed; retrying once"
	if [[ -e $BENCH_SANDBOX_DIR ]]; then
		"$G" sandbox destroy --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR" >>"$TMP/sandbox.log" 2>&1 || true
	fi
	sleep 5
done
while IFS= read -r line; do
	[[ $line =~ ^(GALEON_[A-Z0-9_]+)=(.*)$ ]] || continue
	v=${BASH_REMATCH[2]}
	v=${v#\'} v=${v%\'} v=${v#\"} v=${v%\"}
	printf -v "${BASH_REMATCH[1]}" '%s' "$v"
done < <("$G" sandbox env --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR")
: "${GALEON_SANDBOX_NODES:?sandbox env printed no GALEON_SANDBOX_NODES}"
: "${GALEON_APP_USER:?}" "${GALEON_APP_PASSWORD:?}"
IFS=, read -r -a NODES <<<"$GALEON_SANDBOX_NODES"
((${#NODES[@]} == 3)) || die "expected 3 nodes, got: $GALEON_SANDBOX_NODES"
NODE1=${NODES[0]}
# The nodes' mariadbd PIDs: what the database did for each target's
# queries (the wrapped writes' cost is mostly there).
read -r -a NODE_PIDS <<<"$("$G" sandbox status --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR" --json 2>/dev/null |
	python3 -c 'import json,sys; print(" ".join(str(n["pid"]) for n in json.load(sys.stdin) if n.get("role", "data") == "data" and n.get("pid")))' 2>/dev/null || true)"

# The replica (BENCH_REPLICA=1) replicates from node1, the writer of every
# target: pointed here, since no control plane runs for its agent.
REPLICA_ADDR=""
if [[ $BENCH_REPLICA == 1 ]]; then
	REPLICA_ADDR=$("$G" sandbox status --name "$BENCH_SANDBOX" --dir "$BENCH_SANDBOX_DIR" --json 2>/dev/null |
		python3 -c 'import json,sys; print(next("%s:%d" % (n.get("host") or "127.0.0.1", n["port"]) for n in json.load(sys.stdin) if n.get("role") == "replica"))' 2>/dev/null) ||
		die "BENCH_REPLICA=1: the sandbox has no replica"
	read -r REPL_USER REPL_PW < <(python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["credentials"]; print(c["repl_user"], c["repl_password"])' "$BENCH_SANDBOX_DIR/sandbox.json")
	MYSQL_PWD=$GALEON_ADMIN_PASSWORD mariadb -h"${REPLICA_ADDR%:*}" -P"${REPLICA_ADDR##*:}" -u"$GALEON_ADMIN_USER" -e \
		"STOP SLAVE; CHANGE MASTER TO MASTER_HOST='${NODE1%:*}', MASTER_PORT=${NODE1##*:}, MASTER_USER='$REPL_USER', MASTER_PASSWORD='$REPL_PW',
		 MASTER_USE_GTID=slave_pos, DO_DOMAIN_IDS=(100), MASTER_CONNECT_RETRY=1; START SLAVE" ||
		die "BENCH_REPLICA=1: could not point the replica at node1"
	log "replica $REPLICA_ADDR replicates from node1; its lag is sampled during the write workloads"
fi

# node_status HOST:PORT -> "conf_id size status state ready", e.g. "5 3 Primary Synced ON"
node_status() {
	MYSQL_PWD=$GALEON_ADMIN_PASSWORD mariadb -h"${1%:*}" -P"${1##*:}" -u"$GALEON_ADMIN_USER" --connect-timeout=3 -N -B -e \
		"SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY VARIABLE_NAME SEPARATOR ' ') FROM information_schema.GLOBAL_STATUS
		 WHERE VARIABLE_NAME IN ('WSREP_CLUSTER_CONF_ID','WSREP_CLUSTER_SIZE','WSREP_CLUSTER_STATUS','WSREP_LOCAL_STATE_COMMENT','WSREP_READY')" 2>/dev/null ||
		echo "unreachable"
}
# wait_cluster_ready SECONDS: all three nodes Primary, Synced, ready, size 3.
# Sets CONF_ID to node1's wsrep_cluster_conf_id.
wait_cluster_ready() {
	local deadline=$((SECONDS + $1)) n st all warned=0
	while :; do
		all=1
		for n in "${NODES[@]}"; do
			st=$(node_status "$n")
			if ! [[ $st =~ ^[0-9]+\ 3\ Primary\ Synced\ ON$ ]]; then all=0; fi
			if [[ $n == "$NODE1" ]]; then CONF_ID=${st%% *}; fi
		done
		((all)) && return 0
		if ((!warned)); then
			log "waiting for the cluster to be Primary/Synced on all 3 nodes"
			warned=1
		fi
		((SECONDS < deadline)) || return 1
		sleep 1
	done
}

SB_CONN=(--db-driver=mysql --mysql-user="$GALEON_APP_USER" --mysql-password="$GALEON_APP_PASSWORD" --mysql-db=sbtest
	--tables=$TABLES --table-size=$TABLE_SIZE)

log "sysbench prepare: $TABLES tables x $TABLE_SIZE rows on node1"
sysbench oltp_point_select "${SB_CONN[@]}" --mysql-host="${NODE1%:*}" --mysql-port="${NODE1##*:}" --threads=$TABLES \
	prepare >"$LOGS/prepare.log" 2>&1 || {
	tail -n 5 "$LOGS/prepare.log" >&2
	die "sysbench prepare failed"
}
wait_cluster_ready 120 || die "cluster not Primary/Synced after prepare"

# ------------------------------------------------------------ HAProxy

HAPROXY_MAXCONN=$(((NOFILE - 200) / 2))
((HAPROXY_MAXCONN > 20000)) && HAPROXY_MAXCONN=20000
# HAProxy serves what galeon serves reads from: node1 (BENCH_GALEON_READS=
# writer), or node2 and node3 balanced per connection (readers; then only
# the read-only workloads compare like for like: HAProxy sends their
# writes to node2/node3 too).
if [[ $BENCH_GALEON_READS == writer ]]; then
	HAPROXY_SERVERS="    server node1 $NODE1 maxconn $HAPROXY_MAXCONN"
else
	HAPROXY_SERVERS="    balance roundrobin
    server node2 ${NODES[1]} maxconn $HAPROXY_MAXCONN
    server node3 ${NODES[2]} maxconn $HAPROXY_MAXCONN"
fi
cat >"$TMP/haproxy.cfg" <<EOF
# generated by bench/run.sh: plain TCP forwarding (BENCH_GALEON_READS=$BENCH_GALEON_READS)
global
    nbthread 2
    maxconn $HAPROXY_MAXCONN

defaults
    mode tcp
    timeout connect 5s
    timeout client 1h
    timeout server 1h

frontend mysql
    bind 127.0.0.1:$BENCH_HAPROXY_PORT
    maxconn $HAPROXY_MAXCONN
    default_backend nodes

backend nodes
$HAPROXY_SERVERS
EOF
cp "$TMP/haproxy.cfg" "$LOGS/haproxy.cfg"
haproxy -c -q -f "$TMP/haproxy.cfg" >"$LOGS/haproxy-check.log" 2>&1 || {
	cat "$LOGS/haproxy-check.log" >&2
	die "haproxy rejected its configuration"
}

# PROXY_START: the command prefix that starts a proxy: with
# BENCH_PROXY_NICE (nice execs the proxy: $! is the proxy's PID), then in
# a session of its own (below).
# nice -n adds to the bench's own nice value, and without the privilege
# to lower it only warns: check_nice makes sure the proxy got it.
PROXY_START=()
if [[ -n $BENCH_PROXY_NICE ]]; then
	[[ $BENCH_PROXY_NICE =~ ^-?[0-9]+$ ]] && ((BENCH_PROXY_NICE >= -20 && BENCH_PROXY_NICE <= 19)) ||
		die "BENCH_PROXY_NICE=$BENCH_PROXY_NICE: want a nice value, -20 to 19"
	PROXY_START=(nice -n "$((BENCH_PROXY_NICE - $(nice)))")
fi
# Each proxy starts in a session of its own (setsid execs it: $! stays
# the proxy's PID), as a service does: with autogroups on
# (BENCH_AUTOGROUP=keep) it is then a scheduling group of its own, apart
# from sysbench's, as the nodes are (bench/README, "The scheduler's
# groups"). With autogroups off, sessions do not matter to the scheduler.
PROXY_START+=(setsid)
# check_nice NAME PID: the proxy leads its own session and runs at
# BENCH_PROXY_NICE, or the bench stops (its figures would be of another
# setting).
check_nice() {
	if ! proc_stat "$2"; then
		[[ -z $BENCH_PROXY_NICE ]] || die "$1 (PID $2) is gone"
		log "WARNING: $1 (PID $2) exited right after it listened"
		return 0
	fi
	((STAT[3] == $2)) || die "$1 (PID $2) is not in a session of its own (session ${STAT[3]})"
	[[ -n $BENCH_PROXY_NICE ]] || return 0
	((STAT[16] == BENCH_PROXY_NICE)) ||
		die "$1 runs at nice ${STAT[16]}, not BENCH_PROXY_NICE=$BENCH_PROXY_NICE (lowering it needs root or CAP_SYS_NICE)"
	log "$1 runs at nice ${STAT[16]}"
}
start_haproxy() {
	# -db: foreground, no daemon; the PID we record is haproxy itself.
	"${PROXY_START[@]}" haproxy -db -f "$TMP/haproxy.cfg" >>"$LOGS/haproxy.log" 2>&1 &
	HAPROXY_PID=$!
	if ! wait_listen "$BENCH_HAPROXY_PORT" "$HAPROXY_PID" 15; then
		tail -n 5 "$LOGS/haproxy.log" >&2
		die "haproxy did not start listening on $BENCH_HAPROXY_PORT"
	fi
	log "haproxy listening on 127.0.0.1:$BENCH_HAPROXY_PORT (pid $HAPROXY_PID)"
	check_nice haproxy "$HAPROXY_PID"
}
stop_haproxy() {
	stop_pid "$HAPROXY_PID"
	HAPROXY_PID=""
}

# ------------------------------------------------------------ galeon

# writer: the app user's default hostgroup is the writer, so galeon sends
# every statement to node1, as HAProxy -> node1 does (node1 is also the only
# reader, so nothing else could receive them).
# readers: default hostgroup "reader": autocommit reads and START TRANSACTION
# READ ONLY go to node2/node3, writes and transactions to node1 (not
# like-for-like with HAProxy -> node1).
if [[ $BENCH_GALEON_READS == writer ]]; then
	RW=("100 100" "10 0" "10 0")
	DEFAULT_HG=writer
else
	RW=("100 0" "10 100" "10 100")
	DEFAULT_HG=reader
fi
write_galeon_config() { # $1 = app password, $2 = admin password (real ones, or placeholders for the logged copy), $3 = max backend connections per node
	cat <<EOF
# generated by bench/run.sh (BENCH_GALEON_READS=$BENCH_GALEON_READS, BENCH_GALEON_RYW=$BENCH_GALEON_RYW, BENCH_GALEON_OUTCOME=$BENCH_GALEON_OUTCOME)
[proxy]
listen = "127.0.0.1:$BENCH_GALEON_PORT"
${BENCH_GALEON_THREADS:+threads = $BENCH_GALEON_THREADS}
${GALEON_SANDBOX_TLS_CERT:+tls_cert = \"$GALEON_SANDBOX_TLS_CERT\"
tls_key = \"$GALEON_SANDBOX_TLS_KEY\"}

[admin]
listen = "127.0.0.1:$BENCH_GALEON_ADMIN_PORT"
http_listen = "127.0.0.1:$BENCH_GALEON_HTTP_PORT"
user = "admin"
password = "$2"

[pool]
max_connections = $3   # per node
${BENCH_GALEON_MAX_MISSED:+max_missed_checks = $BENCH_GALEON_MAX_MISSED}

[galera]
${BENCH_GALEON_RYW:+read_your_writes = \"$BENCH_GALEON_RYW\"}
${BENCH_GALEON_OUTCOME:+commit_outcome = \"$BENCH_GALEON_OUTCOME\"
transaction_replay = \"${BENCH_GALEON_OUTCOME/commits/on}\"}

[[users]]
name = "$GALEON_APP_USER"
password = "$1"
backend_password = "$1"
default_hostgroup = "$DEFAULT_HG"
EOF
	local i ww rw
	for i in 0 1 2; do
		read -r ww rw <<<"${RW[$i]}"
		cat <<EOF

[[servers]]
name = "node$((i + 1))"
address = "${NODES[$i]}"
writer_weight = $ww
reader_weight = $rw
EOF
	done
}
GALEON_ADMIN_PW=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
write_galeon_config "$GALEON_APP_PASSWORD" "$GALEON_ADMIN_PW" "$BENCH_GALEON_SYSBENCH_BACKEND" >"$TMP/galeon.toml"
write_galeon_config "<app password>" "<admin password>" "$BENCH_GALEON_SYSBENCH_BACKEND" >"$LOGS/galeon.toml"

GALEON_STATUS=unknown # ok | unavailable | failed | died
GALEON_REASON=""
start_galeon() {
	if [[ $GALEON_STATUS == unknown ]] && ! "$G" proxy --config "$TMP/galeon.toml" --check-config >"$LOGS/galeon-check.log" 2>&1; then
		if grep -qi 'unknown command' "$LOGS/galeon-check.log"; then
			GALEON_STATUS=unavailable
			GALEON_REASON="bin/galeon has no proxy command yet"
			log "galeon: not available ($GALEON_REASON)"
			return 1
		fi
		# An older proxy without --check-config falls through to a real start.
		if ! grep -qi 'flag provided but not defined' "$LOGS/galeon-check.log"; then
			GALEON_STATUS=failed
			GALEON_REASON="configuration rejected: $(tr '\n' ' ' <"$LOGS/galeon-check.log" | cut -c1-400)"
			log "galeon: FAILED: $GALEON_REASON"
			return 1
		fi
	fi
	"${PROXY_START[@]}" "$G" proxy --config "$TMP/galeon.toml" >>"$LOGS/galeon.log" 2>&1 &
	GALEON_PID=$!
	if wait_listen "$BENCH_GALEON_PORT" "$GALEON_PID" 30; then
		GALEON_STATUS=ok
		log "galeon proxy listening on 127.0.0.1:$BENCH_GALEON_PORT (pid $GALEON_PID)"
		check_nice galeon "$GALEON_PID"
		return 0
	fi
	stop_pid "$GALEON_PID"
	wait "$GALEON_PID" 2>/dev/null || true
	GALEON_PID=""
	if grep -qi 'unknown command' "$LOGS/galeon.log"; then
		GALEON_STATUS=unavailable
		GALEON_REASON="bin/galeon has no proxy command yet"
		log "galeon: not available ($GALEON_REASON)"
	else
		GALEON_STATUS=failed
		GALEON_REASON="did not listen on $BENCH_GALEON_PORT within 30 s: $(tail -n 3 "$LOGS/galeon.log" | tr '\n' ' ' | cut -c1-300)"
		log "galeon: FAILED: $GALEON_REASON"
	fi
	return 1
}
stop_galeon() {
	stop_pid "$GALEON_PID"
	GALEON_PID=""
}

# ------------------------------------------------------------ runs

start_haproxy
start_galeon || true
record kind=target target=direct status=ok
record kind=target target=haproxy status=ok
record kind=target target=galeon status="$GALEON_STATUS" reason="$GALEON_REASON"

target_endpoint() { # sets T_HOST T_PORT T_PID for target $1; returns 1 if unusable
	case $1 in
	direct) T_HOST=${NODE1%:*} T_PORT=${NODE1##*:} T_PID="" ;;
	haproxy) T_HOST=127.0.0.1 T_PORT=$BENCH_HAPROXY_PORT T_PID=$HAPROXY_PID ;;
	galeon)
		[[ $GALEON_STATUS == ok ]] || return 1
		T_HOST=127.0.0.1 T_PORT=$BENCH_GALEON_PORT T_PID=$GALEON_PID
		;;
	esac
	if [[ -n $T_PID ]] && ! kill -0 "$T_PID" 2>/dev/null; then
		return 1
	fi
	return 0
}

# After a run: a proxy that is gone is marked, so later rows say so.
check_proxy_alive() {
	if [[ $1 == galeon && $GALEON_STATUS == ok ]] && ! kill -0 "$GALEON_PID" 2>/dev/null; then
		GALEON_STATUS=died
		GALEON_REASON="galeon proxy exited during the run: $(tail -n 3 "$LOGS/galeon.log" | tr '\n' ' ' | cut -c1-300)"
		log "galeon: DIED: $GALEON_REASON"
		record kind=target target=galeon status=died reason="$GALEON_REASON"
		GALEON_PID=""
	fi
	if [[ $1 == haproxy ]] && ! kill -0 "$HAPROXY_PID" 2>/dev/null; then
		tail -n 5 "$LOGS/haproxy.log" >&2
		die "haproxy exited during the run"
	fi
}

FAILURES=0
# run_sysbench ROUND WORKLOAD_ID TEST THREADS PSMODE TARGET ORDER EXTRA
run_sysbench() {
	local round=$1 wid=$2 test=$3 threads=$4 psmode=$5 target=$6 order=$7 extra=$8
	local meta=(workload="$wid" test="$test" threads="$threads" ps_mode="$psmode" target="$target"
		round="$round" order="$order" time_s="$BENCH_TIME" options="$extra")
	local logf="$LOGS/r$round-$wid-$target.log" attempt
	for attempt in 1 2; do
		if ! target_endpoint "$target"; then
			local st=$GALEON_STATUS
			[[ $target == galeon ]] || st=failed
			record kind=sysbench "${meta[@]}" status="$st" reason="${GALEON_REASON:-proxy not running}"
			return 0
		fi
		sysbench_once "$wid" "$test" "$threads" "$psmode" "$target" "$logf" "$extra"
		check_proxy_alive "$target"
		# A run that failed while the Galera view changed (a node starved of
		# CPU long enough to be evicted) says nothing about the proxy: wait
		# for the cluster and run it once more. The first attempt's log is kept.
		if [[ $SB_STATUS != ok && $SB_VIEWS != 0 && $attempt == 1 ]]; then
			log "retrying $wid against $target once the cluster is back (it failed during a Galera view change)"
			mv "$logf" "${logf%.log}.attempt1.log"
			continue
		fi
		break
	done
	meta+=(cluster_view_changes="$SB_VIEWS" attempts="$attempt" node_cpu_ticks="$SB_NODE_CPU" node_questions="$SB_NODE_Q" clk_tck="$CLK_TCK"
		host_steal_ticks="$SB_STEAL" host_ticks="$SB_HOST_TICKS" host_idle_ticks="$SB_IDLE")
	if [[ $target == galeon ]]; then
		# Over every attempt: a writer moved during a discarded one stays moved.
		galeon_events
		meta+=(galeon_offline="${REPLY% *}" galeon_writer_moves="${REPLY#* }")
	fi
	if [[ -n $T_PID ]]; then
		meta+=(proxy_pid="$T_PID" cpu_ticks="$SB_CPU" rss_peak_kib="$SB_RSS_PEAK"
			syscalls="$SB_SYSCALLS" run_delay_us="$SB_RUN_DELAY")
	fi
	python3 "$BENCH_DIR/report.py" record-sysbench "$RAW" "$logf" "${meta[@]}" status="$SB_STATUS" rc="$SB_RC" >&2
	if [[ $SB_STATUS != ok && $target != galeon ]]; then
		FAILURES=$((FAILURES + 1))
	fi
}

# host_ticks: the machine's CPU time stolen by the hypervisor, all CPU
# time, and the idle time (idle + iowait: CPU time nothing could use), in
# clock ticks since boot ("STEAL TOTAL IDLE" in REPLY, from /proc/stat).
# On a VM a run that lost CPU to the host is marked; a run with no idle
# time left is bound by the CPU, one with much left waited on something
# else (a proxy's one thread, the network, the nodes' locks).
host_ticks() {
	local _cpu user nice system idle iowait irq softirq steal _rest
	read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
	REPLY="$steal $((user + nice + system + idle + iowait + irq + softirq + steal)) $((idle + iowait))"
}
# host_since BEFORE: host_ticks since BEFORE (an earlier host_ticks), as
# "STEAL TOTAL IDLE" in REPLY.
host_since() {
	local s0 t0 i0 s1 t1 i1
	read -r s0 t0 i0 <<<"$1"
	host_ticks
	read -r s1 t1 i1 <<<"$REPLY"
	REPLY="$((s1 - s0)) $((t1 - t0)) $((i1 - i0))"
}

# galeon_events: the nodes galeon took out (its pool health check's
# "backend offline", or the Galera monitor's node_state events to
# OFFLINE) and the writer moves it logged since the previous call, as
# "OFFLINE MOVES" in REPLY. galeon checks the nodes all along, also while
# the other targets run; on this 2-core host a node starved of CPU can
# miss a check under load, and a writer moved stays where it went
# (failback = never), so such rows are marked.
GALEON_LOG_SEEN=0
galeon_events() {
	local out offline moves lines
	out=$(awk -v seen="$GALEON_LOG_SEEN" '
		NR > seen && (/msg="backend offline"/ || /kind=node_state.*cause="OFFLINE/) { o++ }
		NR > seen && /kind=writer_change/ && !/at start/ { m++ }
		END { print o + 0, m + 0, NR }' "$LOGS/galeon.log" 2>/dev/null) || out="0 0 $GALEON_LOG_SEEN"
	read -r offline moves lines <<<"$out"
	GALEON_LOG_SEEN=$lines
	REPLY="$offline $moves"
}

# start_sysbench TEST THREADS PSMODE SECONDS EXTRA LOG: one measured
# sysbench run against T_HOST:T_PORT, in the background (CHILD_PID).
start_sysbench() {
	# shellcheck disable=SC2086 # $5 holds whole sysbench options
	sysbench "$1" "${SB_CONN[@]}" --mysql-host="$T_HOST" --mysql-port="$T_PORT" \
		--threads="$2" --time="$4" --report-interval=0 --histogram=on --percentile=99 \
		--db-ps-mode="$3" --rand-type=uniform $5 run >"$6" 2>&1 &
	CHILD_PID=$!
}

# views_since CONF0: the Galera view changes node1 counted since its
# wsrep_cluster_conf_id was CONF0, in REPLY (-1 unknown); CONF1 is the id
# now. A node outside the primary component reports 2^64-1, hence the
# length limit.
views_since() {
	CONF1=$(node_status "$NODE1")
	CONF1=${CONF1%% *}
	REPLY=-1
	if [[ $1 =~ ^[0-9]{1,9}$ && $CONF1 =~ ^[0-9]{1,9}$ ]]; then
		REPLY=$((CONF1 - $1))
	fi
}

# sysbench_once WID TEST THREADS PSMODE TARGET LOG: one run against
# T_HOST:T_PORT; sets SB_STATUS (ok|failed|timeout), SB_RC, SB_CPU (proxy
# clock ticks, -1 unknown), SB_RUN_DELAY (µs the proxy's threads waited
# for a CPU, -1 unknown), SB_RSS_PEAK (KiB, -1 unknown), SB_VIEWS (node1
# view changes during the run, -1 unknown).
sysbench_once() {
	local wid=$1 test=$2 threads=$3 psmode=$4 target=$5 logf=$6 extra=$7
	local cpu0 cpu1 timed_out=0 conf0 ncpu0 ncpu1 nq0 nq1
	SB_RC=0 SB_CPU=-1 SB_RUN_DELAY=-1 SB_RSS_PEAK=-1 SB_VIEWS=-1 SB_SYSCALLS=-1 SB_NODE_CPU=-1 SB_NODE_Q=-1 SB_STEAL=-1 SB_HOST_TICKS=-1 SB_IDLE=-1
	wait_cluster_ready 180 || log "WARNING: cluster not ready; running anyway"
	conf0=$CONF_ID
	nodes_questions
	nq0=$REPLY
	nodes_counters
	local nc0=$REPLY
	nodes_sched
	local ns0=$REPLY
	nodes_cpu_ticks
	ncpu0=$REPLY
	cpu_ticks "$T_PID"
	cpu0=$REPLY
	run_delay_us "$T_PID"
	local rd0=$REPLY
	host_ticks
	local host0=$REPLY
	perf_start "$T_PID"
	LAG_PID=""
	if [[ -n $REPLICA_ADDR && $test != oltp_point_select && $test != oltp_read_only ]]; then
		MYSQL_PWD=$GALEON_ADMIN_PASSWORD "$TMP/replag" -writer "$NODE1" -replica "$REPLICA_ADDR" -user "$GALEON_ADMIN_USER" \
			-duration "$((BENCH_TIME + 120))s" -workload "$wid" -target "$target" -round "$round" >"$TMP/replag.out" 2>"$TMP/replag.err" &
		LAG_PID=$!
	fi
	start_sysbench "$test" "$threads" "$psmode" "$BENCH_TIME" "$extra" "$logf"
	local deadline=$((SECONDS + BENCH_TIME + 60))
	while kill -0 "$CHILD_PID" 2>/dev/null; do
		if [[ -n $T_PID ]]; then
			rss_kib "$T_PID"
			if ((REPLY > SB_RSS_PEAK)); then SB_RSS_PEAK=$REPLY; fi
		fi
		if ((SECONDS > deadline)); then
			timed_out=1
			log "sysbench $wid against $target still running $((BENCH_TIME + 60)) s after start: stopping it"
			stop_pid "$CHILD_PID"
			break
		fi
		sleep 0.5
	done
	wait "$CHILD_PID" 2>/dev/null || SB_RC=$?
	CHILD_PID=""
	if [[ -n $LAG_PID ]]; then
		kill -TERM "$LAG_PID" 2>/dev/null || true
		wait "$LAG_PID" 2>/dev/null || true
		LAG_PID=""
		if grep -q '^{' "$TMP/replag.out"; then
			grep '^{' "$TMP/replag.out" >>"$RAW"
		else
			log "replag during $wid against $target reported nothing: $(tr '\n' ' ' <"$TMP/replag.err" | cut -c1-200)"
		fi
	fi
	cpu_ticks "$T_PID"
	cpu1=$REPLY
	if ((cpu0 >= 0 && cpu1 >= 0)); then SB_CPU=$((cpu1 - cpu0)); fi
	run_delay_us "$T_PID"
	if ((rd0 >= 0 && REPLY >= 0)); then SB_RUN_DELAY=$((REPLY - rd0)); fi
	nodes_cpu_ticks
	ncpu1=$REPLY
	if ((ncpu0 >= 0 && ncpu1 >= 0)); then SB_NODE_CPU=$((ncpu1 - ncpu0)); fi
	nodes_questions
	nq1=$REPLY
	if ((nq0 >= 0 && nq1 >= 0)); then SB_NODE_Q=$((nq1 - nq0)); fi
	nodes_counters
	if [[ -n $nc0 && -n $REPLY ]]; then
		local q
		q=$(sed -n 's/^ *queries: *\([0-9]*\).*/\1/p' "$logf" | head -1)
		log "nodes during $wid against $target: $(counters_delta "$nc0" "$REPLY" "$q")"
		nodes_sched
		log "nodes during $wid against $target: $(counters_delta "$ns0" "$REPLY" "$q")"
	fi
	perf_stop
	SB_SYSCALLS=$REPLY
	views_since "$conf0"
	SB_VIEWS=$REPLY
	if [[ $SB_VIEWS != 0 ]]; then
		log "WARNING: Galera view changed during $wid against $target (node1 conf_id $conf0 -> $CONF1)"
	fi
	host_since "$host0"
	read -r SB_STEAL SB_HOST_TICKS SB_IDLE <<<"$REPLY"
	SB_STATUS=ok
	if ((SB_RC != 0)); then SB_STATUS=failed; fi
	if ((timed_out)); then SB_STATUS=timeout; fi
	return 0
}

selected() {
	[[ $BENCH_WORKLOADS == all || ",$BENCH_WORKLOADS," == *",$1,"* ]]
}

# Warm-up (not recorded): buffer pool, proxy pools, sysbench's own start-up.
for t in "${TARGETS[@]}"; do
	target_endpoint "$t" || continue
	log "warm-up: oltp_point_select 8 threads 3 s against $t"
	sysbench oltp_point_select "${SB_CONN[@]}" --mysql-host="$T_HOST" --mysql-port="$T_PORT" --threads=8 --time=3 \
		--db-ps-mode=disable --rand-type=uniform run >"$LOGS/warmup-$t.log" 2>&1 &
	CHILD_PID=$!
	wait "$CHILD_PID" || log "warm-up against $t failed: $(tail -n 2 "$LOGS/warmup-$t.log" | tr '\n' ' ')"
	CHILD_PID=""
done

for ((round = 1; round <= BENCH_ROUNDS; round++)); do
	for wi in "${!WORKLOADS[@]}"; do
		IFS='|' read -r wid test threads psmode extra <<<"${WORKLOADS[$wi]}"
		selected "$wid" || continue
		log "round $round/$BENCH_ROUNDS: $wid ($test, $threads threads, ps-mode $psmode${extra:+, $extra}, ${BENCH_TIME}s per target)"
		# Round-robin, rotated per workload and round: no target always goes first.
		for k in 0 1 2; do
			t=${TARGETS[$(((k + wi + round - 1) % 3))]}
			run_sysbench "$round" "$wid" "$test" "$threads" "$psmode" "$t" "$k" "$extra"
		done
	done
done

# ------------------------------------------------------------ profile

# wait_child WHAT LIMIT: waits for CHILD_PID, stopping it after LIMIT
# seconds; leaves its exit status in REPLY.
wait_child() {
	local what=$1 deadline=$((SECONDS + $2)) rc=0
	while kill -0 "$CHILD_PID" 2>/dev/null; do
		if ((SECONDS > deadline)); then
			log "$what overran: stopping it"
			stop_pid "$CHILD_PID"
			break
		fi
		sleep 0.5
	done
	wait "$CHILD_PID" 2>/dev/null || rc=$?
	CHILD_PID=""
	REPLY=$rc
}

# run_profile WID TEST THREADS PSMODE EXTRA: the workload once more
# against galeon while its admin HTTP endpoint takes a CPU profile
# (/api/profile) over the whole run; the profile's samples, sorted by what
# they were spent on (report.py record-profile), over the run's queries.
# A separate run: the profiler interrupts the proxy 100 times a second,
# so the measured runs above are not profiled.
run_profile() {
	local wid=$1 test=$2 threads=$3 psmode=$4 extra=$5
	# A profile lasts at most 60 s (/api/profile): the run is cut to fit
	# in it, so that its samples and its queries cover the same time.
	local ptime=$((BENCH_TIME < 57 ? BENCH_TIME : 57))
	local prof="$LOGS/cpu-$wid.pprof" logf="$LOGS/profile-$wid-galeon.log" secs=$((ptime + 3)) code cpu0 rc=0 conf0
	check_proxy_alive galeon
	if ! target_endpoint galeon; then
		local st=$GALEON_STATUS
		[[ $st == ok ]] && st=died
		record kind=profile workload="$wid" status="$st" reason="galeon: not available${GALEON_REASON:+ ($GALEON_REASON)}"
		return 0
	fi
	log "profile: $wid against galeon (${ptime}s, CPU profile over ${secs}s)"
	wait_cluster_ready 180 || log "WARNING: cluster not ready; running anyway"
	conf0=$CONF_ID
	GALEON_ADMIN_PW=$GALEON_ADMIN_PW python3 - "http://127.0.0.1:$BENCH_GALEON_HTTP_PORT/api/profile?seconds=$secs" "$prof" >"$TMP/profile.code" 2>&1 <<'PY' &
import base64, os, sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1])
req.add_header("Authorization", "Basic " + base64.b64encode(("admin:" + os.environ["GALEON_ADMIN_PW"]).encode()).decode())
try:
    with urllib.request.urlopen(req, timeout=120) as r, open(sys.argv[2], "wb") as f:
        f.write(r.read())
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode(errors="replace")[:300])
except OSError as e:
    print("error", e)
PY
	FETCH_PID=$!
	cpu_ticks "$T_PID"
	cpu0=$REPLY
	host_ticks
	local host0=$REPLY
	start_sysbench "$test" "$threads" "$psmode" "$ptime" "$extra" "$logf"
	wait_child "sysbench $wid (profiled)" $((ptime + 60))
	rc=$REPLY
	cpu_ticks "$T_PID"
	local ticks=$((REPLY - cpu0))
	host_since "$host0"
	local steal hticks
	read -r steal hticks _ <<<"$REPLY"
	views_since "$conf0"
	local views=$REPLY
	CHILD_PID=$FETCH_PID FETCH_PID=""
	wait_child "the profile of $wid" $((secs + 60))
	code=$(head -c 300 "$TMP/profile.code")
	check_proxy_alive galeon
	galeon_events
	local events=(galeon_offline="${REPLY% *}" galeon_writer_moves="${REPLY#* }" host_steal_ticks="$steal" host_ticks="$hticks"
		cluster_view_changes="$views")
	if [[ $code != 200 ]]; then
		record kind=profile workload="$wid" status=failed reason="/api/profile answered: $(tr '\n' ' ' <<<"$code")"
	elif ((rc != 0)); then
		record kind=profile workload="$wid" status=failed reason="sysbench exited $rc: $(tail -n 2 "$logf" | tr '\n' ' ' | cut -c1-200)"
	elif ! go tool pprof -traces "$G" "$prof" >"$LOGS/cpu-$wid.traces" 2>"$TMP/pprof.err"; then
		record kind=profile workload="$wid" status=failed reason="go tool pprof: $(tr '\n' ' ' <"$TMP/pprof.err" | cut -c1-200)"
	else
		python3 "$BENCH_DIR/report.py" record-profile "$RAW" "$LOGS/cpu-$wid.traces" "$logf" \
			workload="$wid" test="$test" threads="$threads" ps_mode="$psmode" profile_s="$secs" \
			cpu_ticks="$ticks" clk_tck="$CLK_TCK" "${events[@]}" >&2
	fi
}

for wi in "${!WORKLOADS[@]}"; do
	IFS='|' read -r wid test threads psmode extra <<<"${WORKLOADS[$wi]}"
	[[ ",$BENCH_PROFILE," == *",$wid,"* ]] || continue
	run_profile "$wid" "$test" "$threads" "$psmode" "$extra"
done

# ------------------------------------------------------------ large values

# run_largevalues TARGET PID: a few 24 MiB values through TARGET and back,
# on a freshly started proxy; RSS before, at the peak and after 30 s idle.
run_largevalues() {
	local target=$1 pid=$2 out="$TMP/largevalues.out" logf="$LOGS/largevalues-$1.log" rc=0
	MYSQL_PWD=$GALEON_APP_PASSWORD "$TMP/largevalues" -addr "$T_HOST:$T_PORT" -user "$GALEON_APP_USER" -db sbtest -target "$target" \
		-pid "$pid" -values "$BENCH_LARGE_VALUES" -mib "$BENCH_LARGE_MIB" -quiet "${BENCH_LARGE_QUIET}s" >"$out" 2>"$logf" &
	CHILD_PID=$!
	wait_child "largevalues against $target" $((BENCH_LARGE_QUIET + 300))
	rc=$REPLY
	sed 's/^/  /' "$logf" >&2
	if grep -q '^{' "$out"; then
		grep '^{' "$out" >>"$RAW"
	else
		record kind=largevalues target="$target" status=failed reason="largevalues exited $rc: $(tail -n 2 "$logf" | tr '\n' ' ' | cut -c1-200)"
	fi
	check_proxy_alive "$target"
}

if [[ $BENCH_LARGE == 1 ]]; then
	log "large values: $BENCH_LARGE_VALUES x $BENCH_LARGE_MIB MiB through HAProxy, then galeon (fresh processes)"
	stop_haproxy
	start_haproxy
	target_endpoint haproxy && run_largevalues haproxy "$HAPROXY_PID"
	if [[ $GALEON_STATUS == ok ]]; then
		stop_galeon
		start_galeon || true
		target_endpoint galeon && run_largevalues galeon "$GALEON_PID"
	fi
fi

# ------------------------------------------------------------ connection scale

# run_connscale TARGET MODE PID ARGS...: appends connscale's JSON to raw.jsonl
run_connscale() {
	local target=$1 mode=$2 pid=$3
	shift 3
	local out="$TMP/connscale.out" logf="$LOGS/connscale-$mode-$target.log" rc=0
	MYSQL_PWD=$GALEON_APP_PASSWORD "$TMP/connscale" -addr "$T_HOST:$T_PORT" -user "$GALEON_APP_USER" -db sbtest \
		-tables $TABLES -table-size $TABLE_SIZE -pid "$pid" -backends "$GALEON_SANDBOX_NODES" -target "$target" \
		"$@" >"$out" 2>"$logf" &
	CHILD_PID=$!
	wait_child "connscale $mode against $target" $((120 + 30 + BENCH_TIME + 60))
	rc=$REPLY
	sed 's/^/  /' "$logf" >&2
	if grep -q '^{' "$out"; then
		grep '^{' "$out" >>"$RAW"
	else
		record kind=connscale mode="$mode" target="$target" status=failed \
			reason="connscale exited $rc: $(tail -n 2 "$logf" | tr '\n' ' ' | cut -c1-200)"
	fi
	check_proxy_alive "$target"
}

if [[ $BENCH_CONNSCALE == 1 ]]; then
	# Fresh proxy processes: RSS growth is measured from a clean baseline, not
	# on a heap already grown by the sysbench runs.
	log "connection scale: $BENCH_IDLE idle connections through HAProxy"
	stop_haproxy
	start_haproxy
	target_endpoint haproxy
	run_connscale haproxy idle "$HAPROXY_PID" -idle "$BENCH_IDLE"
	stop_haproxy

	if [[ $GALEON_STATUS == ok ]]; then
		admin=(-admin "admin:$GALEON_ADMIN_PW@tcp(127.0.0.1:$BENCH_GALEON_ADMIN_PORT)/" -admin-query "$BENCH_GALEON_ADMIN_QUERY")
		# Multiplexing is the point here: at most BENCH_GALEON_MAX_BACKEND
		# backend connections per node.
		write_galeon_config "$GALEON_APP_PASSWORD" "$GALEON_ADMIN_PW" "$BENCH_GALEON_MAX_BACKEND" >"$TMP/galeon.toml"
		write_galeon_config "<app password>" "<admin password>" "$BENCH_GALEON_MAX_BACKEND" >"$LOGS/galeon-connscale.toml"
		log "connection scale: $BENCH_IDLE idle connections through galeon"
		stop_galeon
		start_galeon || true
		if target_endpoint galeon; then
			run_connscale galeon idle "$GALEON_PID" -idle "$BENCH_IDLE" "${admin[@]}"
		fi
		log "connection scale: $BENCH_CLIENTS clients x ${BENCH_TIME}s point selects through galeon"
		stop_galeon
		start_galeon || true
		if target_endpoint galeon; then
			run_connscale galeon clients "$GALEON_PID" -clients "$BENCH_CLIENTS" -duration "${BENCH_TIME}s" "${admin[@]}"
		fi
	fi
	if [[ $GALEON_STATUS != ok ]]; then
		record kind=connscale mode=idle target=galeon status="$GALEON_STATUS" reason="galeon: not available${GALEON_REASON:+ ($GALEON_REASON)}"
		record kind=connscale mode=clients target=galeon status="$GALEON_STATUS" reason="galeon: not available${GALEON_REASON:+ ($GALEON_REASON)}"
	fi

	# Many clients with think time, and connection churn: every target,
	# fresh proxies, galeon with its multiplexing pool (at most
	# BENCH_GALEON_MAX_BACKEND per node; HAProxy and direct hold one node
	# connection per client).
	for n in $BENCH_MANY; do
		for t in "${TARGETS[@]}"; do
			log "connection scale: $n clients, think ${BENCH_THINK_MS} ms, ${BENCH_TIME}s, through $t"
			case $t in
			haproxy) stop_haproxy && start_haproxy ;;
			galeon) [[ $GALEON_STATUS == ok ]] && stop_galeon && { start_galeon || true; } ;;
			esac
			if target_endpoint "$t"; then
				run_connscale "$t" clients-think "${T_PID:-0}" -clients "$n" -think "${BENCH_THINK_MS}ms" -duration "${BENCH_TIME}s" \
					-open-timeout 180s -connect-concurrency 128
			else
				record kind=connscale mode=clients target="$t" requested="$n" think_ms="$BENCH_THINK_MS" status=unavailable reason="$t: not available"
			fi
		done
	done
	if ((BENCH_CHURN > 0)); then
		tls_modes=(no)
		((${#TLS_ARGS[@]})) && tls_modes+=(yes)
		for tls in "${tls_modes[@]}"; do
			for t in "${TARGETS[@]}"; do
				log "connection churn: $BENCH_CHURN workers, TLS $tls, ${BENCH_TIME}s, through $t"
				if target_endpoint "$t"; then
					extra=()
					[[ $tls == yes ]] && extra=(-tls)
					run_connscale "$t" churn "${T_PID:-0}" -churn "$BENCH_CHURN" -duration "${BENCH_TIME}s" "${extra[@]}"
				else
					record kind=connscale mode=churn target="$t" tls="$([[ $tls == yes ]] && echo 1 || echo 0)" status=unavailable reason="$t: not available"
				fi
			done
		done
	fi
fi

# ------------------------------------------------------------ teardown, report

stop_galeon
stop_haproxy
destroy_sandbox
record kind=meta elapsed_s="$((SECONDS - START_SECONDS))"
python3 "$BENCH_DIR/report.py" render "$RESULTS"
log "report: $RESULTS/report.md (also $BENCH_DIR/results/latest.md)"

# galeon not existing yet is expected; galeon existing but failing, or a
# direct/HAProxy run failing, is not.
if [[ $GALEON_STATUS == failed || $GALEON_STATUS == died ]] || ((FAILURES > 0)); then
	exit 1
fi
