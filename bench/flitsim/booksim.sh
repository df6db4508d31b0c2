#!/usr/bin/env bash
# flitsim against BookSim2: builds BookSim2 from its public repository (a
# fresh clone at bench time, never vendored) and flitsim, then writes
# bench/flitsim/booksim.md (side-by-side latency–load tables and
# saturation points, configurations in bench/flitsim/booksim/) and the
# speed section bench/flitsim/speed.md, which run.sh puts into RESULTS.md.
#
# Usage: bench/flitsim/booksim.sh   (from the repository root; `make
# bench-booksim`). BOOKSIM_REPO overrides the repository (a URL or a local
# clone, e.g. a mirror); BOOKSIM=/path/to/booksim skips the build; ONLY=TEXT
# runs only the rows whose name contains TEXT. Runs at nice 10: the
# machine is shared.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=bench/flitsim
WORK=${WORK:-$(mktemp -d)}
GO=${GO:-go}
REPO=${BOOKSIM_REPO:-https://github.com/booksim/booksim2.git}

if [ -z "${BOOKSIM:-}" ]; then
	for tool in git make g++ flex bison; do
		command -v "$tool" >/dev/null || { echo "booksim.sh: $tool is needed to build BookSim2 (Debian: apt-get install git make g++ flex bison)" >&2; exit 1; }
	done
	git clone -q "$REPO" "$WORK/booksim2"
	echo "== BookSim2 $(git -C "$WORK/booksim2" rev-parse --short HEAD) from $REPO"
	nice -n 10 make -s -C "$WORK/booksim2/src" >"$WORK/booksim-build.log" 2>&1 || { tail -20 "$WORK/booksim-build.log"; exit 1; }
	BOOKSIM=$WORK/booksim2/src/booksim
fi
$GO build -o bin/ ./cmd/flitsim
$GO build -o "$WORK/compare" ./$HERE/booksim

if [ -z "${SPEED_ONLY:-}" ]; then
	nice -n 10 "$WORK/compare" -booksim "$BOOKSIM" -flitsim bin/flitsim -configs $HERE/booksim -only "${ONLY:-}" >"$WORK/booksim.md"
	{
		cat "$WORK/booksim.md"
		echo
		echo "Machine: $(nproc) cores shared with other work, $($GO version | cut -d' ' -f3), BookSim2 $(git -C "$WORK/booksim2" rev-parse --short HEAD 2>/dev/null || echo "$BOOKSIM"); $(date -u +%Y-%m-%d)."
	} >$HERE/booksim.md
	echo "wrote $HERE/booksim.md"
fi
nice -n 10 "$WORK/compare" -speed -booksim "$BOOKSIM" -flitsim bin/flitsim -configs $HERE/booksim >"$WORK/speed.md"
cp "$WORK/speed.md" $HERE/speed.md
echo "wrote $HERE/speed.md"
