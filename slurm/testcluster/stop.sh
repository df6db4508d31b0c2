#!/usr/bin/env bash
# stop.sh - stop the test cluster that start.sh started in DIR.
#
# usage: stop.sh DIR [--purge]      (--purge also deletes DIR)
#
# It stops exactly the processes whose environment carries the cluster's
# SLURMTEST_ID (munged, slurmctld, the slurmd, slurmrestd, and the
# slurmstepd that the slurmd forked) plus the job processes below those
# slurmstepd, and the watchdog. Running jobs are cancelled first so that
# SLURM ends them itself. It waits until every one of them is gone (SIGTERM,
# then SIGKILL after 5 s), so that the ports are free when it returns, then
# marks DIR/run/stopped. Logs stay in DIR/log. Safe to run twice.
set -uo pipefail

DIR=${1:?usage: stop.sh DIR [--purge]}
T0=${EPOCHREALTIME/[.,]/}
[ -d "$DIR" ] || { echo "stop.sh: no $DIR"; exit 0; }
ID=$(cat "$DIR/run/id" 2>/dev/null || true)
[ -n "$ID" ] || { echo "stop.sh: no cluster id in $DIR/run/id, nothing to stop"; [ "${2:-}" != --purge ] || rm -rf "$DIR"; exit 0; }
export SLURM_CONF=$DIR/etc/slurm.conf

# ours: pids of live processes with SLURMTEST_ID=$ID in their environment,
# never this script or its ancestors (the watchdog runs stop.sh).
self=" $$ "
p=$PPID
while [ "$p" -gt 1 ] 2>/dev/null; do
  self+="$p "
  p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
done
ours() {
  local f pid
  for f in $(grep -l -z -x -F "SLURMTEST_ID=$ID" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}; pid=${pid%/environ}
    [[ $self == *" $pid "* ]] || echo "$pid"
  done
}
# descendants PID...: every child, grandchild, ... of the given pids (from
# /proc/*/stat: field 4 after the parenthesised command name is the ppid)
descendants() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v roots="$*" '
    { s = $0; sub(/^.*\) /, "", s); split(s, f, " "); parent[$1] = f[2]; order[++n] = $1 }
    END {
      m = split(roots, r, " "); for (i = 1; i <= m; i++) in_set[r[i]] = 1
      do {
        changed = 0
        for (i = 1; i <= n; i++) {
          p = order[i]
          if (!(p in in_set) && (parent[p] in in_set)) { in_set[p] = 1; print p; changed = 1 }
        }
      } while (changed)
    }'
}
alive() { local s; { s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1; s=${s##*) }; [[ $s != Z* && $s != X* ]]; }

# 1. cancel the jobs while slurmctld still answers, and give them a moment
if timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
  jobs=$(timeout 5 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    timeout 5 scancel $jobs 2>/dev/null
    for _ in $(seq 1 30); do
      [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
fi

# 2. everything of ours except munged (the others need it while they stop),
# and the job processes under the slurmstepd
victims=()
munge=()
for p in $(ours); do
  if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = munged ]; then munge+=("$p"); else victims+=("$p"); fi
done
jobprocs=()
[ ${#victims[@]} -gt 0 ] && jobprocs=($(descendants "${victims[@]}"))
wd=$(cat "$DIR/run/watchdog.pid" 2>/dev/null || true)
if [ -n "$wd" ] && [[ $self != *" $wd "* ]] && alive "$wd"; then
  kill -TERM "$wd" 2>/dev/null
fi

stop() {   # stop PID...: SIGTERM, wait up to 5 s, SIGKILL, wait until gone
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null
  local left=("$@") i
  for i in $(seq 1 100); do
    local still=()
    for p in "${left[@]}"; do alive "$p" && still+=("$p"); done
    left=("${still[@]}")
    [ ${#left[@]} -eq 0 ] && return 0
    [ "$i" = 50 ] && kill -KILL "${left[@]}" 2>/dev/null
    sleep 0.1
  done
  echo "stop.sh: still alive after SIGKILL: ${left[*]}" >&2
  return 1
}
rc=0
[ ${#jobprocs[@]} -gt 0 ] && kill -KILL "${jobprocs[@]}" 2>/dev/null
stop "${victims[@]}" || rc=1
stop "${munge[@]}" || rc=1
# whatever carries the id now was forked while we were stopping
late=($(ours))
[ ${#late[@]} -gt 0 ] && { kill -KILL "${late[@]}" 2>/dev/null; sleep 0.2; }

mkdir -p "$DIR/run" && touch "$DIR/run/stopped"
rm -f "$DIR"/run/*.pid
t=${EPOCHREALTIME/[.,]/}
echo "stop.sh: stopped ${#victims[@]} slurm processes, ${#jobprocs[@]} job processes, ${#munge[@]} munged in $(( (t - T0) / 1000 )) ms"
[ "${2:-}" = --purge ] && rm -rf "$DIR"
exit $rc
