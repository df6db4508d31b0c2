#!/usr/bin/env bash
# bench/opensm/bench.sh — `make bench-opensm`: run.sh over the fixed set of
# fabrics and keep the tables in bench/opensm/results-<date>.txt.
#   3-level fat tree k=12 (432 switches, 1,728 CAs)
#   torus 8×8×8 with 4 CAs per switch (512 switches, 2,048 CAs)
#   random: 128 switches, 4 cables to other switches each, 8 CAs per switch
#   the corpus fabrics, ../shared/corpus/ibnetdiscover/*.topo (skipped
#   when that folder is absent; CORPUS=DIR names another)
# Usage: bench/opensm/bench.sh [OUTFILE]; ENGINES, WORK and the variables of
# run.sh apply. The whole set takes 8–20 minutes on 2 cores (OpenSM's
# dfsssp attempt on the torus alone is 30 s a run, 3 runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
nuesm=${NUESM:-$repo/bin/nuesm}
out=${1:-$here/results-$(date -u +%Y-%m-%d).txt}
corpus=${CORPUS:-$repo/../shared/corpus/ibnetdiscover}
engines=${ENGINES:-minhop updn dfsssp nue}
[ -x "$nuesm" ] || { echo "bench.sh: $nuesm not found: run make build" >&2; exit 1; }

fabrics=$(mktemp -d "${TMPDIR:-/tmp}/nuesm-fabrics.XXXXXX")
trap 'rm -rf "$fabrics"' EXIT
"$nuesm" gen fattree --k 12 --n 3 -o "$fabrics/fattree-k12-n3.topo" >&2
"$nuesm" gen torus --dims 8x8x8 --hosts 4 -o "$fabrics/torus-8x8x8-h4.topo" >&2
"$nuesm" gen random --switches 128 --degree 4 --hosts 8 --seed 1 -o "$fabrics/random-128-h8.topo" >&2
set -- "$fabrics/fattree-k12-n3.topo" "$fabrics/torus-8x8x8-h4.topo" "$fabrics/random-128-h8.topo"
if [ -d "$corpus" ]; then
  for f in "$corpus"/*.topo; do [ -f "$f" ] && set -- "$@" "$f"; done
else
  echo "bench.sh: no corpus at $corpus, skipping the corpus fabrics" >&2
fi

workargs=()
[ -n "${WORK:-}" ] && workargs=(-w "$WORK")
{
  echo "# nuesm vs OpenSM, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# $(opensm --version 2>/dev/null | sed -n 's/^OpenSM /OpenSM /p' | head -1); ibsim $(dpkg-query -W -f='${Version}' ibsim-utils 2>/dev/null || echo '?');" \
       "$(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $(uname -sr)"
  echo "# nuesm built from commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?') and the working tree"
  echo "# VLs: ${VLS:-8}; times: the shortest of ${REPEAT:-3} runs each; ratio = OpenSM routing time / nuesm route_seconds (route + verify)"
  echo ""
} | tee "$out"
"$here/run.sh" "${workargs[@]}" -e "$engines" "$@" | tee -a "$out"
echo "bench.sh: tables written to $out" >&2
