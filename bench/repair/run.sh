#!/usr/bin/env bash
# bench/repair/run.sh — minimal-change repair on the k=18 fat tree (issue 17):
# a full Nue routing after a cable failed vs routing.Repair of the routing
# from before, side by side in one `go test -bench` process (five rounds,
# interleaved; ratios of the medians), for five cable and two switch
# failures, the verifier, and the repair when the cable comes back; then
# the daemon's path: repair from the verifier's State and the incremental
# verification.
# Usage: bench/repair/run.sh [OUTFILE]   (default: stdout only)
# Takes a few minutes on 2 cores; runs under nice -n 10.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-/dev/null}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rounds=${ROUNDS:-5}

say() { echo "$*" | tee -a "$out"; }
: > "$out"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
nice -n 10 go test -run '^$' -bench '^BenchmarkRepair_FatTree3_k18$' -benchtime 1x -count "$rounds" -timeout 60m ./routing/ > "$work/bench.txt"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

say "# Minimal-change repair on the k=18 fat tree"
say ""
say "$(date -u +%Y-%m-%d), $(nproc) cores, $(go version | cut -d' ' -f3), commit $(git rev-parse --short HEAD)."
say "3-level fat tree k=18: 5,832 hosts, 972 switches, 6,804 LIDs; Nue and DFSSSP at 8 VLs"
say "(the DFSSSP rows compare with a full DFSSSP routing)."
say "\`go test -bench '^BenchmarkRepair_FatTree3_k18\$' -benchtime 1x -count $rounds\` under \`nice -n 10\`;"
say "load average (1, 5, 15 min) $load0 before and $load1 after: the machine is shared,"
say "so compare the ratios (measured side by side, rounds interleaved), not the absolute times."
say "wall and CPU: medians over the $rounds rounds; CPU is the process's user+system time per operation."
say ""
say "| operation | wall ms | CPU ms | wall / full routing | CPU / full routing | entries changed | entries that used the failure | changed / used | mean hops |"
say "|---|---|---|---|---|---|---|---|---|"
awk '
  function row(what, c, w) { printf "| %s | %.1f | %.1f %% | %.1f | %.1f %% |\n", what, c, 100 * c / fc, w, 100 * w / fw }
  function median(s,   v, k, i, j, x) { k = split(s, v, " ")
    for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
  /^BenchmarkRepair_FatTree3_k18\// {
    name = $1; sub(/^BenchmarkRepair_FatTree3_k18\//, "", name); sub(/-[0-9]+$/, "", name)
    if (!(name in seen)) { seen[name] = 1; order[++n] = name }
    wall[name] = wall[name] " " $3 / 1e6
    for (i = 5; i < NF; i += 2) m[name, $(i + 1)] = $i
    cpu[name] = cpu[name] " " m[name, "cpu-ms/op"] }
  END {
    for (k = 1; k <= n; k++) { x = order[k]; w = median(wall[x]); c = median(cpu[x])
      if (x ~ /dfsssp/) { fw = median(wall["full-dfsssp"]); fc = median(cpu["full-dfsssp"]) } else { fw = median(wall["full-nue"]); fc = median(cpu["full-nue"]) }
      ch = m[x, "entries-changed"]; us = m[x, "entries-used"]; h = m[x, "hops-mean"]
      printf "| %s | %.0f | %.0f | %.1f %% | %.1f %% | %s | %s | %s | %s |\n", x, w, c, 100 * w / fw, 100 * c / fc,
        (ch == "" ? "" : sprintf("%d", ch)), (us == "" ? "" : sprintf("%d", us)), (us + 0 > 0 ? sprintf("%.2f", ch / us) : ""), (h == "" ? "" : sprintf("%.4f", h)) }
    fw = median(wall["full-nue"]); fc = median(cpu["full-nue"])
    rw = median(wall["repair/link-seed=1"]); vw = median(wall["verify/link-seed=1"])
    rc = median(cpu["repair/link-seed=1"]); vc = median(cpu["verify/link-seed=1"])
    printf "\nCable failure seed 1, side by side (medians; %% of a full Nue routing of the damaged fabric):\n\n"
    printf "| step | CPU ms | CPU / full routing | wall ms | wall / full routing |\n|---|---|---|---|---|\n"
    row("repair, every destination scanned (Repair)", rc, rw)
    row("full verification (cdg.Verify)", vc, vw)
    row("repair + full verification (sum)", rc + vc, rw + vw)
    if ("repair-state/link-seed=1" in cpu) {
      row("repair from the verifier State (RepairWith with State)", median(cpu["repair-state/link-seed=1"]), median(wall["repair-state/link-seed=1"]))
      row("incremental verification (cdg.State.Verify)", median(cpu["verify-incremental/link-seed=1"]), median(wall["verify-incremental/link-seed=1"]))
      row("repair from the State + incremental verification (measured together, as the daemon runs them)", median(cpu["repair+verify/link-seed=1"]), median(wall["repair+verify/link-seed=1"]))
      row("full verification keeping a State (paid once per full routing)", median(cpu["verify-state/intact"]), median(wall["verify-state/intact"]))
    }
    printf "\n"
    printf "Mean hops before the failure: %.4f. Full Nue after it: %d entries changed of %d.\n", m["full-nue", "hops-mean-before"], m["full-nue", "entries-changed"], m["full-nue", "entries-total"]
    b = "back/link-seed=1"
    if ((b, "entries-changed") in m) printf "Cable back (RepairWith, Before): %d entries changed, %d entries still differ from the routing before the failure.\n", m[b, "entries-changed"], m[b, "entries-off-original"]
    for (k = 1; k <= n; k++) { x = order[k]; if (x ~ /^repair\+verify-back\//) printf "%s (as the daemon runs it: the full routing from before repaired from its State, verified against it): %d entries changed, %d entries differ from the routing before the failure, CPU %.1f %% of a full routing.\n", x, m[x, "entries-changed"], m[x, "entries-off-original"], 100 * median(cpu[x]) / fc }
  }' "$work/bench.txt" | tee -a "$out"
say ""
say "## Where Repair applies"
say ""
say "One cable, one switch and three cables failing, seeds 1-8 each (TestRepairRandomFailures): failures repaired"
say "(the rest fall back to a full routing with ErrNoRepair), entries changed and entries that used the failure,"
say "over the repaired ones; every repaired routing passed the daemon's verifier. The same repair started from"
say "the verifier State of the routing before (RepairWith with State) gave the same tables; the last column counts"
say "the failures where the State applied (the rest, switches with CAs, are repaired by the full scan)."
say ""
say "| fabric | engine | repaired | changed / used | repaired from the State |"
say "|---|---|---|---|---|"
go test -count=1 -run '^TestRepairRandomFailures$' -v ./routing/ 2>&1 |
  awk '/^=== RUN   TestRepairRandomFailures\// { split($3, p, "/"); fab = p[2]; eng = p[3] }
       / failures repaired; / { fs = "-"; for (i = 1; i <= NF; i++) { if ($i == "of") { a = $(i - 1); b = $(i + 1) } if ($i == "changed") c = $(i - 2); if ($i == "used") u = $(i - 1); if ($i == "repaired" && $(i + 1) == "from") fs = $(i - 1) }
         printf "| %s | %s | %s of %s | %s | %s |\n", fab, eng, a, b, (u > 0 ? sprintf("%.2f", c / u) : "-"), fs }
       / does not route / { sub(/.*does not route [^:]*: /, ""); printf "| %s | %s | not routed: %s | | |\n", fab, eng, substr($0, 1, 90) }' | tee -a "$out"
say ""
say "Raw output:"
say ""
grep -E '^Benchmark' "$work/bench.txt" | sed 's/^/    /' | tee -a "$out"
if [ -f bench/repair/NOTES.md ] && [ "$out" != /dev/null ]; then
  { echo; cat bench/repair/NOTES.md; } >> "$out"
fi
