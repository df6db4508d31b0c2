package routing

import (
	"context"
	"slices"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/internal/parallel"
)

// scanBlock is the number of LIDs the scan transposes at a time: one
// cache line of every switch's table, so that the per-destination walks,
// which visit every switch, read a contiguous column instead of one line
// per switch and LID.
const scanBlock = 64

// brokenDest is a destination whose paths the fabric change broke.
type brokenDest struct {
	d      int
	col    []uint8 // its entry at every switch (a copy)
	src    []uint8 // per-source SLs towards it, one per switch (nil: per-destination SLs)
	breaks int
	// state and freshDest are the classification the scan made (see
	// destTree.reload); nil state: settle classifies the column again.
	state     []uint8
	freshDest bool
}

// scanWorker is the scratch of one scan goroutine.
type scanWorker struct {
	tb, sb []uint8 // transposed block: entries, per-source SLs
	tree   *destTree
	turns  [][]uint64 // per VL: turn bitset
}

// scan walks every destination once: it finds the ones with a break point
// (keeping their columns for the repair) and collects, per VL, the turns
// of the intact terminal traffic (the CDG the repaired paths must keep
// acyclic). The work is split in blocks of LIDs over goroutines; the
// result does not depend on their number. O(switches × LIDs × VLs).
func (rp *repairer) scan(ctx context.Context) ([][]uint64, []brokenDest, error) {
	g, r := rp.g, rp.r
	S, maxLID := g.NumSwitches(), g.MaxLID()
	nblocks := maxLID/scanBlock + 1
	per := make([][]brokenDest, nblocks)
	nw := parallel.Workers(nblocks, 0)
	wks := make([]*scanWorker, nw)
	err := parallel.For(ctx, nblocks, nw, func(w, b int) error {
		if wks[w] == nil {
			wks[w] = rp.newScanWorker()
		}
		wk := wks[w]
		d0 := b * scanBlock
		n := min(scanBlock, maxLID+1-d0)
		for x := int32(0); int(x) < S; x++ {
			transpose(wk.tb, S, x, r.Row(x)[d0:d0+n])
		}
		if r.SL.BySrc != nil {
			for _, x := range wk.tree.srcs { // only sources have SLs that matter
				transpose(wk.sb, S, x, r.SL.SrcRow(x)[d0:d0+n])
			}
		}
		for j := 0; j < n; j++ {
			d := d0 + j
			col := wk.tb[j*S : (j+1)*S]
			if d == 0 || !wk.tree.load(d, col) {
				continue
			}
			var src []uint8
			if r.SL.BySrc != nil {
				src = wk.sb[j*S : (j+1)*S]
				wk.tree.ownPerSource(src, &r.SL2VL.Default)
			} else {
				wk.tree.ownPerDest(r.SL2VL.Default[r.SL.ByDest[d]&0xF])
			}
			wk.tree.spread()
			if wk.tree.breaks > 0 {
				bd := brokenDest{d: d, col: append([]uint8(nil), col...), breaks: wk.tree.breaks}
				if src != nil {
					bd.src = append([]uint8(nil), src...)
				}
				per[b] = append(per[b], bd)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var turns [][]uint64
	for _, wk := range wks {
		if wk == nil {
			continue
		}
		if turns == nil {
			turns = wk.turns
			continue
		}
		for vl := range turns {
			for i, x := range wk.turns[vl] {
				turns[vl][i] |= x
			}
		}
	}
	var dests []brokenDest
	for _, bs := range per {
		dests = append(dests, bs...)
	}
	return turns, dests, nil
}

// scanFrom returns what scan does, from the verifier's State when it
// applies (opt.State, no returned cables: see scanState), and the number
// of destinations walked.
func (rp *repairer) scanFrom(ctx context.Context, opt RepairOptions) ([][]uint64, []brokenDest, int, error) {
	if opt.State != nil && opt.Before == nil {
		if turns, dests, n, ok := rp.scanState(opt.State); ok {
			return turns, dests, n, nil
		}
	}
	turns, dests, err := rp.scan(ctx)
	n := 0
	for d := 1; d <= rp.g.MaxLID(); d++ {
		if sw, term := rp.g.Owner(d); sw >= 0 || term >= 0 {
			n++
		}
	}
	return turns, dests, n, err
}

// scanState is scan from st, the verifier's State of the tables under
// repair: st gives the CDG of the destinations whose paths the change
// left intact and names the others; only those are walked, as scan walks
// them. The CDG is the same as scan's (the turns of each intact
// destination are its turns in the fabric st was made for), so is the
// repair.
func (rp *repairer) scanState(st *cdg.State) ([][]uint64, []brokenDest, int, bool) {
	g, r := rp.g, rp.r
	if slices.Contains(rp.fresh, true) {
		return nil, nil, 0, false
	}
	lids, turns, ok := st.RepairBase(g, r)
	if !ok || len(turns) != rp.vls {
		return nil, nil, 0, false
	}
	S := g.NumSwitches()
	tree := rp.newDestTree()
	tree.turns, tree.tbase = turns, rp.ts.tbase
	tb := make([]uint8, scanBlock*S)
	var sb []uint8
	if r.SL.BySrc != nil {
		sb = make([]uint8, scanBlock*S)
	}
	var dests []brokenDest
	for i := 0; i < len(lids); i += scanBlock {
		chunk := lids[i:min(i+scanBlock, len(lids))]
		gather(tb, S, chunk, r.Row)
		if sb != nil {
			gather(sb, S, chunk, r.SL.SrcRow)
		}
		for j, d := range chunk {
			col := tb[j*S : (j+1)*S]
			if !tree.load(d, col) {
				continue
			}
			var src []uint8
			if sb != nil {
				src = sb[j*S : (j+1)*S]
				tree.ownPerSource(src, &r.SL2VL.Default)
			} else {
				tree.ownPerDest(r.SL2VL.Default[r.SL.ByDest[d]&0xF])
			}
			tree.spread()
			if tree.breaks > 0 {
				bd := brokenDest{d: d, col: slices.Clone(col), breaks: tree.breaks,
					state: slices.Clone(tree.state), freshDest: tree.freshDest}
				if src != nil {
					bd.src = slices.Clone(src)
				}
				dests = append(dests, bd)
			}
		}
	}
	return turns, dests, len(lids), true
}

func (rp *repairer) newScanWorker() *scanWorker {
	S := rp.g.NumSwitches()
	wk := &scanWorker{tb: make([]uint8, scanBlock*S), tree: rp.newDestTree()}
	if rp.r.SL.BySrc != nil {
		wk.sb = make([]uint8, scanBlock*S)
	}
	nwords := (rp.ts.tbase[rp.g.NumChannels()] + 63) / 64
	wk.turns = make([][]uint64, rp.vls)
	for vl := range wk.turns {
		wk.turns[vl] = make([]uint64, nwords)
	}
	wk.tree.turns, wk.tree.tbase = wk.turns, rp.ts.tbase
	return wk
}

// gather writes the columns of the LIDs lids into tb, one per LID:
// tb[j*S+x] = row(x)[lids[j]], each switch's row read once.
func gather(tb []uint8, S int, lids []int, row func(int32) []uint8) {
	for x := range int32(S) {
		rx := row(x)
		for j, d := range lids {
			tb[j*S+int(x)] = rx[d]
		}
	}
}

// transpose writes switch x's slice of a block of LIDs into the block's
// columns: tb[j*S+x] = row[j].
func transpose(tb []uint8, S int, x int32, row []uint8) {
	for j, p := range row {
		tb[j*S+int(x)] = p
	}
}
