#!/usr/bin/env bash
# bench/fip/run.sh — the fail-in-place study (seed 001 §2): 1 % of the
# links and 1 % of the switches fail per year over 8 years, 3 seeds; every
# engine reroutes each year and flitsim measures all-to-all shift and
# uniform (offered load 1) throughput. Writes bench/fip/<fabric>/ (CSV,
# JSON, summary, SVG plots) and bench/fip/RESULTS.md.
# Usage: bench/fip/run.sh        (make bench-fip; about 15 min on 2 shared cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
nuesm=./bin/nuesm
[ -x "$nuesm" ] || make build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=bench/fip/RESULTS.md
{
  echo "# Fail-in-place study ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  echo "Written by \`make bench-fip\` (\`bench/fip/run.sh\`). Per fabric: 8 years, 1 % of"
  echo "the original switch-to-switch cables and 1 % of the switches failing per year"
  echo "(cumulative, never repaired unless critical), seeds 1, 2, 3. Throughput is the"
  echo "accepted throughput per source as a fraction of the link bandwidth, mean over"
  echo "the seeds: shift = all-to-all shift exchange (one 8-flit packet per pair),"
  echo "uniform = uniform random at offered load 1 (saturation). Simulator defaults:"
  echo "virtual cut-through, 32-flit buffers per VL, 1 flit/cycle links. Beside every"
  echo "figure: the bound of the damaged fabric (what the best possible routing reaches,"
  echo "studies/fip/flowbound.go) and the engine's share of it."
} > "$out"
run() { # name, gen args, engines
  local name=$1 gen=$2 engines=$3
  # shellcheck disable=SC2086
  $nuesm gen $gen -o "$work/$name.topo" 2>/dev/null
  mkdir -p "bench/fip/$name"
  if ! $nuesm study fip "$work/$name.topo" --engines "$engines" --seeds 1,2,3 -o "bench/fip/$name" 2> "$work/$name.err" > "$work/$name.txt"; then
    tr '\r' '\n' < "$work/$name.err" | grep -v '^fip: [0-9]' >&2
    exit 1
  fi
  {
    echo
    echo "## $name (\`nuesm gen $gen\`)"
    echo
    echo '```'
    sed -n '/^failures/,/^wrote /{/^wrote /d;p}' "$work/$name.txt"
    echo '```'
    echo
    echo "Plots: [shift]($name/fip-shift.svg), [uniform]($name/fip-uniform.svg); data: [$name/fip.csv]($name/fip.csv)."
  } >> "$out"
}
# sar-nue:spread=all: Nue's tables with every terminal's paths spread
# over parallel channels after routing (sar/spread.go; no jobs here);
# :layers=4 routes on 4 layers and deals each over 2 VLs by source and
# destination (nue/vlspread.go). dfsssp:vlbalance=off: DFSSSP without
# dealing its layer over the spare VLs (see NOTES.md).
run fattree-4-3 "fattree --k 4 --n 3" nue,sar-nue:spread=all,sar-nue:spread=all:layers=4,dfsssp,dfsssp:vlbalance=off,updn,minhop,ftree
# nue:share=switchlid: Nue with one search per LID, which auto gives up in
# direct networks (see NOTES.md).
run torus-4x4x4 "torus --dims 4x4x4 --hosts 2" nue,nue:share=switchlid,sar-nue:spread=all,sar-nue:spread=all:layers=4,dfsssp,updn,minhop,dor,lash
# Hand-written reading of the figures, kept beside the script.
if [ -f bench/fip/NOTES.md ]; then
  { echo; cat bench/fip/NOTES.md; } >> "$out"
fi
echo "wrote $out"
