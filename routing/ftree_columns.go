package routing

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// Steps 2 and 3 of Ftree: the LFT columns, in parallel over destination
// switches. Each destination's column depends only on the main paths, the
// shape and the destination's distance row, so the worker count does not
// matter.

// ftreeChunk bounds the LIDs whose columns are buffered before they are
// written switch by switch (row-wise, cache-friendly).
const ftreeChunk = 64

// ftreeScratch is one worker's scratch.
type ftreeScratch struct {
	row, det []uint16 // distances to the current destination switch
	queue    []int32
	candOff  []int32 // per switch: its descending candidates are cand[candOff[u]:candOff[u+1]]
	cand     []int32
	ports    []uint8 // per switch, per LID of the chunk: the chosen port
}

// columns runs steps 2 and 3 and returns the number of (switch,
// destination switch) pairs routed on detours.
func (ft *ftreeRun) columns(ctx context.Context, r *lft.Routing, opt Options) (int64, error) {
	g := ft.g
	S := g.NumSwitches()
	scratch := make([]*ftreeScratch, opt.Workers)
	var detours atomic.Int64
	err := parallel.ForProgress(ctx, len(ft.runs)-1, opt.Workers, opt.Progress, func(w, j int) error {
		sc := scratch[w]
		if sc == nil {
			sc = &ftreeScratch{row: make([]uint16, S), det: make([]uint16, S), queue: make([]int32, S),
				candOff: make([]int32, S+1), cand: make([]int32, 0, g.NumChannels()), ports: make([]uint8, S*ftreeChunk)}
			scratch[w] = sc
		}
		lo, hi := int(ft.runs[j]), int(ft.runs[j+1])
		x := ft.dests[lo].Switch
		ft.sh.ud.dist(g, x, sc.row, sc.queue)
		det := []uint16(nil)
		if ft.dests[lo].Term < 0 {
			if n := ft.detourRow(x, sc.row, sc.det); n > 0 {
				detours.Add(int64(n))
				det = sc.det
			}
		}
		ft.descents(x, sc)
		for c0 := lo; c0 < hi; c0 += ftreeChunk {
			c1 := min(c0+ftreeChunk, hi)
			for i := c0; i < c1; i++ {
				if err := ft.column(sc, i, i-c0, det); err != nil {
					return err
				}
			}
			for u := int32(0); int(u) < S; u++ {
				lft := r.Row(u)
				ports := sc.ports[int(u)*ftreeChunk:]
				for i := c0; i < c1; i++ {
					lft[ft.dests[i].LID] = ports[i-c0]
				}
			}
		}
		return nil
	})
	return detours.Load(), err
}

// descents collects, for every switch above destination switch x, the down
// channels on its shortest descents to x (in port order).
func (ft *ftreeRun) descents(x int32, sc *ftreeScratch) {
	g, up, row := ft.g, ft.sh.ud.up, sc.row
	sc.cand = sc.cand[:0]
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		sc.candOff[u] = int32(len(sc.cand))
		if du := row[u]; u != x && du != noDist && du&downBit != 0 {
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if upCandidate(up, c, du, row[g.Head[c]]) {
					sc.cand = append(sc.cand, c)
				}
			}
		}
	}
	sc.candOff[g.NumSwitches()] = int32(len(sc.cand))
}

// column chooses every switch's port for destination i into column k of
// sc.ports; det, when not nil, holds detour distances for the switches the
// distance row cannot route (switch destinations only).
func (ft *ftreeRun) column(sc *ftreeScratch, i, k int, det []uint16) error {
	g, sh, row := ft.g, ft.sh, sc.row
	d := &ft.dests[i]
	x := d.Switch
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		port := &sc.ports[int(u)*ftreeChunk+k]
		du := row[u]
		switch {
		case u == x:
			*port = d.Port
			continue
		case du == noDist:
			*port = lft.NoPort
			if det != nil && det[u] != noDist && det[u]&detBit != 0 {
				*port = g.OutPort[ft.detour(u, det)]
				continue
			}
			// A switch without CAs may lack a route to a CA: no CA
			// traffic passes it then.
			if sh.comp[u] == sh.comp[x] && g.TermOff[u+1] > g.TermOff[u] {
				return NotApplicable("ftree", "no up*/down* route from leaf switch %q to switch %q: failed links broke the tree (updn routes any topology)",
					g.SwitchName(u), g.SwitchName(x))
			}
			continue
		}
		lvl := int(sh.level[u])
		var c int32
		if du&downBit != 0 {
			c = ft.descend(i, u, lvl, sc.cand[sc.candOff[u]:sc.candOff[u+1]])
		} else {
			c = ft.climb(i, u, lvl, du, row)
		}
		if c < 0 {
			return fmt.Errorf("ftree: BUG: switch %q has no next hop towards %q at distance %d", g.SwitchName(u), g.SwitchName(x), du&distMask)
		}
		*port = g.OutPort[c]
	}
	return nil
}

