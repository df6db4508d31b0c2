#!/usr/bin/env bash
# bench/output/run.sh — bytes written per table set and per published
# generation, and the time it takes, for the compact forms (nuesm.lft,
# nuesm.sl2vl) against the older layout (OpenSM's LFT and SL2VL text dumps
# in every set), side by side in one run:
#   route: `nuesm route` (with opensm-lfts.dump, which users hand to
#          OpenSM) and `nuesm route --compact`, wall time of each;
#   serve: the first generation the daemon publishes, with the OpenSM dump
#          in it (opensm_dump on: no deployer) and without (off: the
#          deployer's layout), the daemon's "publish" phase (writing and
#          fsync) and its "diff" phase on the next reroute (reading the
#          published generation back).
# The older layout is measured with NUESM_OLD (a binary from before the
# compact forms, e.g. commit 0974dab); without it, its bytes are
# reconstructed (the new set's files, with nuesm export's
# opensm-sl2vl.dump in place of nuesm.lft and nuesm.sl2vl) and its times
# are left out.
# Usage: bench/output/run.sh [OUTFILE]   (default: stdout only)
# Env:   FABRICS="clos36 df" (clos56 adds the radix-56 Clos: route only,
#        about 15 GB of disk per set with the dump); NUESM (bin/nuesm).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/dev/null}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
nuesm=${NUESM:-./bin/nuesm}
[ -x "$nuesm" ] || make build >/dev/null
old=${NUESM_OLD:-}
fabrics=${FABRICS:-clos36 df}

say() { echo "$*" | tee -a "$out"; }
spec() {
  case $1 in
  clos36) echo "clos3 --radix 36|3-level Clos radix 36" ;;
  df) echo "dragonfly --p 8 --a 16 --h 8|Dragonfly p=8 a=16 h=8" ;;
  clos56) echo "clos3 --radix 56|3-level Clos radix 56" ;;
  torus4) echo "torus --dims 4x4x4 --hosts 2|torus 4×4×4, 2 CAs/switch (a quick check of the script)" ;;
  *) echo "unknown fabric $1" >&2; exit 2 ;;
  esac
}
size() { if [ -e "$1" ]; then stat -c %s "$1"; else echo 0; fi; }
mb() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1e6}'; }

# row NAME DIR [WALL]: one table row from the files in DIR.
row() {
  local d=$2 lfts nlft sl2vl sl qos fab plan total
  lfts=$(size "$d/opensm-lfts.dump"); nlft=$(size "$d/nuesm.lft")
  sl2vl=$(( $(size "$d/opensm-sl2vl.dump") + $(size "$d/nuesm.sl2vl") ))
  sl=$(size "$d/nuesm.sl"); qos=$(size "$d/qos-policy.conf"); fab=$(size "$d/fabric.topo")
  plan=$(size "$d/plan.json")
  total=$(du -sb --apparent-size "$d" | cut -f1)
  echo "$total" > "$work/last-total"
  say "| $1 | $(mb "$lfts") | $(mb "$nlft") | $(mb "$sl2vl") | $(mb "$sl") | $(mb "$qos") | $(mb "$fab") | $(mb "$plan") | **$(mb "$total")** | ${3:-–} |"
}

# route BIN DIR [ARGS…]: route the fabric, print the wall seconds.
route() {
  local bin=$1 dir=$2; shift 2
  sync
  /usr/bin/time -f %e -o "$work/time" nice -n 10 "$bin" route "$work/f.topo" --engine nue --vls 8 -q -o "$dir" "$@" >/dev/null
  cat "$work/time"
}

freeport() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
status() { curl -sf "http://127.0.0.1:$1/status" | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['reroutes'], d['last_result'], 1 if d.get('published') else 0)"; }
phase() { curl -sf "http://127.0.0.1:$1/metrics" | awk -v p="$2" '$1 == "nuesm_reroute_phase_duration_seconds_sum{phase=\"" p "\"}" {printf "%.2f", $2}'; }

