#!/usr/bin/env bash
# bench/opensm/run.sh — nuesm against the real OpenSM, side by side, on one
# or more fabric files (ibnetdiscover format, as `nuesm gen` writes them).
#
# For every fabric and engine:
#   1. ibsim simulates the fabric (its own IBSIM_SOCKNAME; node, switch and
#      port limits raised with -N, -S, -P to fit);
#   2. `opensm --once -R <engine>` routes it through libumad2sim.so; its
#      routing time is read from its log (see osm_route_seconds below), its
#      tables from opensm-lfts.dump, its SL2VL tables from opensm-sl2vl.dump;
#   3. ibnetdiscover (through umad2sim) records the fabric as OpenSM left it
#      (same GUIDs, OpenSM's LIDs): OpenSM's tables and SLs are verified
#      against that file, so no LID translation is needed;
#   4. for multi-VL engines (nue, dfsssp) OpenSM runs again as the SM and
#      pathsl.py asks its SA for path SLs, written as a nuesm SL file;
#   5. `nuesm verify` checks OpenSM's tables (delivery, loops, CDG per VL;
#      on a cycle, again without the switch-LID entries: are the paths to
#      CA ports alone acyclic?);
#   6. `nuesm route --engine <engine>` routes the same fabric file; its
#      route_seconds (route + verify, from summary.json), engine_seconds
#      (the routing alone) and its whole process wall time are recorded,
#      and `nuesm verify` checks the files it wrote.
# Both sides run REPEAT times; the table shows the shortest times. OpenSM's
# updn, when it finds no root, runs again with nuesm's (see `centre`).
# One markdown table per fabric goes to stdout.
#
# Usage: bench/opensm/run.sh [-w WORKDIR] [-e "minhop updn dfsssp nue"] [-r] FABRIC...
#   -r: run nothing, print the tables again from WORKDIR (an earlier -w).
# Environment: VLS (8), REPEAT (runs of each side per engine, the
#   shortest routing time is shown, 3), OSM_TIMEOUT (seconds per OpenSM run, 3600),
#   SL_MAX_QUERIES (largest number of SA queries made for one run, 3000000),
#   PAIR_CHECK_MAX (dfsssp: query every CA-to-LID pair up to this many, 200000),
#   NUESM (bin/nuesm), KEEP (1 = keep the work directory; default only
#   when -w is given).
# Needs: opensm, ibsim, libumad2sim.so, ibnetdiscover, sminfo, python3,
#   GNU time (/usr/bin/time), and bin/nuesm (make build).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
nuesm=${NUESM:-$repo/bin/nuesm}
vls=${VLS:-8}
osm_timeout=${OSM_TIMEOUT:-3600}
repeat=${REPEAT:-3}
sl_max=${SL_MAX_QUERIES:-3000000}
pair_check_max=${PAIR_CHECK_MAX:-200000}
engines="minhop updn dfsssp nue"
work=""
keep=${KEEP:-}

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
report_only=""
while getopts "w:e:rh" opt; do
  case $opt in
    r) report_only=1; keep=1 ;;
    w) work=$OPTARG; keep=${keep:-1} ;;
    e) engines=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

die() { echo "run.sh: $*" >&2; exit 1; }
umad2sim=${NUESM_UMAD2SIM:-}
if [ -z "$umad2sim" ]; then
  for p in /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so /usr/lib/aarch64-linux-gnu/umad2sim/libumad2sim.so \
           /usr/lib64/umad2sim/libumad2sim.so /usr/lib/umad2sim/libumad2sim.so; do
    [ -f "$p" ] && { umad2sim=$p; break; }
  done
fi
[ -n "$umad2sim" ] || die "libumad2sim.so not found (Debian: libumad2sim0 / ibsim-utils), or set NUESM_UMAD2SIM"
PATH=$PATH:/usr/sbin:/sbin
for t in opensm ibsim ibnetdiscover sminfo python3; do
  command -v "$t" >/dev/null || die "$t not found (Debian packages: opensm ibsim-utils infiniband-diags python3)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian package: time)"
[ -x "$nuesm" ] || die "$nuesm not found: run make build"

[ -z "$report_only" ] || [ -n "$work" ] || die "-r needs -w WORKDIR"
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/nuesm-opensm.XXXXXX"); fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

