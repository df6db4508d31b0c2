#!/usr/bin/env bash
# nuesm-hook.sh — SLURM PrologSlurmctld / EpilogSlurmctld hook for nuesm.
#
# Tells a running `nuesm serve` that the set of running jobs changed, so it
# reroutes (scheduling-aware routing) without waiting for its next poll.
# Install (slurm.conf on the controller):
#     PrologSlurmctld=/usr/local/lib/nuesm/nuesm-prolog.sh
#     EpilogSlurmctld=/usr/local/lib/nuesm/nuesm-epilog.sh
# where nuesm-prolog.sh / nuesm-epilog.sh are this script or links to it
# (the name decides the reason reported to nuesm).
#
# Environment (e.g. set in /etc/default/nuesm-hook, read if present):
#   NUESM_ADDR   host:port of nuesm serve's HTTP listener (default 127.0.0.1:9716)
#   NUESM_TOKEN  bearer token, needed when nuesm runs on another host
#   NUESM_HOOK_TIMEOUT  seconds to wait for nuesm (default 3)
#   NUESM_PROLOG_WAIT   prolog only: seconds to wait until the switches hold
#                tables routed for the job (GET /deployed?job=ID; needs curl
#                and nuesm's [opensm] deployer); 0 (default) = do not wait.
#                The wait is bounded and never fails the job: on timeout it
#                logs and the job starts on the tables the switches hold.
#   NUESM_HOOK_LOG  a file the hook appends its messages to (besides syslog)
#
# The hook never fails the job: nuesm unreachable is logged and ignored
# (nuesm's own polling catches up). Exit status is always 0.
set -u
[ -r /etc/default/nuesm-hook ] && . /etc/default/nuesm-hook
addr=${NUESM_ADDR:-127.0.0.1:9716}
timeout=${NUESM_HOOK_TIMEOUT:-3}
case "$(basename "$0")" in
  *epilog*) reason=epilog ;;
  *prolog*) reason=prolog ;;
  *)        reason=hook ;;
esac
url="http://$addr/reroute?reason=$reason"
log() {
  [ -n "${NUESM_HOOK_LOG:-}" ] && echo "$(date '+%Y-%m-%dT%H:%M:%S.%N') nuesm-hook: $*" >>"$NUESM_HOOK_LOG"
  command -v logger >/dev/null && logger -t nuesm-hook "$*" || echo "nuesm-hook: $*" >&2
}

if command -v curl >/dev/null; then
  # The daemon takes POST /reroute with this content type only (no
  # cross-site form posts).
  hdr=(-H "Content-Type: application/json")
  [ -n "${NUESM_TOKEN:-}" ] && hdr+=(-H "Authorization: Bearer $NUESM_TOKEN")
  if ! curl -fsS -o /dev/null --max-time "$timeout" -X POST "${hdr[@]}" "$url"; then
    log "could not reach nuesm at $addr (job ${SLURM_JOB_ID:-?}, $reason)"
  elif [ "$reason" = prolog ] && [ "${NUESM_PROLOG_WAIT:-0}" -gt 0 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
    ms() { echo $(( $(date +%s%N) / 1000000 )); } # GNU date: nanoseconds
    start=$(ms)
    # 200: deployed (or the job needs no tables of its own); 404: nuesm
    # has no deployer, so there is nothing to wait for; else: not yet.
    while code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time "$timeout" "${hdr[@]}" "http://$addr/deployed?job=$SLURM_JOB_ID" 2>/dev/null); [ "$code" != 200 ]; do
      if [ "$code" = 404 ]; then
        log "job $SLURM_JOB_ID: nuesm has no deployer ([opensm]); NUESM_PROLOG_WAIT has nothing to wait for"
        exit 0
      fi
      if [ $(( $(ms) - start )) -ge $(( NUESM_PROLOG_WAIT * 1000 )) ]; then
        log "job $SLURM_JOB_ID: its tables were not on the switches after ${NUESM_PROLOG_WAIT}s; starting it anyway"
        exit 0
      fi
      sleep 0.2
    done
    log "job $SLURM_JOB_ID: tables on the switches after $(( $(ms) - start )) ms"
  fi
else
  # No curl: speak HTTP/1.0 over bash's /dev/tcp.
  host=${addr%:*} port=${addr##*:}
  if ! exec 3<>"/dev/tcp/$host/$port" 2>/dev/null; then
    log "could not reach nuesm at $addr (job ${SLURM_JOB_ID:-?}, $reason)"
    exit 0
  fi
  auth=""
  [ -n "${NUESM_TOKEN:-}" ] && auth="Authorization: Bearer $NUESM_TOKEN"$'\r\n'
  printf 'POST /reroute?reason=%s HTTP/1.0\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 0\r\n\r\n' "$reason" "$addr" "$auth" >&3
  read -r -t "$timeout" status <&3 || true
  exec 3>&-
  case "$status" in
    *" 202 "*) ;;
    *) log "nuesm at $addr answered: ${status:-nothing} (job ${SLURM_JOB_ID:-?}, $reason)" ;;
  esac
fi
exit 0