# serve BIN OUT [ARGS…]: publish the first generation, reroute once more
# (unchanged), write "publish_s diff_s result" to $work/serve.out (the
# second reroute's diff reads the published generation back). It runs in
# this shell, so that the exit trap stops the daemon.
serve() {
  local bin=$1 dir=$2 port st; shift 2
  port=$(freeport)
  sync
  nice -n 10 "$bin" serve --fabric "$work/f.topo" -o "$dir" --listen "127.0.0.1:$port" "$@" >"$work/serve.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  local deadline=$((SECONDS + 1800))
  until st=$(status "$port" 2>/dev/null) && [ "${st##* }" = 1 ]; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "serve: no publish" >&2; exit 1; }
    sleep 2
  done
  local diff0
  diff0=$(phase "$port" diff)
  curl -sf -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$port/reroute" >/dev/null
  until st=$(status "$port") && [ "${st%% *}" -ge 2 ]; do sleep 1; done
  echo "$(phase "$port" publish) $(awk -v a="$(phase "$port" diff)" -v b="$diff0" 'BEGIN{printf "%.2f", a-b}') ${st#* }" >"$work/serve.out"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pids=("${pids[@]/$pid}")
}

: > "$out"
say "# Bytes per table set and per generation ($(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3))"
say ""
say "MB (10^6 bytes) per file; SL2VL is opensm-sl2vl.dump in the older layout, nuesm.sl2vl in the new one;"
say "total is everything in the directory (summary.json, status.json too). Nue, 8 VLs. Older layout:"
if [ -n "$old" ]; then say "measured with ${NUESM_OLD_REV:-$old}."; else say "reconstructed (no NUESM_OLD given), no times."; fi
for f in $fabrics; do
  IFS='|' read -r args name < <(spec "$f")
  # shellcheck disable=SC2086
  $nuesm gen $args -o "$work/f.topo" >/dev/null 2>&1
  say ""
  say "## $name"
  say ""
  say "| set | opensm-lfts.dump | nuesm.lft | SL2VL | nuesm.sl | qos-policy.conf | fabric.topo | plan.json | total | wall s |"
  say "|---|---|---|---|---|---|---|---|---|---|"
  if [ -n "$old" ]; then
    w=$(route "$old" "$work/old"); row "route, older layout" "$work/old" "$w"; rm -rf "$work/old"
  fi
  before=$(cat "$work/last-total" 2>/dev/null || echo 0)
  w=$(route "$nuesm" "$work/new"); row "route" "$work/new" "$w"
  if [ "$f" != clos56 ]; then
    # write and read times of the set alone, each layout in one process
    sync
    NUESM_BENCH_SET="$work/new" nice -n 10 go test -run '^$' -bench '^BenchmarkTableSet(Write|Read)$' -benchtime 1x -count 3 ./lft/ >"$work/setbench.txt"
  fi
  if [ -z "$old" ]; then
    # the older layout's files: these, with OpenSM's SL2VL dump in place
    # of nuesm.lft and nuesm.sl2vl
    $nuesm export "$work/new" -o "$work/exp" >/dev/null
    mkdir -p "$work/old"
    for x in opensm-lfts.dump nuesm.sl qos-policy.conf fabric.topo summary.json; do [ -e "$work/new/$x" ] && ln "$work/new/$x" "$work/old/$x"; done
    mv "$work/exp/opensm-sl2vl.dump" "$work/old/"
    row "route, older layout (reconstructed)" "$work/old"
    before=$(cat "$work/last-total")
    rm -rf "$work/old" "$work/exp"
  fi
  rm -rf "$work/new"
  w=$(route "$nuesm" "$work/compact" --compact); row "route --compact" "$work/compact" "$w"
  compact=$(cat "$work/last-total")
  rm -rf "$work/compact"
  say ""
  say "route --compact writes $(awk -v a="$before" -v b="$compact" 'BEGIN{printf "%.0f", a/b}')× fewer bytes than the older layout."
  [ "$f" = clos56 ] && continue
  say ""
  say "Writing the set alone (files synced and renamed, as route and serve write them) and reading it back"
  say "(ReadTableSet: verify, diff, plan, the daemon's next reroute); median of 3, \`go test -bench TableSet ./lft\`:"
  say ""
  say "| layout | write s | read s |"
  say "|---|---|---|"
  awk '/^BenchmarkTableSet(Write|Read)\// {split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); k = (n[1] ~ /Write/ ? "w" : "r") SUBSEP n[2]; t[k] = t[k] " " $3}
       function median(s,   v, k, i, j, x) { k = split(s, v, " ")
         for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
         return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
       function cell(k) { return (k in t) ? sprintf("%.2f", median(t[k]) / 1e9) : "–" }
       END { split("older route compact", L, " "); split("older (OpenSM LFT + SL2VL dumps)|route (nuesm.lft + OpenSM LFT dump)|compact (route --compact, deployer generation)", N, "|")
             for (i = 1; i <= 3; i++) printf "| %s | %s | %s |\n", N[i], cell("w" SUBSEP L[i]), cell("r" SUBSEP (L[i] == "route" ? "compact" : L[i])) }' "$work/setbench.txt" | tee -a "$out"
  say ""
  say "(A set with both LFT forms is read from nuesm.lft, as a compact one.)"
  say ""
  say "| first generation of nuesm serve | opensm-lfts.dump | nuesm.lft | SL2VL | nuesm.sl | qos-policy.conf | fabric.topo | plan.json | total | publish s / read-back s |"
  say "|---|---|---|---|---|---|---|---|---|---|"
  if [ -n "$old" ]; then
    serve "$old" "$work/s-old"; read -r pub rd res <"$work/serve.out"
    row "older layout" "$work/s-old/gen-000001" "$pub / $rd"
    gbefore=$(cat "$work/last-total"); rm -rf "$work/s-old"
  fi
  serve "$nuesm" "$work/s-on" --opensm-dump on; read -r pub rd res <"$work/serve.out"
  row "opensm_dump on (OpenSM reads current/opensm-lfts.dump)" "$work/s-on/gen-000001" "$pub / $rd"
  rm -rf "$work/s-on"
  serve "$nuesm" "$work/s-off" --opensm-dump off; read -r pub rd res <"$work/serve.out"
  row "opensm_dump off (the deployer's layout)" "$work/s-off/gen-000001" "$pub / $rd"
  goff=$(cat "$work/last-total"); rm -rf "$work/s-off"
  if [ -n "$old" ]; then
    say ""
    say "A generation in the deployer's layout is $(awk -v a="$gbefore" -v b="$goff" 'BEGIN{printf "%.0f", a/b}')× smaller than in the older layout."
  fi
done
say ""
say "## What the figures are"
say ""
say "* A table set (\`nuesm route -o DIR\`) and a published generation (\`DIR/gen-NNNNNN\` of \`nuesm serve\`)"
say "  keep their LFTs as \`nuesm.lft\` (lft/LFTFORMAT.md: what OpenSM's dump holds but the node"
say "  descriptions, gzip) and their SL2VL tables as \`nuesm.sl2vl\` (the rows that differ from the"
say "  default map). OpenSM's LFT dump is written where OpenSM reads it: by \`nuesm route\` unless"
say "  \`--compact\`, into the current generation with \`opensm_dump = \"on\"\` (\"auto\" without the"
say "  deployer; a generation that stops being current loses it), never into a generation with the"
say "  deployer, which stages it at its \`lfts_file\` (those writes are the deployer's, not counted here)."
say "  \`nuesm export\` writes OpenSM's dumps of any set."
say "* A generation whose fabric did not change (a reroute for jobs, a restart) links \`fabric.topo\`"
say "  from the one before: 0 bytes written for it."
say "* The first generation's \`plan.json\` counts its LFT writes (every entry of \`nuesm.lft\`) instead"
say "  of listing them; later plans list every write."
say "* publish s: the daemon's \"publish\" phase (every file written and fsynced); read-back s: the"
say "  \"diff\" phase of the next reroute, which reads the published generation back. The daemon's"
say "  plan phase (minutes on these fabrics, planning every entry of the first generation) is left out."
say "* route wall s is the whole command (routing, verification, metrics, writing) on a shared 2-core"
say "  machine; the write and read times of the set alone are in the bench table of each fabric."
