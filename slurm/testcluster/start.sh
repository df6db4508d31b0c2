#!/usr/bin/env bash
# start.sh - start a throw-away SLURM 22.05 cluster on this host for nuesm's
# tests: one slurmctld and one slurmd per fake node (slurmd -N NAME), all on
# 127.0.0.1, plus munged and optionally slurmrestd. Debian bookworm packages:
#   apt-get install slurmctld slurmd slurm-client munge slurmrestd
#   (and slurm-wlm-jwt-plugin for SLURMTEST_JWT=1)
#
# usage: start.sh DIR [NODES]
#   DIR    directory that will hold everything: config, munge key and socket,
#          state, spool, logs, pid files. Created if missing; must not hold a
#          running cluster. Keep it short: unix socket paths under it are
#          limited to 107 bytes.
#   NODES  the fake nodes: a hostlist expression ("node[0001-0064]") or a
#          count N (node0001 ... nodeN); default 16.
#
# environment:
#   SLURMTEST_RESTD=1        also start slurmrestd on DIR/rest/slurmrestd.sock
#                            (rest_auth/local: the peer's uid authenticates)
#   SLURMTEST_JWT=1          also enable auth/jwt and start a second slurmrestd
#                            on http://127.0.0.1:PORT with rest_auth/jwt
#   SLURMTEST_OWNER_PID=PID  a detached watchdog runs stop.sh DIR once PID has
#                            exited (tests pass their own pid: a killed test
#                            binary does not leave daemons behind)
#   SLURMTEST_PORT_BASE=P    use ports P (slurmctld), P+1.. (slurmd), P+N+1
#                            (JWT slurmrestd); default: a free block at random
#                            in 20000-31999, below the ephemeral port range
#   SLURMTEST_TIMEOUT=S      give up after S seconds (default 60)
#   SLURMTEST_PROLOG_CTLD=P  PrologSlurmctld=P in slurm.conf (absolute path;
#   SLURMTEST_EPILOG_CTLD=P  EpilogSlurmctld=P    e.g. nuesm's contrib/slurm hooks)
#
# Partitions: "batch" (default, every node, no time limit) and "debug" (every
# node, MaxTime 30 min). Whole nodes are allocated (select/linear), as on an
# HPC fabric. Must run as root (SlurmUser and SlurmdUser are root).
#
# On success DIR/cluster.env holds KEY=value lines for programs (SLURM_CONF,
# ports, node list, slurmrestd addresses) and DIR/env.sh exports SLURM_CONF
# for shells. Every daemon runs with SLURMTEST_ID=<id> in its environment;
# stop.sh DIR stops exactly the processes carrying it (and their job
# processes). On failure start.sh stops what it started and exits non-zero
# with the end of the relevant log.
set -euo pipefail