# Processes this script started, stopped on exit and on Ctrl-C.
sim_pid="" osm_pid="" seq_no=0
stop_pid() {   # stop_pid PID: TERM, up to 5 s, then KILL
  local pid=$1
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$osm_pid"; osm_pid=""
  stop_pid "$sim_pid"; sim_pid=""
  if [ -z "$keep" ] || [ "$keep" = 0 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
# jget KEY FILE: a number or string from summary.json (pretty-printed)
jget() { sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$2" | head -1; }
# kv KEY FILE: value of KEY=VALUE
kv() { sed -n "s/^$1=//p" "$2" | tail -1; }

# ibsim limits for a net file: nodes, switches, ports, with head room.
sim_args() {
  awk '/^Switch[ \t]/ { s++; p += $2 + 1 } /^(Ca|Hca|Rt)[ \t]/ { c++; p += $2 }
       END { printf "-N %d -S %d -P %d", s + c + 16, s + 16, p + 128 }' "$1"
}

start_sim() {   # start_sim NETFILE DIR
  local args
  args=$(sim_args "$1")
  # shellcheck disable=SC2086 # args is a list of options
  ibsim -s -n $args "$1" > "$2/ibsim.log" 2>&1 &
  sim_pid=$!
  for _ in $(seq 600); do
    grep -q "@$IBSIM_SOCKNAME:ctl" /proc/net/unix && return 0
    kill -0 "$sim_pid" 2>/dev/null || { sim_pid=""; tail -5 "$2/ibsim.log" >&2; die "ibsim failed on $1"; }
    sleep 0.1
  done
  die "ibsim did not come up within 60 s on $1"
}

# OpenSM's configuration: errors, info and the routing dumps (0x43); the
# two files that log the routing markers at VERBOSE; the LMC the fabric's
# end ports have in its dump (osm_lmc), so that both sides route the same
# destination LIDs (OpenSM's default is LMC 0).
write_osm_conf() {   # write_osm_conf CONF LOG DUMPDIR
  local permod
  permod=$(dirname "$1")/permod.conf
  printf '%s\n' "osm_ucast_mgr.c 0x07" "osm_state_mgr.c 0x07" > "$permod"
  cat > "$1" <<EOF
log_flags 0x43
per_module_logging_file $permod
log_file $2
accum_log_file FALSE
force_log_flush TRUE
dump_files_dir $3
lmc ${osm_lmc:-0}
EOF
}

# osm_times LOG -> key=value lines:
#   osm_route_seconds: from "building routing with '<engine>'" to "<used>
#     tables configured on all switches" — the engine's LID matrices, its
#     tables and SLs, and queueing the LFT blocks to the switches; discovery,
#     LID assignment, waiting for the switches' answers, SL2VL and the dumps
#     are outside;
#   osm_attempt_seconds: the requested engine's own attempt, up to the
#     next engine OpenSM falls back to (equals the above without fallback);
#   osm_ucast_seconds: "STARTING SWITCH TABLE CONFIG" to "SWITCHES
#     CONFIGURED FOR UNICAST" (the above plus the wait for the LFT MADs).
osm_times() {
  awk '
    function ts(   t) { split($3, t, ":"); return t[1] * 3600 + t[2] * 60 + t[3] + $4 / 1e6 }
    function dt(a, b) { if (a == "" || b == "") return "NA"; if (b < a) b += 86400; return sprintf("%.6f", b - a) }
    /^[A-Z][a-z][a-z] +[0-9]+ [0-9:]+ [0-9]+ \[/ { t = ts() }
    /building routing with/ && r0 != "" && a1 == "" { a1 = t }
    /building routing with/ && r0 == "" { r0 = t; first = $0; sub(/.*with ./, "", first); sub(/. routing algorithm.*/, "", first) }
    /tables configured on all switches/ && r1 == "" { r1 = t; used = $0; sub(/.*-> [a-z_]*: /, "", used); sub(/ tables configured.*/, "", used) }
    /No routing engine able/ && nf == "" { nf = t }
    /fallback to escape paths/ { escape++ }
    /no root nodes were found/ { noroot = 1 }
    /STARTING SWITCH TABLE CONFIG/ && u0 == "" { u0 = t }
    /SWITCHES CONFIGURED FOR UNICAST/ && u1 == "" { u1 = t }
    /SUBNET UP/ { up = 1 }
    /Virtual Lanes needed:/ { needed = $NF }
    /Virtual Lanes available:/ { avail = $NF }
    /No routing engine able/ { noeng = 1 }
    END {
      print "osm_route_seconds=" dt(r0, r1)
      # the requested engine alone: until it succeeded, or until OpenSM
      # moved on to the next engine (or gave up)
      print "osm_attempt_seconds=" dt(r0, a1 != "" ? a1 : (r1 != "" ? r1 : nf))
      print "osm_ucast_seconds=" dt(u0, u1)
      print "osm_engine_tried=" first
      print "osm_engine_used=" (used == "" ? "none" : used)
      print "osm_subnet_up=" (up ? "yes" : "no")
      if (needed != "") print "osm_vls_needed=" needed
      if (avail != "") print "osm_vls_available=" avail
      if (noeng) print "osm_no_engine=yes"
      if (escape) print "osm_nue_escape_fallbacks=" escape
      if (noroot) print "osm_updn_no_root=yes"
    }' "$1"
}

# dfsssp_bases LOG: "SL BASE" per SL 0..available-1. OpenSM's dfsssp gives
# a path the first VL of its layer plus a random offset within the VLs the
# layer was spread over (get_dfsssp_sl); mapping each SL to its layer's
# first VL makes every random choice verify as one: a layer's CDG is
# acyclic, so any split of it is. The split is recomputed from "Paths per
# VL (before balancing)" (one spare VL at a time to the layer with the most
# paths per VL, the first on ties, as OpenSM does) and checked against the
# "(after balancing)" figures OpenSM logs; a mismatch prints nothing.
dfsssp_bases() {
  awk '
    /Virtual Lanes available:/ { A = $NF }
    /Virtual Lanes needed:/ { N = $NF }
    /Paths per VL \(before balancing\)/ { sec = 1; next }
    /paths per VL \(after balancing\)/ { sec = 2; next }
    / lane: / { v = $(NF - 2); sub(/\./, "", v); if (sec == 1) w[v] = $NF; else if (sec == 2) after[v] = $NF; next }
    { sec = 0 }
    END {
      if (A == "" || N == "" || N < 1 || N > A) exit
      for (L = 0; L < N; L++) split_[L] = 1
      for (s = A - N; s > 0; s--) {
        best = 0; bw = 0; bs = 1
        for (L = 0; L < N; L++) if (w[L] * bs > bw * split_[L]) { best = L; bw = w[L]; bs = split_[L] }
        split_[best]++
      }
      v = 0
      for (L = 0; L < N; L++) for (k = 0; k < split_[L]; k++) {
        base[v] = v - k
        if ((v in after) && after[v] != int(w[L] / split_[L])) exit
        v++
      }
      for (i = 0; i < v; i++) print i, base[i]
    }' "$1"
}

# lid_table TOPO: "LID S|C SWITCHGUID" per LID of a port (C: a CA port, all 2^LMC of its LIDs, and
# the switch it hangs off), from an ibnetdiscover dump.
lid_table() {
  awk '
    function guid(id) { sub(/^"[SHR]-/, "", id); sub(/".*/, "", id); return "0x" id }
    /^Switch[ \t]/ { kind = "S"; if (match($0, /port 0 lid [0-9]+/)) { split(substr($0, RSTART, RLENGTH), f, " "); print f[4], "S", guid($3) }; next }
    /^(Ca|Hca)[ \t]/ { kind = "C"; next }
    /^(Rt)[ \t]/ { kind = "R"; next }
    /^\[/ && kind == "C" && match($0, /# lid [0-9]+/) {
      split(substr($0, RSTART, RLENGTH), f, " ")
      lmc = 0
      if (match($0, /# lid [0-9]+ lmc [0-9]+/)) { split(substr($0, RSTART, RLENGTH), l, " "); lmc = l[5] }
      peer = $0; sub(/^[^"]*/, "", peer)
      # every LID of the port: base LID + 0 .. 2^LMC - 1
      if (peer ~ /^"S-/) for (i = 0; i < 2 ^ lmc; i++) print f[3] + i, "C", guid(peer)
    }' "$1"
}

# centre TOPO: the node GUID of the root nuesm's updn picks in each
# component of the switch graph of an ibnetdiscover dump: the switch of
# lowest eccentricity, ties to the lowest node GUID (routing/updn.go). One
# GUID a line, for OpenSM's root_guid_file (-a) and nuesm's --root.
centre() {
  awk '
    function guid(id) { sub(/^"[SHR]-/, "", id); sub(/".*/, "", id); return tolower(id) }
    BEGIN { n = 0 }
    /^Switch[ \t]/ { cur = guid($3); if (!(cur in idx)) { idx[cur] = n; name[n++] = cur }; next }
    /^(Ca|Hca|Rt)[ \t]/ { cur = ""; next }
    cur != "" && /^\[/ {
      peer = $0; sub(/^[^"]*/, "", peer)
      if (peer ~ /^"S-/) { p = guid(peer); adj[cur] = adj[cur] " " p }
    }
    END {
      for (i = 0; i < n; i++) { k = split(adj[name[i]], a, " "); deg[i] = 0
        for (j = 1; j <= k; j++) if (a[j] in idx) nb[i, deg[i]++] = idx[a[j]] }
      for (s = 0; s < n; s++) {
        for (i = 0; i < n; i++) d[i] = -1
        d[s] = 0; q[0] = s; h = 0; tl = 1; e = 0
        while (h < tl) { u = q[h++]; if (d[u] > e) e = d[u]
          for (j = 0; j < deg[u]; j++) { v = nb[u, j]; if (d[v] < 0) { d[v] = d[u] + 1; q[tl++] = v } } }
        # the component: its lowest-indexed switch names it
        c = s; for (i = 0; i < n; i++) if (d[i] >= 0) { c = i; break }
        if (!(c in best) || e < best[c] || (e == best[c] && ("0x" name[s]) < ("0x" root[c]))) { best[c] = e; root[c] = name[s] }
      }
      for (c in root) print "0x" root[c]
    }' "$1"
}

# run_opensm_sa RUN ENGINE_ARGS... : OpenSM as the SM (no re-sweeps), until
# SUBNET UP; sets osm_pid.
start_osm_sm() {
  local run=$1; shift
  mkdir -p "$run/sa/dump"
  write_osm_conf "$run/sa/opensm.conf" "$run/sa/opensm.log" "$run/sa/dump"
  (cd "$run/sa" && exec env LD_PRELOAD="$umad2sim" OSM_CACHE_DIR="$run/cache" OSM_TMP_DIR="$run/cache" \
      opensm -F "$run/sa/opensm.conf" -s 0 "$@" > "$run/sa/opensm.out" 2>&1) &
  osm_pid=$!
  local t0
  t0=$(now)
  until grep -q "SUBNET UP" "$run/sa/opensm.log" 2>/dev/null; do
    kill -0 "$osm_pid" 2>/dev/null || return 1
    awk -v a="$(now)" -v b="$t0" -v m="$osm_timeout" 'BEGIN { exit !(a - b > m) }' && return 1
    sleep 0.2
  done
  # the dumps come right after SUBNET UP; the LFT dump is complete once
  # the subnet list (written after it) stops growing
  local a b
  for _ in $(seq 600); do
    a=$(stat -c %s "$run/sa/dump/opensm-subnet.lst" 2>/dev/null || echo 0)
    sleep 0.3
    b=$(stat -c %s "$run/sa/dump/opensm-subnet.lst" 2>/dev/null || echo 0)
    [ "$a" = "$b" ] && [ "$b" != 0 ] && return 0
  done
  return 1
}

# write_sl MODE RUN -> RUN/opensm.sl from the SA answers; MODE is dest
# (nue: SL by destination) or src (dfsssp: by source switch, layer bases).
# Sets sl_note.
sl_note=""
query_sls() {   # query_sls MODE RUN LIDTABLE SMLID
  local mode=$1 run=$2 lids=$3 smlid=$4
  if [ "$mode" = dest ]; then
    # two sources per destination (the first and the last CA port) to
    # check that the SL depends on the destination alone
    awk '$2 == "C" { c[n++] = $1 } { all[m++] = $1 }
         END { for (i = 0; i < m; i++) { d = all[i]
                 s = (c[0] != d) ? c[0] : c[1]; if (s != "") print s, d
                 s = (c[n-1] != d) ? c[n-1] : c[n-2]; if (s != "" && n > 1) print s, d } }' "$lids" > "$run/pairs.txt"
  elif [ "$(awk '$2 == "C" { c++ } { n++ } END { print c * n }' "$lids")" -le "$pair_check_max" ]; then
    # every CA port to every LID: shows that the layer (the SL mapped to
    # its layer's first VL) depends on the source switch only
    awk '$2 == "C" { c[n++] = $1 } { all[m++] = $1 }
         END { for (j = 0; j < n; j++) for (i = 0; i < m; i++) if (c[j] != all[i]) print c[j], all[i] }' "$lids" > "$run/pairs.txt"
  else
    # one source per (source switch, destination): the first CA port of
    # each switch with CAs (the second for the first one itself)
    awk '$2 == "C" { if (!($3 in first)) { first[$3] = $1; sws[ns++] = $3 } else if (!($3 in second)) second[$3] = $1 }
         { all[m++] = $1 }
         END { for (j = 0; j < ns; j++) { sw = sws[j]
                 for (i = 0; i < m; i++) { d = all[i]; s = (first[sw] != d) ? first[sw] : second[sw]
                   if (s != "") print s, d } } }' "$lids" > "$run/pairs.txt"
  fi
  local n
  n=$(wc -l < "$run/pairs.txt")
  if [ "$n" -gt "$sl_max" ]; then
    sl_note="no SA query ($n > SL_MAX_QUERIES)"
    return 1
  fi
  local t0
  t0=$(now)
  env LD_PRELOAD="$umad2sim" python3 "$here/pathsl.py" --sm-lid "$smlid" < "$run/pairs.txt" \
    > "$run/pathsl.txt" 2> "$run/pathsl.err" || { sl_note="SA queries failed"; return 1; }
  echo "sa_queries=$n" >> "$run/kv"
  echo "sa_query_seconds=$(since "$t0")" >> "$run/kv"
  local bad
  bad=$(awk '$3 == "-"' "$run/pathsl.txt" | wc -l)
  echo "sa_failed=$bad" >> "$run/kv"
  [ "$bad" = 0 ] || { sl_note="$bad SA queries unanswered"; return 1; }
  return 0
}

write_sl_file() {   # write_sl_file MODE RUN LIDTABLE
  local mode=$1 run=$2 lids=$3 maxlid
  maxlid=$(awk '$1 > m { m = $1 } END { print m + 0 }' "$lids")
  if [ "$mode" = dest ]; then
    awk -v vls="$vls" -v maxlid="$maxlid" '
      { if (($2 in sl) && sl[$2] != $3) bad++; sl[$2] = $3 }
      END {
        if (bad) { print "inconsistent " bad > "/dev/stderr"; exit 1 }
        print "nuesm-sl 1"; print "vls " vls; print "maxlid " maxlid
        print "# SLs of OpenSM nue, from SA PathRecords (two sources per destination)"
        for (d = 1; d <= maxlid; d++) if ((d in sl) && sl[d] != 0) print "dest " d " " sl[d]
        print "end"
      }' "$run/pathsl.txt" > "$run/opensm.sl"
  else
    awk -v vls="$vls" -v maxlid="$maxlid" '
      FILENAME == ARGV[1] { base[$1] = $2; next }
      FILENAME == ARGV[2] { if ($2 == "C") sw[$1] = $3; next }
      { s = sw[$1]; if (!($3 in base)) { print "SL " $3 " beyond the layers" > "/dev/stderr"; exit 1 }
        b = base[$3]; if (((s, $2) in sl) && sl[s, $2] != b) bad++
        sl[s, $2] = b; if (!(s in seen)) { seen[s] = 1; order[n++] = s } }
      END {
        if (bad) { print "layer differs between sources of one switch for " bad " pairs" > "/dev/stderr"; exit 1 }
        print "nuesm-sl 1"; print "vls " vls; print "maxlid " maxlid
        print "# SLs of OpenSM dfsssp from SA PathRecords, one source per (source switch, destination),"
        print "# each mapped to the first VL of its layer"
        print "bysrc"
        for (j = 0; j < n; j++) for (d = 1; d <= maxlid; d++) if (((order[j], d) in sl) && sl[order[j], d] != 0)
          print "src " order[j] " " d " " sl[order[j], d]
        print "end"
      }' "$run/bases.txt" "$lids" "$run/pathsl.txt" > "$run/opensm.sl"
  fi
}

# osm_once RUN OPENSM_ARGS... : `opensm --once` on the running ibsim, its
# times from the log -> RUN/kv
osm_once() {
  local run=$1 t0 rc=0; shift
  write_osm_conf "$run/opensm.conf" "$run/opensm.log" "$run/dump"
  t0=$(now)
  (cd "$run" && exec timeout -k 10 "$osm_timeout" env LD_PRELOAD="$umad2sim" OSM_CACHE_DIR="$run/cache" OSM_TMP_DIR="$run/cache" \
      opensm -F "$run/opensm.conf" -o "$@" > "$run/opensm.out" 2>&1) &
  osm_pid=$!
  # a failed engine with no fallback makes `opensm -o` sweep forever
  while kill -0 "$osm_pid" 2>/dev/null; do
    if grep -q "No routing engine able" "$run/opensm.log" 2>/dev/null; then stop_pid "$osm_pid"; break; fi
    sleep 0.2
  done
  wait "$osm_pid" 2>/dev/null || rc=$?
  osm_pid=""
  { echo "osm_exit=$rc"; echo "osm_wall_seconds=$(since "$t0")"; osm_times "$run/opensm.log"; } >> "$run/kv"
}

# run_opensm FABRIC NAME ENGINE -> RUN/kv
run_opensm() {
  local fabric=$1 name=$2 eng=$3 run=$work/$2/$3/opensm
  mkdir -p "$run/dump" "$run/cache"
  : > "$run/kv"
  seq_no=$((seq_no + 1))
  export IBSIM_SOCKNAME="nuesm-osm$$-$seq_no"
  local -a args=(-R "$eng")
  case $eng in
    nue) args+=(--nue_max_num_vls "$vls" -Q) ;;
    dfsssp | lash) args+=(-Q) ;;
  esac
  start_sim "$fabric" "$run"
  osm_once "$run" "${args[@]}"
  if [ "$eng" = updn ] && [ "$(kv osm_updn_no_root "$run/kv")" = yes ]; then
    # OpenSM guesses updn roots from hop histograms, which finds none on
    # tori and random fabrics (and falls back to minhop). Run it again on a
    # fresh ibsim with the root nuesm picks (centre), given as its
    # root_guid_file; run_ours passes the same root to nuesm.
    centre "$fabric" > "$run/roots.txt"
    mv "$run/opensm.log" "$run/opensm-noroot.log"
    sed -i 's/^osm_/noroot_osm_/' "$run/kv"
    stop_pid "$sim_pid"; sim_pid=""
    rm -rf "$run/cache" "$run/dump"; mkdir -p "$run/cache" "$run/dump"
    seq_no=$((seq_no + 1))
    export IBSIM_SOCKNAME="nuesm-osm$$-$seq_no"
    start_sim "$fabric" "$run"
    args+=(-a "$run/roots.txt")
    osm_once "$run" "${args[@]}"
    echo "osm_updn_root=$(paste -sd, "$run/roots.txt")" >> "$run/kv"
  fi
  # the same again (REPEAT runs in all, same ibsim, same LIDs): the
  # table shows the shortest routing time, the kv file keeps every one
  local r rt="" at=""
  rt=$(kv osm_route_seconds "$run/kv") at=$(kv osm_attempt_seconds "$run/kv")
  for ((r = 2; r <= repeat; r++)); do
    mv "$run/opensm.log" "$run/opensm-run$((r - 1)).log"
    osm_once "$run" "${args[@]}"
    rt="$rt $(kv osm_route_seconds "$run/kv")" at="$at $(kv osm_attempt_seconds "$run/kv")"
  done
  { echo "osm_route_runs=$rt"; echo "osm_attempt_runs=$at"
    echo "osm_route_min=$(minof "$rt")"; echo "osm_attempt_min=$(minof "$at")"; } >> "$run/kv"

  # the fabric as OpenSM left it: its GUIDs and LIDs
  env LD_PRELOAD="$umad2sim" timeout 600 ibnetdiscover > "$run/discovered.topo" 2> "$run/ibnetdiscover.err" ||
    die "ibnetdiscover failed on the simulated $name (see $run/ibnetdiscover.err)"
  lid_table "$run/discovered.topo" > "$run/lids.txt"

  local tables=$run/dump/opensm-lfts.dump sl2vl=$run/dump/opensm-sl2vl.dump mode="" slargs=()
  case $eng in nue) mode=dest ;; dfsssp) mode=src ;; esac
  sl_note="SL 0 (one VL)"
  if [ -n "$mode" ] && [ "$(kv osm_engine_used "$run/kv")" = "$eng" ]; then
    sl_note=""
    if [ "$mode" = src ]; then
      dfsssp_bases "$run/opensm.log" > "$run/bases.txt"
      [ -s "$run/bases.txt" ] || sl_note="layers not recognised in the log"
    fi
    if [ -z "$sl_note" ]; then
      if start_osm_sm "$run" "${args[@]}"; then
        local smlid
        smlid=$(env LD_PRELOAD="$umad2sim" sminfo 2>/dev/null | sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p')
        [ -n "$smlid" ] || smlid=$(awk '$2 == "S" { print $1; exit }' "$run/lids.txt")
        if query_sls "$mode" "$run" "$run/lids.txt" "$smlid"; then
          if cmp -s "$run/dump/opensm-lfts.dump" "$run/sa/dump/opensm-lfts.dump"; then
            echo "sa_run_same_lfts=yes" >> "$run/kv"
          else
            # verify the tables the SLs belong to
            echo "sa_run_same_lfts=no" >> "$run/kv"
            tables=$run/sa/dump/opensm-lfts.dump sl2vl=$run/sa/dump/opensm-sl2vl.dump
          fi
          if write_sl_file "$mode" "$run" "$run/lids.txt" 2> "$run/sl.err"; then
            slargs=(--sl "$run/opensm.sl")
            case $mode:$(kv sa_queries "$run/kv") in
              dest:*) sl_note="SA, 2 sources per destination" ;;
              *) if [ "$(awk '$2 == "C"' "$run/lids.txt" | wc -l)" -gt "$(awk '{ print $1 }' "$run/pairs.txt" | sort -u | wc -l)" ]; then
                   sl_note="SA, 1 source per switch, layer VLs"
                 else
                   sl_note="SA, all CA pairs, layer VLs"
                 fi ;;
            esac
          else
            sl_note="SL file: $(head -1 "$run/sl.err")"
          fi
        fi
      else
        sl_note="second OpenSM run (SA) did not come up"
      fi
      stop_pid "$osm_pid"; osm_pid=""
    fi
  fi
  stop_pid "$sim_pid"; sim_pid=""
  echo "sl_source=$sl_note" >> "$run/kv"

  [ -s "$tables" ] || { echo "verify=no tables" >> "$run/kv"; return 0; }
  local sl2vlargs=()
  [ -s "$sl2vl" ] && sl2vlargs=(--sl2vl "$sl2vl")
  local vrc=0
  "$nuesm" verify "$run/discovered.topo" "$tables" "${slargs[@]}" "${sl2vlargs[@]}" --vls "$vls" \
    > "$run/verify.txt" 2>&1 || vrc=$?
  {
    echo "verify_exit=$vrc"
    sed -n 's/^verdict: *\([A-Z]*\).*/verify=\1/p; s/^VLs: *\([0-9]*\) used.*/verify_vls=\1/p
            s/^hops: .*avg \([0-9.]*\),.*/verify_avg_hops=\1/p; s/^EFI: *max \([0-9]*\),.*/verify_max_efi=\1/p
            s/^deadlock: *\(.*\)/verify_deadlock=\1/p
            s/^pairs: *\([0-9]*\) delivered of \([0-9]*\) connected.*/verify_pairs=\1\/\2/p' "$run/verify.txt"
  } >> "$run/kv"
  if [ "$vrc" != 0 ]; then
    # the same without the switches' own traffic (SMPs use directed routes
    # in practice): does every CA pair get through?
    "$nuesm" verify "$run/discovered.topo" "$tables" "${slargs[@]}" "${sl2vlargs[@]}" --vls "$vls" \
      --switch-delivery=false > "$run/verify-ca.txt" 2>&1 || true
    sed -n 's/^verdict: *\([A-Z]*\).*/verify_ca=\1/p
            s/^pairs: *\([0-9]*\) delivered of \([0-9]*\) connected.*/verify_ca_pairs=\1\/\2/p
            s/^hops: .*avg \([0-9.]*\),.*/verify_ca_avg_hops=\1/p; s/^EFI: *max \([0-9]*\),.*/verify_ca_max_efi=\1/p' "$run/verify-ca.txt" >> "$run/kv"
    if grep -q '^deadlock: *cycle' "$run/verify.txt"; then
      # is the cycle among the paths to CA ports? The same tables without
      # the entries for switch LIDs (paths to switches' port 0: SMA/GMP
      # traffic; OpenSM's SA answers SL 0 for them with nue), from CA
      # ports only: the deadlock line then covers CA-to-CA paths alone
      # (the dropped pairs show as dead ends).
      grep -v '^0x[0-9a-fA-F]* [0-9]* # Switch portguid' "$tables" > "$run/lfts-ca-dests.dump"
      "$nuesm" verify "$run/discovered.topo" "$run/lfts-ca-dests.dump" "${slargs[@]}" "${sl2vlargs[@]}" --vls "$vls" \
        --switch-delivery=false > "$run/verify-ca-dests.txt" 2>&1 || true
      sed -n 's/^deadlock: *none.*/verify_ca_dests=acyclic/p; s/^deadlock: *cycle.*/verify_ca_dests=cycle/p' \
        "$run/verify-ca-dests.txt" >> "$run/kv"
      rm -f "$run/lfts-ca-dests.dump"
    fi
  fi
}

# run_ours FABRIC NAME ENGINE -> RUN/kv
run_ours() {
  local fabric=$1 name=$2 eng=$3 run=$work/$2/$3/nuesm rc=0
  mkdir -p "$run"
  : > "$run/kv"
  local rootargs=() roots=$work/$2/$3/opensm/roots.txt
  # the root OpenSM's updn was given (see run_opensm): nuesm's own choice,
  # passed explicitly so that both provably start from the same switch
  if [ -s "$roots" ] && [ "$(wc -l < "$roots")" = 1 ]; then rootargs=(--root "$(cat "$roots")"); fi
  local r t0 wall rss walls="" rts="" ets=""
  for ((r = 1; r <= repeat; r++)); do
    rc=0
    rm -rf "$run/out"
    t0=$(now)
    /usr/bin/time -f "%e %M" -o "$run/time.txt" "$nuesm" route "$fabric" --engine "$eng" --vls "$vls" "${rootargs[@]}" -q -o "$run/out" \
      > "$run/route.txt" 2> "$run/route.err" || rc=$?
    wall=$(since "$t0")   # /usr/bin/time's %e has 10 ms steps
    read -r _ rss < <(tail -1 "$run/time.txt")
    walls="$walls $wall"
    [ "$rc" != 0 ] || rts="$rts $(jget route_seconds "$run/out/summary.json")"
    [ "$rc" != 0 ] || ets="$ets $(jget engine_seconds "$run/out/summary.json")"
  done
  { echo "route_exit=$rc"; echo "wall_runs=$walls"; echo "wall_seconds=$(minof "$walls")"; echo "maxrss_kb=$rss"; } >> "$run/kv"
  if [ "$rc" = 0 ] && [ -s "$run/out/summary.json" ]; then
    local s=$run/out/summary.json
    {
      echo "route_runs=$rts"; echo "route_seconds=$(minof "$rts")"; echo "vls=$(jget vls "$s")"
      echo "engine_runs=$ets"; echo "engine_seconds=$(minof "$ets")"
      echo "avg_hops=$(jget avg_hops "$s")"; echo "max_efi=$(jget max_efi "$s")"
      echo "verified=$(jget verified "$s")"; echo "engine_used=$(jget engine "$s")"
    } >> "$run/kv"
    # the tables as written, read back by `nuesm verify` like OpenSM's
    # (the route command verified them in memory before writing)
    local o=$run/out vrc=0
    # (OpenSM's LFT dump with the SL and SL2VL files nuesm route writes)
    "$nuesm" verify "$fabric" "$o/opensm-lfts.dump" --sl "$o/nuesm.sl" --sl2vl "$o/nuesm.sl2vl" --vls "$vls" \
      > "$run/verify.txt" 2>&1 || vrc=$?
    { echo "verify_exit=$vrc"; sed -n 's/^verdict: *\([A-Z]*\).*/verify=\1/p' "$run/verify.txt"; } >> "$run/kv"
  else
    local why
    why=$(grep -m1 -o 'dependency cycle of [0-9]* channels' "$run/route.err" | sed 's/dependency/CDG/' || true)
    [ -n "$why" ] || why=$(grep -m1 -o 'needed [0-9]* VLs, limit is [0-9]*' "$run/route.err" || true)
    [ -n "$why" ] || why=$(grep -v '^ *$' "$run/route.err" | tail -1 | cut -c1-100)
    echo "error=$why" >> "$run/kv"
  fi
}

# minof "X Y ...": the smallest number of a blank-separated list ("NA"
# ignored; "" when none)
minof() { echo "$1" | tr ' ' '\n' | awk '$1 != "" && $1 != "NA" && (m == "" || $1 + 0 < m + 0) { m = $1 } END { print m }'; }
dash() { if [ -n "$1" ]; then printf '%s' "$1"; else printf '–'; fi; }
fmt() { awk -v x="$1" -v f="$2" 'BEGIN { if (x == "" || x == "NA") print "–"; else printf f, x }'; }
# secs X: seconds with three significant digits or so
secs() { awk -v x="$1" 'BEGIN { if (x == "" || x == "NA") print "–"; else if (x < 0.01) printf "%.4f", x; else if (x < 1) printf "%.3f", x; else printf "%.2f", x }'; }
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "NA" || b + 0 <= 0) { print "–"; exit }
    r = a / b; if (r < 1) printf "%.2f", r; else if (r < 100) printf "%.1f", r; else printf "%.0f", r }'
}

table() {   # table FABRIC NAME
  local fabric=$1 name=$2 info
  info=$("$nuesm" info "$fabric" 2>/dev/null | sed -n 's/^nodes *//p')
  echo "### $name ($info)"
  echo ""
  echo "| engine | OpenSM s | nuesm s | ratio | nuesm engine s | engine ratio | nuesm wall s | VLs (OpenSM / nuesm) | avg hops (OpenSM / nuesm) | max EFI (OpenSM / nuesm) | verified OpenSM | verified nuesm | OpenSM SLs, notes |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local eng o n
  for eng in $engines; do
    o=$work/$name/$eng/opensm/kv n=$work/$name/$eng/nuesm/kv
    local oeng ov ovl ohops oefi overdict nv onote ot otxt nt ntxt et etxt
    oeng=$(kv osm_engine_used "$o")
    ov=$(kv verify "$o")
    case $ov in
      PASS) overdict="PASS" ;;
      FAIL) overdict="FAIL: $(kv verify_deadlock "$o" | sed 's/:$//'), $(kv verify_pairs "$o") pairs delivered"
            case $(kv verify_ca "$o") in
              PASS) overdict="$overdict; from CAs only: PASS" ;;
              FAIL) overdict="$overdict; from CAs only: $(kv verify_ca_pairs "$o")" ;;
            esac ;;
      *) overdict="${ov:-–}" ;;
    esac
    case $(kv verify_ca_dests "$o") in
      acyclic) overdict="$overdict; paths to CA LIDs alone: CDG acyclic" ;;
      cycle) overdict="$overdict; paths to CA LIDs alone: cycle too" ;;
    esac
    # without SLs from the SA a multi-VL routing can only be checked for
    # delivery and loops (the engine that configured the switches counts)
    case "$oeng:$(kv sl_source "$o")" in
      nue:SA* | dfsssp:SA* | minhop:* | updn:*) ;;
      *) overdict="delivery only: $(kv verify_pairs "$o") delivered" ;;
    esac
    [ "$oeng" = "$eng" ] || overdict="$overdict (OpenSM fell back to $oeng: these are its tables)"
    onote=$(kv sl_source "$o")
    [ -z "$(kv osm_updn_root "$o")" ] || onote="$onote; no root found by OpenSM, given nuesm's: $(kv osm_updn_root "$o")"
    [ -z "$(kv osm_nue_escape_fallbacks "$o")" ] || onote="$onote; $(kv osm_nue_escape_fallbacks "$o") escape-path fallbacks"
    # OpenSM's time: the routing when the requested engine configured the
    # switches, else its own attempt until OpenSM moved on; a ratio only
    # when both sides produced tables with the requested engine
    ot=$(kv osm_route_min "$o") otxt=$(secs "$(kv osm_route_min "$o")")
    if [ "$oeng" != "$eng" ]; then ot=""; otxt="$(secs "$(kv osm_attempt_min "$o")") (failed)"; fi
    nt=$(kv route_seconds "$n") ntxt=$(secs "$(kv route_seconds "$n")")
    et=$(kv engine_seconds "$n") etxt=$(secs "$(kv engine_seconds "$n")")
    [ "$(kv route_exit "$n")" = 0 ] || { nt=""; ntxt="– (refused)"; et=""; etxt="–"; }
    ovl=$(kv verify_vls "$o")
    if [ "$eng" = dfsssp ] && [ -n "$(kv osm_vls_needed "$o")" ]; then
      ovl="$(kv osm_vls_available "$o") ($(kv osm_vls_needed "$o") layers)"
    fi
    # hops and EFI are printed once every pair counted is delivered: from
    # the CA-only run when switch-originated pairs are not
    ohops=$(kv verify_avg_hops "$o") oefi=$(kv verify_max_efi "$o")
    [ -n "$ohops" ] || ohops=$(kv verify_ca_avg_hops "$o")
    [ -n "$oefi" ] || oefi=$(kv verify_ca_max_efi "$o")
    ohops=$(fmt "$ohops" "%.3f")
    if [ "$(kv route_exit "$n")" = 0 ]; then
      # route's own check and `nuesm verify` of the written files
      nv="route: $([ "$(kv verified "$n")" = true ] && echo PASS || echo FAIL), verify: $(dash "$(kv verify "$n")")"
      [ "$nv" != "route: PASS, verify: PASS" ] || nv=PASS
    else
      nv="no tables: $(kv error "$n")"
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s |\n' \
      "$eng" "$otxt" "$ntxt" "$(ratio "$ot" "$nt")" "$etxt" "$(ratio "$ot" "$et")" "$(secs "$(kv wall_seconds "$n")")" \
      "${ovl:-–}" "$(dash "$(kv vls "$n")")" "$ohops" "$(fmt "$(kv avg_hops "$n")" "%.3f")" \
      "${oefi:-–}" "$(dash "$(kv max_efi "$n")")" "$overdict" "$nv" "$onote"
  done
  echo ""
}

for fabric in "$@"; do
  [ -f "$fabric" ] || die "no such fabric file: $fabric"
  fabric=$(cd "$(dirname "$fabric")" && pwd)/$(basename "$fabric")
  name=$(basename "$fabric"); name=${name%.*}
  # the largest LMC of a CA or router port in the dump ("# lid L lmc N")
  osm_lmc=$(awk '/^(Ca|Hca|Rt)[ \t]/ { ep = 1; next } /^[A-Za-z]/ { ep = 0 }
    ep && /^\[/ { for (i = 1; i < NF; i++) if ($i == "lmc" && $(i + 1) > m) m = $(i + 1) }
    END { print m + 0 }' "$fabric")
  for eng in $engines; do
    [ -z "$report_only" ] || break
    echo "run.sh: $name: $eng: OpenSM" >&2
    run_opensm "$fabric" "$name" "$eng"
    echo "run.sh: $name: $eng: nuesm" >&2
    run_ours "$fabric" "$name" "$eng"
  done
  table "$fabric" "$name"
done
