#!/usr/bin/env bash
# bench/nue/run.sh — the figures of the Nue issue, in one run:
#   1. avg hops and max EFI for k = 1, 2, 4, 8 on torus 8×8×8 (4 CAs per
#      switch) and the 3-level fat tree k=12, with the minimal hop count;
#   2. Nue vs our MinHop on the same fabrics (ratio of route times, from
#      go test -bench in one process);
#   3. scale: 3-level Clos radix 36 and Dragonfly p=8 a=16 h=8 at k=8:
#      wall time and peak RSS of `nuesm route` (/usr/bin/time -v).
# Usage: bench/nue/run.sh [OUTFILE]   (default: stdout only)
# Needs: make build (bin/nuesm); takes a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/dev/null}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nuesm=./bin/nuesm
[ -x "$nuesm" ] || make build >/dev/null

say() { echo "$*" | tee -a "$out"; }
: > "$out"
say "# Nue measurements ($(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3))"
say ""
say "## Quality: average hops and max EFI by k"
say ""
say "| fabric | minimal avg hops | k | avg hops | × minimal | max EFI | route s |"
say "|---|---|---|---|---|---|---|"
for spec in "torus --dims 8x8x8 --hosts 4:torus 8×8×8, 4 CAs/switch" "fattree --k 12 --n 3:fat tree k=12 n=3"; do
  args=${spec%%:*}; name=${spec#*:}
  # shellcheck disable=SC2086
  $nuesm gen $args -o "$work/f.topo" 2>/dev/null
  minimal=$($nuesm info "$work/f.topo" | sed -n 's/.*, \([0-9.]*\) avg between CAs/\1/p')
  for k in 1 2 4 8; do
    $nuesm route "$work/f.topo" --engine nue --vls "$k" -q -o "$work/out" >/dev/null
    read -r hops efi secs < <(python3 -c "import json;d=json.load(open('$work/out/summary.json'));print(d['avg_hops'],d['max_efi'],d['route_seconds'])")
    ratio=$(awk -v a="$hops" -v b="$minimal" 'BEGIN{printf "%.3f", a/b}')
    say "| $name | $minimal | $k | $(printf %.3f "$hops") | $ratio | $efi | $(printf %.2f "$secs") |"
  done
done
say ""
say "## Speed: Nue vs our MinHop (go test -bench, same process)"
say ""
# Five rounds of 10 routings each; the ratio of the medians (a single
# round moves by about ±10 % on this machine). MinHop uses both cores, so
# anything else running (such as the kernel writing back tables written
# earlier) slows it more than Nue: flush first and wait a moment.
sync; sleep 2
go test -run '^$' -bench '^Benchmark(Nue|MinHop)_' -benchtime 10x -count 5 ./nue/ 2>/dev/null | tee "$work/bench.txt" | grep -E '^Benchmark' | sed 's/^/    /' | tee -a "$out"
awk '/^Benchmark(Nue|MinHop)_/ {name=$1; sub(/-[0-9]+$/, "", name); t[name] = t[name] " " $3}
     function median(s,   v, k, i, j, x) { k = split(s, v, " ")
       for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
       return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
     END {for (name in t) if (name ~ /^BenchmarkNue_/) { f = substr(name, 14); m = "BenchmarkMinHop_" f
            if (m in t) printf "    %s: Nue / MinHop = %.2f (medians %.1f ms / %.1f ms)\n", f, median(t[name]) / median(t[m]), median(t[name]) / 1e6, median(t[m]) / 1e6 } }' "$work/bench.txt" | sort | tee -a "$out"
say ""
say "## Scale: k = 8, wall time and peak RSS of nuesm route (route, verify, metrics, write)"
say ""
say "| fabric | CAs | switches | route s | wall s | peak RSS MB | avg hops | max EFI |"
say "|---|---|---|---|---|---|---|---|"
for spec in "clos3 --radix 36:3-level Clos radix 36" "dragonfly --p 8 --a 16 --h 8:Dragonfly p=8 a=16 h=8"; do
  args=${spec%%:*}; name=${spec#*:}
  # shellcheck disable=SC2086
  $nuesm gen $args -o "$work/big.topo" 2>/dev/null
  /usr/bin/time -v $nuesm route "$work/big.topo" --engine nue --vls 8 -q -o "$work/bigout" > /dev/null 2> "$work/time.txt"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; printf "%.1f", s}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$work/time.txt")
  read -r cas sws hops efi secs < <(python3 -c "import json;d=json.load(open('$work/bigout/summary.json'));print(d['terminals'],d['switches'],d['avg_hops'],d['max_efi'],d['route_seconds'])")
  say "| $name | $cas | $sws | $(printf %.1f "$secs") | $wall | $rss | $(printf %.3f "$hops") | $efi |"
done
# Hand-written reading of the figures, kept beside the script.
if [ -f bench/nue/NOTES.md ] && [ "$out" != /dev/null ]; then
  { echo; cat bench/nue/NOTES.md; } >> "$out"
fi
