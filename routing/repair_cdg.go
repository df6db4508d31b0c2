package routing

import (
	"context"

	"github.com/nuesm/nuesm/internal/parallel"
)

// repairLayers holds the channel dependency graph of every VL of the
// routing under repair, as LASH keeps its layers (lash_layers.go): a
// bitset over the switch graph's turns plus a topological order of the
// channels, so that a new turn costs a Pearce–Kelly search over the
// channels between its ends in that order, never a full cycle search.
// Turns are only ever added: a turn some entry no longer uses stays, which
// over-approximates the CDG and keeps the acyclicity argument sound.
type repairLayers struct {
	ts  *turnSpace
	vls []*dagLayer // per VL
	sc  *dagScratch
	log []vlTurn // turns added since the last commit, for rollback
}

// vlTurn is one turn added to one VL.
type vlTurn struct {
	vl uint8
	t  int64
}

// newRepairLayers orders the turn bitsets (one per VL, as the scan built
// them) topologically, one goroutine per VL. It returns the first VL
// whose turns close a cycle (then the routing was not deadlock-free to
// begin with), or -1.
func newRepairLayers(ctx context.Context, ts *turnSpace, turns [][]uint64) (*repairLayers, int, error) {
	ly := &repairLayers{ts: ts, sc: newDAGScratch(ts.g.NumChannels()), vls: make([]*dagLayer, len(turns))}
	acyclic := make([]bool, len(turns))
	err := parallel.For(ctx, len(turns), 0, func(_, vl int) error {
		ly.vls[vl] = &dagLayer{turns: turns[vl]}
		acyclic[vl] = ts.orderLayer(ly.vls[vl])
		return nil
	})
	if err != nil {
		return nil, -1, err
	}
	for vl, ok := range acyclic {
		if !ok {
			return nil, vl, nil
		}
	}
	return ly, -1, nil
}

// orderLayer sets L.ord to a topological order of L's turns (Kahn's
// algorithm, channels taken in id order, so the order is deterministic)
// and reports false when the turns close a cycle. O(channels + turns/64)
// word reads.
func (ts *turnSpace) orderLayer(L *dagLayer) bool {
	g := ts.g
	C := int32(g.NumChannels())
	indeg := make([]int32, C)
	var buf []int32
	for c := int32(0); c < C; c++ {
		buf = ts.succ(L, c, buf[:0])
		for _, c2 := range buf {
			indeg[c2]++
		}
	}
	q := make([]int32, 0, C)
	for c := int32(0); c < C; c++ {
		if indeg[c] == 0 {
			q = append(q, c)
		}
	}
	L.ord = make([]int32, C)
	for i := 0; i < len(q); i++ {
		c := q[i]
		L.ord[c] = int32(i)
		buf = ts.succ(L, c, buf[:0])
		for _, c2 := range buf {
			if indeg[c2]--; indeg[c2] == 0 {
				q = append(q, c2)
			}
		}
	}
	return len(q) == int(C)
}

// succ appends the channels c turns into in layer L to buf.
func (ts *turnSpace) succ(L *dagLayer, c int32, buf []int32) []int32 {
	ts.eachSucc(L, c, func(c2 int32) bool {
		buf = append(buf, c2)
		return true
	})
	return buf
}

// try adds the turn a -> b (b leaves the switch a enters) to VL vl unless
// it closes a cycle there; an added turn is logged for rollback.
func (ly *repairLayers) try(vl uint8, a, b int32) bool {
	L := ly.vls[vl]
	t := ly.ts.turn(a, b)
	if L.has(t) {
		return true
	}
	if !ly.ts.insert(L, a, b, ly.sc) {
		return false
	}
	L.set(t)
	ly.log = append(ly.log, vlTurn{vl, t})
	return true
}

// mark returns the rollback point of the turns added so far.
func (ly *repairLayers) mark() int { return len(ly.log) }

// rollback removes the turns added since mark m. The topological orders
// stay valid: they were valid with those turns.
func (ly *repairLayers) rollback(m int) {
	for _, x := range ly.log[m:] {
		ly.vls[x.vl].clear(x.t)
	}
	ly.log = ly.log[:m]
}

// commit forgets the log (the turns stay).
func (ly *repairLayers) commit() { ly.log = ly.log[:0] }