# starttime PID: the process's start time in clock ticks (field 22 of
# /proc/PID/stat, counted after the parenthesised command name); with the pid
# it names a process even if the pid is reused later.
starttime() {
  local s
  { s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
  s=${s##*) }
  set -- $s
  echo "${20}"
}

if [ "${1:-}" = --watchdog ]; then   # internal: start.sh --watchdog DIR PID STARTTIME
  dir=$2 owner=$3 birth=$4
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  while [ -d "$dir/run" ] && [ ! -e "$dir/run/stopped" ]; do
    st=$(starttime "$owner" || true)
    [ "$st" = "$birth" ] || { "$here/stop.sh" "$dir" >>"$dir/log/watchdog.log" 2>&1; exit 0; }
    sleep 1
  done
  exit 0
fi

DIR=${1:?usage: start.sh DIR [NODES]}
NODES=${2:-16}
TIMEOUT=${SLURMTEST_TIMEOUT:-60}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=${EPOCHREALTIME/[.,]/}
ID="nuesm-$$-${RANDOM}${RANDOM}"

say() { local t=${EPOCHREALTIME/[.,]/}; printf 'slurmtest %5.1fs: %s\n' "$(( (t - T0) / 1000 ))e-3" "$*"; }
die() { echo "slurmtest: ERROR: $*" >&2; exit 1; }
logtail() { [ -f "$1" ] && tail -n "${2:-5}" "$1" | sed 's/^/    /' || true; }

[ "$(id -u)" = 0 ] || die "must run as root (SlurmUser=root; slurmd needs root)"
for b in munged slurmctld slurmd scontrol sinfo squeue sdiag; do
  command -v "$b" >/dev/null || die "missing '$b': apt-get install slurmctld slurmd slurm-client munge"
done
if [ "${SLURMTEST_RESTD:-0}" = 1 ] || [ "${SLURMTEST_JWT:-0}" = 1 ]; then
  command -v slurmrestd >/dev/null || die "missing 'slurmrestd': apt-get install slurmrestd"
fi
if [ "${SLURMTEST_JWT:-0}" = 1 ]; then
  jwt=
  for f in /usr/lib/*/slurm-wlm/auth_jwt.so /usr/lib/slurm-wlm/auth_jwt.so /usr/lib64/slurm/auth_jwt.so; do
    [ -e "$f" ] && jwt=$f
  done
  [ -n "$jwt" ] || die "SLURMTEST_JWT=1 needs auth_jwt.so: apt-get install slurm-wlm-jwt-plugin"
fi
[ ! -e "$DIR/cluster.env" ] || [ -e "$DIR/run/stopped" ] || die "$DIR holds a cluster; run stop.sh $DIR first"

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
rm -rf "${DIR:?}"/{etc,state,spool,log,run,munge,rest,jobs} "$DIR/cluster.env" "$DIR/env.sh"
mkdir -p "$DIR"/{etc,state,spool,log,run,jobs}
echo "$ID" >"$DIR/run/id"          # stop.sh's handle on every process started below
chmod 0755 "$DIR"                  # slurmrestd runs as nobody and must reach DIR/rest
install -d -m 0711 "$DIR/munge"    # munged: socket dir searchable, not writable, by others
CONF=$DIR/etc/slurm.conf
export SLURM_CONF=$CONF
HOST=$(hostname -s 2>/dev/null || hostname)   # slurmctld only starts where SlurmctldHost names it

# from here on, a failure takes down whatever was started
trap 'rc=$?; if [ $rc -ne 0 ]; then "$HERE/stop.sh" "$DIR" >"$DIR/log/stop-after-failure.log" 2>&1 || true; fi' EXIT

# ---- node names: expand the hostlist with scontrol (it needs some slurm.conf)
if [[ $NODES =~ ^[0-9]+$ ]]; then
  [ "$NODES" -ge 1 ] && [ "$NODES" -le 4096 ] || die "node count $NODES, expected 1..4096"
  NODES=$(printf 'node[0001-%04d]' "$NODES")
fi
printf 'ClusterName=hostlist\nSlurmctldHost=%s\nNodeName=x\nPartitionName=x Nodes=ALL\n' "$HOST" >"$DIR/etc/hostlist.conf"
mapfile -t NAMES < <(SLURM_CONF=$DIR/etc/hostlist.conf scontrol show hostnames "$NODES" 2>"$DIR/log/hostlist.err")
[ ${#NAMES[@]} -ge 1 ] && ! grep -q . "$DIR/log/hostlist.err" || die "bad node list '$NODES': $(cat "$DIR/log/hostlist.err")"
N=${#NAMES[@]}
[ "$(printf '%s\n' "${NAMES[@]}" | sort -u | wc -l)" = "$N" ] || die "node list '$NODES' repeats a name"

# ---- ports: one block of N+2, free now; starts are serialised with a lock so
# that two clusters starting at once cannot pick the same block. Daemons must
# not inherit the lock's descriptor (9>&- below), or it would stay locked.
exec 9>"${TMPDIR:-/tmp}/nuesm-slurmtest.lock"
flock -w "$TIMEOUT" 9 || die "could not take ${TMPDIR:-/tmp}/nuesm-slurmtest.lock within ${TIMEOUT}s"
declare -A USED=()
while read -r _ local _; do
  p=${local##*:}
  [[ $p =~ ^[0-9A-Fa-f]{4}$ ]] && USED[$((16#$p))]=1
done < <(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null)
block_free() { local p; for ((p = $1; p <= $1 + N + 1; p++)); do [ -z "${USED[$p]:-}" ] || return 1; done; }
if [ -n "${SLURMTEST_PORT_BASE:-}" ]; then
  BASE=$SLURMTEST_PORT_BASE
  block_free "$BASE" || die "ports $BASE-$((BASE + N + 1)) are not all free"
else
  [ $((N + 2)) -lt 12000 ] || die "$N nodes need more ports than 20000-31999 hold"
  BASE=
  for _ in $(seq 1 100); do
    b=$((20000 + (RANDOM * 32768 + RANDOM) % (12000 - N - 2)))
    if block_free "$b"; then BASE=$b; break; fi
  done
  [ -n "$BASE" ] || die "no free block of $((N + 2)) TCP ports in 20000-31999"
fi
CTLD_PORT=$BASE
REST_PORT=$((BASE + N + 1))

# ---- munge: a fresh key, a private socket
dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$DIR/munge/munge.key"
env SLURMTEST_ID="$ID" munged --socket="$DIR/munge/munge.sock" --key-file="$DIR/munge/munge.key" \
  --log-file="$DIR/log/munged.log" --pid-file="$DIR/run/munged.pid" \
  --seed-file="$DIR/munge/munged.seed" --num-threads=4 9>&- ||
  die "munged failed:$(echo; logtail "$DIR/log/munged.log")"

# ---- slurm.conf
{
  cat <<EOF
# slurm.conf of a throw-away test cluster ($ID): $N fake nodes on 127.0.0.1
ClusterName=nuesmtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.sock
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# no cgroups and no accounting: nothing a container lacks
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
# whole nodes per job; schedule right at submission
SelectType=select/linear
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
# slurmctld talks to each slurmd itself (no forwarding trees between fake nodes)
TreeWidth=65533
# quick teardown: SIGKILL 2 s after SIGTERM; finished jobs forgotten after 10 s
KillWait=2
MinJobAge=10
InactiveLimit=0
SlurmdTimeout=300
SlurmdParameters=config_overrides
EOF
  if [ "${SLURMTEST_JWT:-0}" = 1 ]; then
    echo "AuthAltTypes=auth/jwt"
    echo "AuthAltParameters=jwt_key=$DIR/etc/jwt_hs256.key"
  fi
  [ -z "${SLURMTEST_PROLOG_CTLD:-}" ] || echo "PrologSlurmctld=$SLURMTEST_PROLOG_CTLD"
  [ -z "${SLURMTEST_EPILOG_CTLD:-}" ] || echo "EpilogSlurmctld=$SLURMTEST_EPILOG_CTLD"
  for i in "${!NAMES[@]}"; do
    echo "NodeName=${NAMES[$i]} NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((BASE + 1 + i)) CPUs=1 State=UNKNOWN"
  done
  echo "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  echo "PartitionName=debug Nodes=ALL MaxTime=30 State=UP"
} >"$CONF"
if [ "${SLURMTEST_JWT:-0}" = 1 ]; then
  dd if=/dev/urandom of="$DIR/etc/jwt_hs256.key" bs=32 count=1 status=none
  chmod 0600 "$DIR/etc/jwt_hs256.key"
fi
echo "export SLURM_CONF=$CONF" >"$DIR/env.sh"

deadline=$(( ${EPOCHSECONDS} + TIMEOUT ))
past_deadline() { [ "$EPOCHSECONDS" -ge "$deadline" ]; }

# ---- slurmctld (daemonizes; -i: ignore saved state, there is none)
env SLURMTEST_ID="$ID" slurmctld -i 9>&- || die "slurmctld failed:$(echo; logtail "$DIR/log/slurmctld.log")"
until scontrol ping 2>/dev/null | grep -q 'is UP'; do
  p=$(cat "$DIR/run/slurmctld.pid" 2>/dev/null || true)
  if [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null; then
    die "slurmctld exited:$(echo; logtail "$DIR/log/slurmctld.log")"
  fi
  past_deadline && die "slurmctld not answering after ${TIMEOUT}s:$(echo; logtail "$DIR/log/slurmctld.log")"
  sleep 0.1
done
say "slurmctld up on port $CTLD_PORT"

# ---- one slurmd per fake node, started in parallel (each daemonizes)
launchers=()
for name in "${NAMES[@]}"; do
  mkdir -p "$DIR/spool/$name"
  env SLURMTEST_ID="$ID" slurmd -N "$name" 9>&- &
  launchers+=($!)
done
for i in "${!launchers[@]}"; do
  wait "${launchers[$i]}" || die "slurmd -N ${NAMES[$i]} failed:$(echo; logtail "$DIR/log/slurmd-${NAMES[$i]}.log")"
done
idle=0
until [ "$idle" -ge "$N" ]; do
  past_deadline && die "$idle of $N nodes idle after ${TIMEOUT}s:$(echo; sinfo 2>&1 | sed 's/^/    /')"
  sleep 0.2
  idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | awk '{s += $1} END {print s + 0}')
done
say "$N slurmd registered (ports $((BASE + 1))-$((BASE + N)))"

# slurmctld's first scheduling pass comes a few seconds after its start; a
# job submitted before it stays PENDING until then. Wait for it.
cycles() { sdiag 2>/dev/null | awk '/^Main schedule statistics/ {m = 1} m && /Total cycles:/ {print $3; exit}'; }
until [ "$(cycles)" -ge 1 ] 2>/dev/null; do
  past_deadline && die "no scheduling cycle within ${TIMEOUT}s"
  sleep 0.1
done
say "scheduler running"

# ---- slurmrestd. It refuses to run as root (SlurmUser here), so it drops to
# nobody (-u). Only the openapi/v0.0.38 plugin is loaded: the dbv0.0.38 one is
# fatal without slurmdbd.
RESTD_SOCKET=
RESTD_JWT_URL=
if [ "${SLURMTEST_RESTD:-0}" = 1 ]; then
  # rest_auth/local authenticates unix-socket peers only; the socket is made
  # after the uid change, so its directory belongs to nobody.
  install -d -o nobody -m 0755 "$DIR/rest"
  RESTD_SOCKET=$DIR/rest/slurmrestd.sock
  env SLURMTEST_ID="$ID" slurmrestd -u nobody -s openapi/v0.0.38 -a rest_auth/local "unix:$RESTD_SOCKET" \
    </dev/null >"$DIR/log/slurmrestd.log" 2>&1 9>&- &
  echo $! >"$DIR/run/slurmrestd.pid"
  until [ -S "$RESTD_SOCKET" ]; do
    kill -0 "$(cat "$DIR/run/slurmrestd.pid")" 2>/dev/null || die "slurmrestd exited:$(echo; logtail "$DIR/log/slurmrestd.log")"
    past_deadline && die "slurmrestd not up after ${TIMEOUT}s:$(echo; logtail "$DIR/log/slurmrestd.log")"
    sleep 0.05
  done
  say "slurmrestd on unix:$RESTD_SOCKET"
fi
if [ "${SLURMTEST_JWT:-0}" = 1 ]; then
  # SLURM_JWT=daemon lets this slurmrestd accept user tokens; it also breaks
  # rest_auth/local in the same process, hence a second instance. Clients
  # send X-SLURM-USER-NAME and X-SLURM-USER-TOKEN (scontrol token).
  env SLURMTEST_ID="$ID" SLURM_JWT=daemon slurmrestd -u nobody -s openapi/v0.0.38 -a rest_auth/jwt "127.0.0.1:$REST_PORT" \
    </dev/null >"$DIR/log/slurmrestd-jwt.log" 2>&1 9>&- &
  echo $! >"$DIR/run/slurmrestd-jwt.pid"
  until (exec 3<>"/dev/tcp/127.0.0.1/$REST_PORT") 2>/dev/null; do
    kill -0 "$(cat "$DIR/run/slurmrestd-jwt.pid")" 2>/dev/null || die "slurmrestd (JWT) exited:$(echo; logtail "$DIR/log/slurmrestd-jwt.log")"
    past_deadline && die "slurmrestd (JWT) not up after ${TIMEOUT}s:$(echo; logtail "$DIR/log/slurmrestd-jwt.log")"
    sleep 0.05
  done
  RESTD_JWT_URL=http://127.0.0.1:$REST_PORT
  say "slurmrestd (JWT) on $RESTD_JWT_URL"
fi

NODELIST=$(SLURM_CONF=$DIR/etc/hostlist.conf scontrol show hostlist "$(IFS=,; echo "${NAMES[*]}")")
cat >"$DIR/cluster.env" <<EOF
SLURMTEST_ID=$ID
SLURM_CONF=$CONF
CTLD_PORT=$CTLD_PORT
SLURMD_PORTS=$((BASE + 1))-$((BASE + N))
NODES=$NODELIST
NODE_COUNT=$N
RESTD_SOCKET=$RESTD_SOCKET
RESTD_JWT_URL=$RESTD_JWT_URL
EOF
# ---- the watchdog: stop the cluster when the owner process is gone
if [ -n "${SLURMTEST_OWNER_PID:-}" ]; then
  birth=$(starttime "$SLURMTEST_OWNER_PID") || die "owner pid $SLURMTEST_OWNER_PID not running"
  setsid "$HERE/start.sh" --watchdog "$DIR" "$SLURMTEST_OWNER_PID" "$birth" </dev/null >/dev/null 2>&1 9>&- &
  echo $! >"$DIR/run/watchdog.pid"
fi

say "ready: $N nodes $NODELIST in $DIR (SLURM_CONF=$CONF)"
