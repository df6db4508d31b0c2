#!/usr/bin/env bash
# bench/opensm/bench.sh — `make bench-opensm`: run.sh over the fixed set of
# fabrics and keep the tables in bench/opensm/results-<date>.txt.
#   3-level fat tree k=12 (432 switches, 1,728 CAs)
#   torus 8×8×8 with 4 CAs per switch (512 switches, 2,048 CAs)
#   random: 128 switches, 4 cables to other switches each, 8 CAs per switch
#   the corpus fabrics, ../shared/corpus/ibnetdiscover/*.topo (skipped
#   when that folder is absent; CORPUS=DIR names another)
# Every engine at 8 VLs, then nue at 1 VL on the same set; then nue at
# 1, 2, 4 and 8 VLs on the balance set (issue 18: few layers):
#   Dragonfly p=4 a=8 h=4 (264 switches, 1,056 CAs)
#   torus 7×7×7 with 6 CAs per switch (343 switches, 2,058 CAs)
#   Kautz(7,3) with 6 CAs per switch (392 switches, 2,352 CAs)
#   the fat tree k=12 n=3 with 3 % of its cables failed (seed 7)
# and a summary of the balance set: avg hops and max EFI per k, OpenSM's
# nue beside ours. BALANCE=0 skips the balance set, NUE1=0 the 1-VL run.
# Usage: bench/opensm/bench.sh [OUTFILE]; ENGINES, WORK and the variables of
# run.sh apply. The whole of it takes about an hour on 2 cores (OpenSM's
# dfsssp attempt on the torus alone is 30 s a run, 3 runs; its nue on the
# damaged fat tree 16 s).
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

# workdir SUFFIX: run.sh's -w for one more run (a directory of its own)
workdir() { [ -z "${WORK:-}" ] || echo "-w $WORK/$1"; }

if [ "${NUE1:-1}" != 0 ]; then
  { echo ""; echo "## nue at 1 VL, the same fabrics"; echo ""; } | tee -a "$out"
  # shellcheck disable=SC2046 # workdir is empty or two words
  VLS=1 "$here/run.sh" $(workdir nue-vls1) -e nue "$@" | tee -a "$out"
fi

if [ "${BALANCE:-1}" != 0 ]; then
  "$nuesm" gen dragonfly --p 4 --a 8 --h 4 -o "$fabrics/dragonfly-p4a8h4.topo" >&2
  "$nuesm" gen torus --dims 7x7x7 --hosts 6 -o "$fabrics/torus-7x7x7-h6.topo" >&2
  "$nuesm" gen kautz --d 7 --k 3 --hosts 6 -o "$fabrics/kautz-7-3-h6.topo" >&2
  "$nuesm" gen fattree --k 12 --n 3 --fail-link-fraction 0.03 --fail-seed 7 --skip-critical \
    -o "$fabrics/fattree-k12-n3-fail3.topo" >&2
  bal=("$fabrics/dragonfly-p4a8h4.topo" "$fabrics/torus-7x7x7-h6.topo" "$fabrics/kautz-7-3-h6.topo" "$fabrics/fattree-k12-n3-fail3.topo")
  for k in 1 2 4 8; do
    { echo ""; echo "## nue at $k VLs, the balance set"; echo ""; } | tee -a "$out"
    # shellcheck disable=SC2046
    VLS=$k "$here/run.sh" $(workdir "balance-vls$k") -e nue "${bal[@]}" | tee -a "$out" > "$fabrics/balance-$k.txt"
  done
  {
    echo ""
    echo "## Balance set summary: nue, OpenSM / nuesm"
    echo ""
    echo "| fabric | VLs | avg hops OpenSM | avg hops nuesm | max EFI OpenSM | max EFI nuesm | nuesm ≤ OpenSM on both |"
    echo "|---|---|---|---|---|---|---|"
    for k in 1 2 4 8; do
      awk -F'|' -v k="$k" '
        /^### / { name = $0; sub(/^### /, "", name); sub(/ \(.*/, "", name) }
        /^\| nue \|/ {
          split($10, h, " / "); split($11, e, " / ")
          gsub(/ /, "", h[1]); gsub(/ /, "", h[2]); gsub(/ /, "", e[1]); gsub(/ /, "", e[2])
          ok = (h[2] != "–" && e[2] != "–" && h[2] + 0 <= h[1] + 0 && e[2] + 0 <= e[1] + 0) ? "yes" : "NO"
          printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, k, h[1], h[2], e[1], e[2], ok
        }' "$fabrics/balance-$k.txt"
    done
  } | tee -a "$out"
fi
echo "bench.sh: tables written to $out" >&2
