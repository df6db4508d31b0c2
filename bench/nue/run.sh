#!/usr/bin/env bash
# bench/nue/run.sh — the figures of the Nue issues, in one run:
#   1. avg hops and max EFI for k = 1, 2, 4, 8 on torus 8×8×8 (4 CAs per
#      switch) and the 3-level fat tree k=12, with the minimal hop count;
#   2. large tori (10³, 12³, 16³, 2 CAs per switch) at k = 8: avg hops
#      against the minimal;
#   3. Nue vs our MinHop (ratio of route times, from go test -bench in one
#      process): fat trees k=12 and k=18, Clos3 radix 36, torus 8×8×8;
#   4. scale: the radix-56 3-level Clos (47,824 LIDs) routed at k=8 and
#      verified (the go test benchmark under /usr/bin/time -v); Clos
#      radix 36 and Dragonfly p=8 a=16 h=8 at k=8 with `nuesm route`
#      (route, verify, metrics, write).
# Usage: bench/nue/run.sh [OUTFILE]   (default: stdout only)
# Needs: make build (bin/nuesm); takes about 20 minutes on 2 cores.
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
say "## Large tori, k = 8, 2 CAs per switch"
say ""
say "| torus | minimal avg hops | avg hops | × minimal | max EFI | route s |"
say "|---|---|---|---|---|---|"
for n in 10 12 16; do
  $nuesm gen torus --dims "${n}x${n}x${n}" --hosts 2 -o "$work/t.topo" 2>/dev/null
  minimal=$($nuesm info "$work/t.topo" | sed -n 's/.*, \([0-9.]*\) avg between CAs/\1/p')
  $nuesm route "$work/t.topo" --engine nue --vls 8 -q -o "$work/tout" >/dev/null
  read -r hops efi secs < <(python3 -c "import json;d=json.load(open('$work/tout/summary.json'));print(d['avg_hops'],d['max_efi'],d['route_seconds'])")
  ratio=$(awk -v a="$hops" -v b="$minimal" 'BEGIN{printf "%.3f", a/b}')
  say "| ${n}×${n}×${n} | $minimal | $(printf %.3f "$hops") | $ratio | $efi | $(printf %.2f "$secs") |"
done
rm -rf "$work/tout"
say ""
say "## Speed: Nue vs our MinHop (go test -bench, same process)"
say ""
# Five rounds of 10 routings each; the ratio of the medians (a single
# round moves by about ±10 % on this machine). MinHop uses both cores, so
# anything else running (such as the kernel writing back tables written
# earlier) slows it more than Nue: flush first and wait a moment.
sync; sleep 2
go test -run '^$' -bench '^Benchmark(Nue|MinHop)_' -benchtime 3x -count 5 ./nue/ 2>/dev/null | tee "$work/bench.txt" | grep -E '^Benchmark' | sed 's/^/    /' | tee -a "$out"
awk '/^Benchmark(Nue|MinHop)_/ {name=$1; sub(/-[0-9]+$/, "", name); t[name] = t[name] " " $3}
     function rng(s,   v, k, i, lo, hi) { k = split(s, v, " "); lo = hi = v[1]
       for (i = 2; i <= k; i++) { if (v[i] + 0 < lo + 0) lo = v[i]; if (v[i] + 0 > hi + 0) hi = v[i] }
       return sprintf("%.1f–%.1f ms", lo / 1e6, hi / 1e6) }
     function median(s,   v, k, i, j, x) { k = split(s, v, " ")
       for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
       return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
     END {for (name in t) if (name ~ /^BenchmarkNue_/) { f = substr(name, 14); m = "BenchmarkMinHop_" f
            if (m in t) printf "    %s: Nue / MinHop = %.2f (medians %.1f ms / %.1f ms; rounds %s / %s)\n", f, median(t[name]) / median(t[m]), median(t[name]) / 1e6, median(t[m]) / 1e6, rng(t[name]), rng(t[m]) } }' "$work/bench.txt" | sort | tee -a "$out"
say ""
say "## Scale: the radix-56 3-level Clos (43,904 CAs, 3,920 switches, 47,824 LIDs), k = 8, routed and verified"
say ""
say "go test -bench BenchmarkNueScale_Clos3_r56VerifyK8 (one routing with cdg.Verify) under /usr/bin/time -v; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
say ""
go test -c -o "$work/nue.test" ./nue/
/usr/bin/time -v "$work/nue.test" -test.run '^$' -test.bench '^BenchmarkNueScale_Clos3_r56VerifyK8$' -test.benchtime 1x > "$work/r56.txt" 2> "$work/r56time.txt"
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; printf "%.1f", s}' "$work/r56time.txt")
rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$work/r56time.txt")
cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.1f", u+s}' "$work/r56time.txt")
say "| wall s | CPU s (user + system) | peak RSS MB | load average after |"
say "|---|---|---|---|"
say "| $wall | $cpu | $rss | $(cut -d' ' -f1-3 /proc/loadavg) |"
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
