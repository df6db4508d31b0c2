#!/usr/bin/env bash
# bench/sar/run.sh — scheduling-aware routing as seed 001 §3 evaluates it:
# per fabric, job mixes (Lublin-Feitelson sizes, SLURM-like placement by
# topology/tree and select/linear, and scattered as the locality-blind
# reference; 10 seeds each), the multi-switch jobs given to every engine,
# effective EFI over all jobs and per job, dark fiber, and the lower bound
# of any destination-based routing (`nuesm study sar`). Writes
# bench/sar/RESULTS.md and bench/sar/<fabric>/{report.md,mixes.csv,jobs.csv}.
# Usage: bench/sar/run.sh        (make bench-sar; ~10 min on 2 cores)
#        VLS="1 2 4" bench/sar/run.sh   (make bench-sar VLS="1 2 4"; ~5 min)
# With VLS set, every fabric runs once per VL count, into
# bench/sar/<fabric>/vl<k>/{report.md,mixes.csv}; bench/sar/vls.py sums
# them up with the default run's 8-VL mixes.csv into bench/sar/vls.md, and
# RESULTS.md gets that section in place of its old one. The default run
# appends bench/sar/vls.md as it stands.
set -euo pipefail
cd "$(dirname "$0")/../.."
nuesm=./bin/nuesm
[ -x "$nuesm" ] || make build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=bench/sar/RESULTS.md
seeds=${SEEDS:-1-10}
vls=${VLS:-}
fat=sar-nue,sar-nue:spread=off,nue,sar-dfsssp,dfsssp,ftree,minhop,updn
direct=sar-nue,sar-nue:spread=off,nue,sar-dfsssp,dfsssp,dor,lash,minhop,updn
# The fabrics: name, generator arguments, engines, node selections.
fabrics=(
  "clos2-36|clos2 --radix 36|$fat|tree,linear,scatter"
  "fattree-8-3|fattree --k 8 --n 3|$fat|tree,linear,scatter"
  "fattree-12-3|fattree --k 12 --n 3|$fat|tree,linear,scatter"
  "fattree-8-3-fail20|fattree --k 8 --n 3 --fail-links 20 --fail-seed 3|$fat|tree,linear,scatter"
  "torus-6x6x6|torus --dims 6x6x6 --hosts 2|$direct|linear,tree,scatter"
  "torus-8x8|torus --dims 8x8 --hosts 4|$direct|linear,tree,scatter"
)
if [ -n "$vls" ]; then
  sec=bench/sar/vls.md
  args=()
  for f in "${fabrics[@]}"; do
    IFS='|' read -r name gen engines allocs <<< "$f"
    # shellcheck disable=SC2086
    $nuesm gen $gen -o "$work/$name.topo" >/dev/null 2>&1
    for k in $vls; do
      d=bench/sar/$name/vl$k
      mkdir -p "$d"
      if ! nice -n 10 $nuesm study sar "$work/$name.topo" --engines "$engines" --allocs "$allocs" \
          --seeds "$seeds" --vls "$k" -q -o "$d" > /dev/null 2> "$work/$name.err"; then
        cat "$work/$name.err" >&2
        exit 1
      fi
      rm -f "$d/jobs.csv" # per-job figures: the worst job EFI is in mixes.csv
      args+=("$k:$d/mixes.csv")
    done
    [ -f "bench/sar/$name/mixes.csv" ] && args+=("8:bench/sar/$name/mixes.csv")
  done
  {
    echo "## Fewer VLs: every fabric at $(echo "$vls" | sed 's/ /, /g') VLs ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown))"
    echo
    echo "Written by \`VLS=\"$vls\" bench/sar/run.sh\` (\`make bench-sar VLS=\"$vls\"\`): the"
    echo "fabrics above with the same mixes (seeds $seeds, tree, linear and scatter placement) and"
    echo "engines, each study run as \`nuesm study sar FABRIC --engines ENGINES --allocs ALLOCS"
    echo "--seeds $seeds --vls K -o bench/sar/FABRIC/vlK\` (ENGINES and ALLOCS as above), summed up by"
    echo "\`bench/sar/vls.py\` with the 8-VL figures of the run above (its mixes.csv). Best other: the"
    echo "engine with the lowest effective EFI on each mix among all but sar-nue and"
    echo "sar-nue:spread=off. Per-mix figures: [FABRIC/vlK/report.md](fattree-8-3/vl1/report.md)"
    echo "and mixes.csv."
    echo
    python3 bench/sar/vls.py "${args[@]}"
    echo
  } > "$sec"
  sed -i '/^## Fewer VLs: \|^## Reading (hand-written/,$d' "$out"
  cat "$sec" >> "$out"
  { echo; cat bench/sar/NOTES.md; } >> "$out"
  exit 0
