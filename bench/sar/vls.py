#!/usr/bin/env python3
"""bench/sar/vls.py — summarise `nuesm study sar` runs at several VL counts.

Usage: vls.py VLS:MIXES.CSV ...   (one argument per fabric and VL count)

Reads the per-mix CSVs the study writes (-o DIR/mixes.csv) and prints
Markdown: per fabric, placement and VL count sar-nue against plain Nue,
the bound and the best other engine; the means over the fat-tree mix
groups; every engine's mean effective EFI; why engines gave no tables.
Gains are (engine − sar-nue) / engine per mix, averaged over the mixes,
as the study's own reports compute them.
"""
import collections
import csv
import sys

REF, PLAIN = "sar-nue", "nue"
SLURM = ("tree", "linear")


def load(args):
    """mixes[(fabric, vls, alloc, seed)] = {engine: row}; engine order."""
    mixes, engines = collections.OrderedDict(), []
    for arg in args:
        vls, path = arg.split(":", 1)
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                fabric = row["fabric"].removesuffix(".topo")
                key = (fabric, int(vls), row["alloc"], int(row["seed"]))
                mixes.setdefault(key, {})[row["engine"]] = row
                if row["engine"] not in engines:
                    engines.append(row["engine"])
    # Compare like with like: only the mixes measured at every VL count
    # of their fabric.
    counts = collections.defaultdict(set)
    for fabric, vls, _, _ in mixes:
        counts[fabric].add(vls)
    seen = collections.Counter((f, a, s) for f, _, a, s in mixes)
    mixes = collections.OrderedDict((k, v) for k, v in mixes.items()
                                    if seen[(k[0], k[2], k[3])] == len(counts[k[0]]))
    return mixes, engines


def eff(row):
    return int(row["effective_efi"]) if row and not row["error"] else None


def per_mix(rows):
    """The figures of one mix, or None when sar-nue or nue has no tables."""
    ref, plain = rows.get(REF), rows.get(PLAIN)
    s, n = eff(ref), eff(plain)
    if s is None or n is None:
        return None
    bound = int(ref["bound"])
    others = [eff(r) for e, r in rows.items() if not e.startswith(REF) and eff(r) is not None]
    best = min(others) if others else None
    return {
        "bound": bound, "sar": s, "nue": n, "best": best,
        "gain": (n - s) / n, "bgain": (n - bound) / n,
        "ogain": (best - s) / best if best else None,
        "atbound": s == bound, "notworse": best is None or s <= best,
        "sjob": int(ref["max_job_efi"]), "njob": int(plain["max_job_efi"]),
        "sdark": float(ref["dark_fiber_percent"]), "ndark": float(plain["dark_fiber_percent"]),
    }


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def pct(x):
    return f"{100 * x:.1f} %"


def groups(mixes):
    """figures[(fabric, vls, alloc)] = [per_mix ...] in input order."""
    out = collections.OrderedDict()
    for (fabric, vls, alloc, _), rows in mixes.items():
        out.setdefault((fabric, vls, alloc), []).append(per_mix(rows))
    return out