// descend picks the down channel of switch u (above destination i's
// switch) among its candidates, as step 2 says.
func (ft *ftreeRun) descend(i int, u int32, lvl int, cand []int32) int32 {
	g, L := ft.g, ft.L
	if md := ft.down[i*L+lvl]; md >= 0 && g.Tail[md] == u {
		return md
	}
	switch len(cand) {
	case 0:
		return -1
	case 1:
		return cand[0]
	}
	target := int32(-1) // the main path's switch one level down
	x := ft.dests[i].Switch
	if lvl-1 == int(ft.sh.level[x]) {
		target = x
	} else if md := ft.down[i*L+lvl-1]; lvl-1 > int(ft.sh.level[x]) && md >= 0 {
		target = g.Tail[md]
	}
	for _, c := range cand {
		if g.Head[c] == target {
			return c
		}
	}
	return cand[i%len(cand)]
}

// climb picks the up channel of switch u (not above destination i's
// switch) as step 3 says.
func (ft *ftreeRun) climb(i int, u int32, lvl int, du uint16, row []uint16) int32 {
	g, sh := ft.g, ft.sh
	ups := sh.upCh[sh.upOff[u]:sh.upOff[u+1]]
	n := len(ups)
	if n == 0 {
		return -1
	}
	j := int(ft.rank[i*ft.L+lvl])
	switch {
	case j == noRank:
		j = i % n
	case j >= n:
		j %= n
	}
	for range n {
		c := ups[j]
		if hv := row[g.Head[c]]; hv != noDist && hv&distMask+1 == du {
			return c
		}
		if j++; j == n {
			j = 0
		}
	}
	return -1
}

// detourRow prepares detours towards switch destination x for the leaves
// without a legal route to it (their CAs must reach every switch LID). det
// gets the legal distance where row has one, else the length of a shortest
// way to a switch with a legal route (which the packet then follows);
// det[u] keeps detBit only for the switches on the leaves' detours, which
// alone get detour entries. It returns the number of such switches. O(C)
// per round, as many rounds as the longest detour.
func (ft *ftreeRun) detourRow(x int32, row, det []uint16) int {
	g, comp := ft.g, ft.sh.comp
	n := 0
	for u, v := range row {
		det[u] = v & distMask
		if v == noDist {
			det[u] = noDist
			if comp[u] == comp[x] && g.TermOff[u+1] > g.TermOff[u] {
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	for changed := true; changed; {
		changed = false
		for u := int32(0); int(u) < g.NumSwitches(); u++ {
			if row[u] != noDist || comp[u] != comp[x] {
				continue
			}
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if h := det[g.Head[c]]; h != noDist && h+1 < det[u] {
					det[u] = h + 1
					changed = true
				}
			}
		}
	}
	n = 0
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		if row[u] != noDist || comp[u] != comp[x] || g.TermOff[u+1] == g.TermOff[u] {
			continue
		}
		for v := u; row[v] == noDist && det[v]&detBit == 0; {
			c := ft.detour(v, det)
			det[v] |= detBit
			n++
			v = g.Head[c]
		}
	}
	return n
}

// detBit marks the switches on detours in a detour row; distances there
// stay below it (they are at most twice the switch count).
const detBit = 0x8000

// detour picks the first channel of switch u one detour hop closer.
func (ft *ftreeRun) detour(u int32, det []uint16) int32 {
	g := ft.g
	du := det[u] &^ detBit
	for c := g.Off[u]; c < g.Off[u+1]; c++ {
		if h := det[g.Head[c]]; h != noDist && h&^detBit+1 == du {
			return c
		}
	}
	return -1 // unreachable: det[u] came from a neighbour
}