fi
{
  echo "# Scheduling-aware routing ($(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3))"
  echo
  echo "Written by \`make bench-sar\` (\`bench/sar/run.sh\`), seeds $seeds per placement. A mix is"
  echo "the set of jobs running after 200 job starts of a first-come-first-served batch"
  echo "system (\`sar.Mix\`): sizes from Lublin and Feitelson's model (24 % serial, up to a"
  echo "quarter of the hosts), placement by SLURM's topology/tree (\`tree\`) or select/linear"
  echo "(\`linear\`) node selection, or scattered at random (\`scatter\`, no locality: the"
  echo "reference for fragmented or locality-blind placement). The engines get the"
  echo "multi-switch jobs, as the SAR filter passes them. Effective EFI: the most"
  echo "intra-job paths (all jobs together) on one switch-to-switch channel; worst job"
  echo "EFI: the largest per-job effective EFI; mean job EFI: the per-job effective EFI"
  echo "averaged over a mix's jobs; dark fiber: cables no intra-job path uses. The bound"
  echo "(\`sar.Bound\`) is a lower bound for any destination-based routing: a switch"
  echo "with a of a job's s hosts sends a·(s−a) paths over its channels, a at a time"
  echo "(one table entry per destination). Gains are (engine − sar-nue) / engine,"
  echo "averaged over the mixes. Every routing is verified (all pairs, no loops,"
  echo "acyclic CDG per VL within 8 VLs); n/a names the engine's failure."
  echo "\`sar-nue:spread=off\` is sar-nue without its spreading of job destinations'"
  echo "paths (\`sar/spread.go\`), measured in the same run."
  echo
} > "$out"
run() { # name, gen args, engines, allocs
  local name=$1 gen=$2 engines=$3 allocs=$4
  # shellcheck disable=SC2086
  $nuesm gen $gen -o "$work/$name.topo" >/dev/null 2>&1
  mkdir -p "bench/sar/$name"
  if ! nice -n 10 $nuesm study sar "$work/$name.topo" --engines "$engines" --allocs "$allocs" --seeds "$seeds" \
      -q -o "bench/sar/$name" > "$work/$name.md" 2> "$work/$name.err"; then
    cat "$work/$name.err" >&2
    exit 1
  fi
  {
    echo "## $name (\`nuesm gen $gen\`)"
    echo
    sed '1d' "$work/$name.md" | sed 's/^#### /### /'
    echo
    echo "Data: [$name/mixes.csv]($name/mixes.csv) (per mix and engine), [$name/jobs.csv]($name/jobs.csv) (per job)."
    echo
  } >> "$out"
}
for f in "${fabrics[@]}"; do
  IFS='|' read -r name gen engines allocs <<< "$f"
  run "$name" "$gen" "$engines" "$allocs"
done
# The fewer-VLs section of the last VLS run, then the hand-written reading
# of the figures, kept beside the script.
if [ -f bench/sar/vls.md ]; then
  cat bench/sar/vls.md >> "$out"
fi
if [ -f bench/sar/NOTES.md ]; then
  { echo; cat bench/sar/NOTES.md; } >> "$out"
fi
