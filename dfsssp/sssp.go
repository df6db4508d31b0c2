package dfsssp

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// inf is the distance of a vertex not reached yet.
const inf = int64(1) << 62

// dijkstra holds the preallocated scratch of one shortest-path tree
// computation towards a destination. It numbers vertices as OpenSM's
// dijkstra() does: 1..S are the switches in OpenSM's switch-table order
// (plan.vsw), 0 is the destination CA when the destination is a terminal,
// joined to its switch by a link of weight 1. Not safe for concurrent use.
type dijkstra struct {
	g     *fabric.Graph
	vsw   []int32 // vertex 1..S -> switch
	vid   []int32 // switch -> vertex
	hv    []int32 // per channel: vertex of its head
	q     *osmHeap
	dist  []int64 // by vertex
	done  []bool  // by vertex
	par   []int32 // per switch: channel towards the root, -1 at the root
	order []int32 // reached switches in settling order; order[0] is the root
}

func newDijkstra(p *plan) *dijkstra {
	S := p.S
	d := &dijkstra{g: p.g, vsw: p.vsw, vid: p.vid, hv: make([]int32, p.g.NumChannels()), q: newOSMHeap(S + 1),
		dist: make([]int64, S+1), done: make([]bool, S+1), par: make([]int32, S), order: make([]int32, 0, S)}
	for c, h := range p.g.Head {
		d.hv[c] = p.vid[h]
	}
	return d
}

// run builds the tree of shortest paths towards switch root (towards a
// terminal on its port port when port != 0). The search walks channels
// backwards from the root, as OpenSM's dijkstra() does from the
// destination port: wr[c] is the cost of reaching Head[c] over c, which is
// the load of the opposite channel Rev[c] that traffic takes. Every vertex enters
// the heap at infinity in vertex order; a vertex keeps the first parent
// that offered its final distance (strict "<"); the heap's tie rules are
// OpenSM's, so equal-cost choices come out as OpenSM makes them. Afterwards
// order lists the reached switches by settling order and par[v] is the
// channel switch v forwards on. O((S + C) log S), no allocation.
func (d *dijkstra) run(root int32, port uint8, wr []int64) {
	g, q := d.g, d.q
	S := len(d.vsw) - 1
	// OpenSM inserts every vertex at infinity in vertex order; equal keys
	// never move, so the heap is simply that array.
	for v := 1; v <= S; v++ {
		d.dist[v] = inf
		d.done[v] = false
		q.put(v-1, inf, int32(v))
	}
	q.size = S
	src := d.vid[root]
	if port != 0 {
		d.done[0] = false
		q.insert(0, inf)
		src = 0
	}
	d.par[root] = -1
	d.dist[src] = 0
	d.done[src] = true
	q.setKey(src, 0)
	d.order = d.order[:0]
	for {
		v := q.extract()
		if v < 0 {
			return
		}
		d.done[v] = true
		dv := d.dist[v]
		if dv == inf {
			continue
		}
		if v == 0 {
			if u := d.vid[root]; !d.done[u] && dv+1 < d.dist[u] {
				d.dist[u] = dv + 1
				q.setKey(u, dv+1)
			}
			continue
		}
		s := d.vsw[v]
		d.order = append(d.order, s)
		lo, hi := g.Off[s], g.Off[s+1]
		hv, w := d.hv[lo:hi], wr[lo:hi]
		for i, u := range hv {
			if d.done[u] {
				continue
			}
			if nd := dv + w[i]; nd < d.dist[u] {
				d.dist[u] = nd
				d.par[d.vsw[u]] = g.Rev[lo+int32(i)] // towards s, as traffic flows
				q.setKey(u, nd)
			}
		}
	}
}

// initialWeights returns P² for every channel (OpenSM's link->weight =
// total_num_hca²), so that a path one hop longer costs more than the
// balancing load a shorter one carries, as long as that stays below P².
func initialWeights(p *plan) []int64 {
	w := make([]int64, p.g.NumChannels())
	base := max(p.P*p.P, 1)
	for c := range w {
		w[c] = base
	}
	return w
}

// shortestPaths routes every destination of p in order into r's LFTs:
// Dijkstra towards the destination's switch, then every tree channel's
// weight grows by the LIDs behind it. When b is not nil it also records
// each tree for the layering. ctx is checked every 32 destinations.
func shortestPaths(ctx context.Context, p *plan, r *lft.Routing, opt routing.Options, b *builder) error {
	g := p.g
	wr := initialWeights(p)
	dj := newDijkstra(p)
	load := make([]int64, p.S)
	for di, d := range p.dests {
		if di&31 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if opt.Progress != nil {
				opt.Progress(di, len(p.dests))
			}
		}
		dj.run(d.sw, d.port, wr)
		lid := int(d.lid)
		r.SetPort(d.sw, lid, d.port)
		for _, v := range dj.order[1:] {
			r.SetPort(v, lid, g.OutPort[dj.par[v]])
		}
		// Children settle after their parents: sum the LIDs of each
		// subtree from the leaves up and charge each tree channel. With
		// SAR only a job's own terminals load its destinations' paths.
		src := p.lids
		if p.jobLids != nil {
			src = nil
			if d.job >= 0 {
				src = p.jobLids[d.job]
			}
		}
		for i := len(dj.order) - 1; i >= 1 && src != nil; i-- {
			v := dj.order[i]
			load[v] += src[v]
			c := dj.par[v]
			wr[g.Rev[c]] += load[v]
			load[g.Head[c]] += load[v]
		}
		for _, v := range dj.order {
			load[v] = 0
		}
		if b != nil {
			b.addDest(di, dj.order, dj.par)
		}
	}
	if opt.Progress != nil {
		opt.Progress(len(p.dests), len(p.dests))
	}
	return nil
}
