#!/usr/bin/env bash
# Table hash set: the SHA-256 of every table file `nuesm route` writes for a
# fixed set of fabrics (12 generated families, with and without failures,
# plus the sample dumps of ../shared/corpus) and engines (Nue at k = 1, 2,
# 4, 8 with share auto, none and switch; every other engine at 8 VLs,
# sar-nue also with spread=all).
# Refactorings that must not change tables compare two runs:
#   bench/tablehash/run.sh bin/nuesm > after.txt
#   bench/tablehash/run.sh /tmp/old/nuesm > before.txt && diff before.txt after.txt
# A refusal (engine not applicable, VL limit) is recorded as "error", so a
# change of which engines refuse shows too. summary.json holds timings and
# is left out.
set -euo pipefail
nuesm=${1:?usage: run.sh NUESM_BINARY}
nuesm=$(realpath "$nuesm")
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${CORPUS:-$root/../shared/corpus/ibnetdiscover}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gen() { # name kind flags...
	local name=$1 kind=$2
	shift 2
	"$nuesm" gen "$kind" "$@" -o "$work/$name.topo" >/dev/null 2>&1
}
gen torus4x4x4 torus --dims 4x4x4 --hosts 1
gen mesh3x5 mesh --dims 3x5 --hosts 1
gen hypercube4 hypercube --dim 4 --hosts 1
gen fattree4-3 fattree --k 4 --n 3
gen fattree4-3-fail fattree --k 4 --n 3 --fail-links 2 --fail-seed 7
gen xgft xgft --h 2 --m 4,4 --w 1,4
gen clos2-8 clos2 --radix 8
gen kautz2-3 kautz --d 2 --k 3 --hosts 1
gen dragonfly dragonfly --p 2 --a 4 --h 2
gen fbfly3x3 fbfly --dims 3x3 --hosts 2
gen slimfly5 slimfly --q 5 --hosts 1
gen random24 random --switches 24 --degree 4 --hosts 2 --seed 11
gen random24-fail random --switches 24 --degree 4 --hosts 2 --seed 11 --fail-links 3 --fail-seed 3
gen ring5 ring --switches 5 --hosts 1 --shortcut 2,4
gen novacube6 novacube --k 6 --n 2 --hosts 1
gen rsi rsi --layer1 hypercube-16 --supernodes 3 --links 1
fabrics=("$work"/*.topo)
if [ -d "$corpus" ]; then
	fabrics+=("$corpus"/*.topo)
else
	echo "warning: no corpus at $corpus" >&2
fi

run() { # fabric label route-args...
	local f=$1 label=$2
	shift 2
	local out="$work/out"
	rm -rf "$out"
	if "$nuesm" route "$f" -q -o "$out" "$@" >/dev/null 2>&1; then
		(cd "$out" && for t in opensm-lfts.dump nuesm.sl opensm-sl2vl.dump qos-policy.conf; do
			if [ -f "$t" ]; then
				printf '%s %s %s %s\n' "$(basename "$f")" "$label" "$t" "$(sha256sum <"$t" | cut -c1-16)"
			fi
		done)
	else
		printf '%s %s error\n' "$(basename "$f")" "$label"
	fi
}

for f in "${fabrics[@]}"; do
	for k in 1 2 4 8; do
		for share in auto none switch; do
			run "$f" "nue/k=$k/share=$share" --engine nue --vls "$k" --param "share=$share"
		done
	done
	run "$f" "nue/partition=locality" --engine nue --param partition=locality
	for e in dfsssp sssp updn minhop lash dor dor-nodateline ftree pora sar-nue sar-dfsssp; do
		run "$f" "$e" --engine "$e" --vls 8
	done
	run "$f" "dfsssp/vlbalance=off" --engine dfsssp --param vlbalance=off
	run "$f" "lash/sources=all" --engine lash --param sources=all
	run "$f" "sar-nue/spread=all" --engine sar-nue --vls 8 --param spread=all
done
