package routing

import (
	"context"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// balancer implements OpenSM's port selection shared by minhop and updn
// (doc/current-routing.txt, "the basic routing algorithm", stage 2): each
// switch visits the destination LIDs in LID order and, among the ports on
// a shortest (legal) route, takes the one with the fewest LIDs already
// assigned at that switch, ties to the lowest port. Within the LIDs of one
// port (LMC > 0) it first prefers ports towards a neighbour switch that no
// earlier LID of the group took from this switch, so the LIDs of a port
// leave on different paths where the fabric offers them (OpenSM's rule b/c
// "prefer another system/node", with the neighbour switch as the node).
//
// A switch's choices depend only on its own counters and the distance rows,
// so the switches are independent: destinations are processed in blocks of
// consecutive LIDs; per block the distance rows of the distinct destination
// switches are computed in parallel, then the switches choose in parallel,
// each walking the block in LID order. The result equals the sequential
// algorithm whatever the worker count or block size. Cost O(D·(S+C)) for
// the rows of D destination switches plus O(LIDs·C) for the choices.
type balancer struct {
	g     *fabric.Graph
	r     *lft.Routing
	dests []Dest
	up    []bool // nil: min-hop rows (minhop); else Up*/Down* rows
	fill  func(dst int32, row []uint16, queue []int32)

	load   []int32  // per channel: LIDs its tail switch sends through it
	slotOf []int32  // per switch: its row in rows during a block, -1 none
	slots  []int32  // destination switches of the current block
	rows   []uint16 // len(slots) rows of S entries
	queues [][]int32
	heads  [][]int32 // per worker: neighbours taken by the current LMC group
	cand   [][]int32 // per worker: candidate channels of the current switch
}

// blockEntries bounds the distance-row entries kept per block (16 MiB).
const blockEntries = 8 << 20

// routeBalanced fills r's LFT columns for every destination of g (in LID
// order) as the balancer describes, with rows computed by fill.
func routeBalanced(ctx context.Context, g *fabric.Graph, r *lft.Routing, up []bool,
	fill func(dst int32, row []uint16, queue []int32), opt Options) error {
	S, dests := g.NumSwitches(), Destinations(g)
	if S == 0 || len(dests) == 0 {
		return ctx.Err()
	}
	perBlock := min(max(blockEntries/S, 64), 4096)
	b := &balancer{
		g: g, r: r, dests: dests, up: up, fill: fill,
		load:   make([]int32, g.NumChannels()),
		slotOf: make([]int32, S),
		rows:   make([]uint16, 0, min(perBlock, S)*S),
		queues: make([][]int32, opt.Workers),
		heads:  make([][]int32, opt.Workers),
		cand:   make([][]int32, opt.Workers),
	}
	for i := range b.slotOf {
		b.slotOf[i] = -1
	}
	for w := range b.queues {
		b.queues[w] = make([]int32, S)
		b.heads[w] = make([]int32, 0, 1<<7) // a port has at most 2^7 LIDs
		b.cand[w] = make([]int32, 0, fabric.MaxPorts)
	}
	for lo := 0; lo < len(dests); {
		hi := min(lo+perBlock, len(dests))
		for hi < len(dests) && dests[hi].Base == dests[hi-1].Base {
			hi++ // keep the LIDs of one port in one block
		}
		b.slots = b.slots[:0]
		for i := lo; i < hi; i++ {
			if s := dests[i].Switch; b.slotOf[s] < 0 {
				b.slotOf[s] = int32(len(b.slots))
				b.slots = append(b.slots, s)
			}
		}
		if need := len(b.slots) * S; cap(b.rows) < need {
			b.rows = make([]uint16, need)
		}
		b.rows = b.rows[:len(b.slots)*S]
		err := parallel.For(ctx, len(b.slots), opt.Workers, func(w, i int) error {
			b.fill(b.slots[i], b.rows[i*S:(i+1)*S], b.queues[w])
			return nil
		})
		if err == nil {
			err = parallel.For(ctx, S, opt.Workers, func(w, u int) error {
				b.choose(w, int32(u), lo, hi)
				return nil
			})
		}
		if err != nil {
			return err
		}
		for _, s := range b.slots {
			b.slotOf[s] = -1
		}
		lo = hi
		if opt.Progress != nil {
			opt.Progress(lo, len(dests))
		}
	}
	return nil
}

// choose sets switch u's LFT entries for dests[lo:hi]. The candidate
// channels depend on the destination switch only, so they are collected
// once per run of LIDs on the same switch (the LIDs of a leaf's hosts are
// usually consecutive); each LID then costs O(candidates).
func (b *balancer) choose(w int, u int32, lo, hi int) {
	g, S := b.g, b.g.NumSwitches()
	row := b.r.Row(u)
	heads := b.heads[w][:0]
	cand := b.cand[w][:0]
	base, candSw := int32(-1), int32(-1)
	c0, c1 := g.Off[u], g.Off[u+1]
	for i := lo; i < hi; i++ {
		d := &b.dests[i]
		if d.Base != base {
			base = d.Base
			heads = heads[:0]
		}
		if d.Switch == u {
			row[d.LID] = d.Port
			continue
		}
		if d.Switch != candSw {
			candSw = d.Switch
			cand = b.candidates(u, c0, c1, b.rows[int(b.slotOf[candSw])*S:][:S], cand[:0])
		}
		if len(cand) == 0 {
			continue // another component, or no legal route: NoPort
		}
		best := cand[0]
		if len(heads) == 0 {
			load := b.load
			bl := load[best]
			for _, c := range cand[1:] {
				if l := load[c]; l < bl {
					best, bl = c, l
				}
			}
		} else {
			bestSeen := slices.Contains(heads, g.Head[best])
			for _, c := range cand[1:] {
				seen := slices.Contains(heads, g.Head[c])
				if (!seen && bestSeen) || (seen == bestSeen && b.load[c] < b.load[best]) {
					best, bestSeen = c, seen
				}
			}
		}
		b.load[best]++
		row[d.LID] = g.OutPort[best]
		heads = append(heads, g.Head[best])
	}
	b.heads[w], b.cand[w] = heads, cand
}

// candidates appends to cand the channels c0..c1-1 of switch u that
// continue a route of dist (see upCandidate), in port order.
func (b *balancer) candidates(u, c0, c1 int32, dist []uint16, cand []int32) []int32 {
	du := dist[u]
	if du == noDist {
		return cand
	}
	heads := b.g.Head[c0:c1]
	if b.up == nil {
		for k, h := range heads {
			if hv := dist[h]; hv != noDist && hv+1 == du {
				cand = append(cand, c0+int32(k))
			}
		}
		return cand
	}
	for k, h := range heads {
		if c := c0 + int32(k); upCandidate(b.up, c, du, dist[h]) {
			cand = append(cand, c)
		}
	}
	return cand
}