def table_placements(g):
    print("| fabric | placement | VLs | bound | sar-nue | nue | sar-nue at bound | sar-nue's gain over nue "
          "(bound's) | best other | gain over best other: mean (min) | sar-nue ≤ best other | "
          "worst job EFI sar-nue / nue | dark fiber % sar-nue / nue |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (fabric, vls, alloc), ms in sorted(g.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        ok = [m for m in ms if m]
        if not ok:
            print(f"| {fabric} | {alloc} | {vls} | n/a (sar-nue or nue gave no tables) |||||||||")
            continue
        og = [m["ogain"] for m in ok if m["ogain"] is not None]
        print(f"| {fabric} | {alloc} | {vls} | {mean(m['bound'] for m in ok):.1f} | "
              f"{mean(m['sar'] for m in ok):.1f} | {mean(m['nue'] for m in ok):.1f} | "
              f"{sum(m['atbound'] for m in ok)} of {len(ms)} | {pct(mean(m['gain'] for m in ok))} "
              f"({pct(mean(m['bgain'] for m in ok))}) | {mean(m['best'] for m in ok):.1f} | "
              f"{pct(mean(og))} ({pct(min(og)) if og else 'n/a'}) | "
              f"{sum(m['notworse'] for m in ok)} of {len(ms)} | "
              f"{mean(m['sjob'] for m in ok):.1f} / {mean(m['njob'] for m in ok):.1f} | "
              f"{mean(m['sdark'] for m in ok):.1f} / {mean(m['ndark'] for m in ok):.1f} |")


def table_totals(g, fabrics):
    tori = [f for f in fabrics if f.startswith("torus")]
    fat = [f for f in fabrics if f not in tori]
    complete = [f for f in fat if "fail" not in f]
    every = SLURM + ("scatter",)
    sets = [("complete fat trees, SLURM-placed", complete, SLURM),
            ("complete fat trees, all placements", complete, every),
            ("all fat trees (damaged included), all placements", fat, every),
            ("tori, all placements", tori, every)]
    print("| group | VLs | mixes | sar-nue's gain over nue | bound's gain over nue | sar-nue at bound | "
          "gain over best other | sar-nue ≤ best other |")
    print("|---|---|---|---|---|---|---|---|")
    for label, fs, allocs in sets:
        for vls in sorted({k[1] for k in g}) if fs else []:
            ms = [m for (f, v, a), xs in g.items() if f in fs and v == vls and a in allocs for m in xs]
            ok = [m for m in ms if m]
            print(f"| {label} | {vls} | {len(ms)} | {pct(mean(m['gain'] for m in ok))} | "
                  f"{pct(mean(m['bgain'] for m in ok))} | {sum(m['atbound'] for m in ok)} | "
                  f"{pct(mean(m['ogain'] for m in ok))} | {sum(m['notworse'] for m in ok)} |")


def table_engines(mixes, engines):
    print("| fabric | VLs | " + " | ".join(engines) + " |")
    print("|---|---|" + "---|" * len(engines))
    by = collections.OrderedDict()
    for (fabric, vls, _, _), rows in mixes.items():
        by.setdefault((fabric, vls), []).append(rows)
    for (fabric, vls), mixrows in sorted(by.items()):
        cells = []
        for e in engines:
            if all(e not in rows for rows in mixrows):
                cells.append("—")  # not run on this fabric
                continue
            xs = [eff(rows.get(e)) for rows in mixrows]
            good = [x for x in xs if x is not None]
            cells.append(f"{mean(good):.1f}" if len(good) == len(xs) else
                         (f"{mean(good):.1f} ({len(xs) - len(good)} n/a)" if good else "n/a"))
        print(f"| {fabric} | {vls} | " + " | ".join(cells) + " |")


def failures(mixes):
    seen = collections.OrderedDict()
    for (fabric, vls, _, _), rows in sorted(mixes.items(), key=lambda kv: kv[0][:2]):
        for e, r in rows.items():
            if r["error"]:
                msg = r["error"].split(" (cdg:")[0].split(": cdg:")[0]
                seen.setdefault((fabric, vls, e, msg[:160]), 0)
                seen[(fabric, vls, e, msg[:160])] += 1
    for (fabric, vls, e, msg), n in seen.items():
        print(f"- {fabric}, VLs {vls}, {e} ({n} mixes): {msg}")


def main():
    mixes, engines = load(sys.argv[1:])
    g = groups(mixes)
    fabrics = list(dict.fromkeys(k[0] for k in g))
    print("Per fabric, placement and VL count (means over the mixes):\n")
    table_placements(g)
    print("\nOver groups of fabrics (means over the mixes; counts of mixes):\n")
    table_totals(g, fabrics)
    print("\nEvery engine's mean effective EFI per fabric and VL count (all placements;"
          " n/a: mixes without verified tables; —: not run there):\n")
    table_engines(mixes, engines)
    print("\nEngines without tables:\n")
    failures(mixes)


if __name__ == "__main__":
    main()
