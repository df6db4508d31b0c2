package plan

import (
	"errors"
	"sort"

	"github.com/nuesm/nuesm/cdg"
)

// dag is a channel dependency graph over an edge space that stays
// acyclic: every edge id has a multiplicity (how many destinations create
// the dependency), and a topological order of the virtual channels is
// kept up to date as edges appear, with the dynamic topological sort of
// Pearce and Kelly ("A dynamic topological sort algorithm for directed
// acyclic graphs", ACM J. Exp. Algorithmics 11, 2006): inserting u -> v
// against the order searches forward from v and backward from u only
// among the vertices ordered between them, finds a cycle when the forward
// search meets u, and otherwise reorders just the vertices it visited
// (cdg.PK). Removing an edge never invalidates an order. Adjacency is
// implicit (the turns of the fabric), so memory is one counter per edge
// id and a few ints per vertex. Not safe for concurrent use.
type dag struct {
	es  *edgeSpace
	cnt []uint16
	ord []int32 // vertex -> position
	pk  *cdg.PK
	// cycle holds, after insert failed, the cycle the edge would close
	// (vertex ids, the rejected edge's head first).
	cycle []int32
}

var errCyclic = errors.New("plan: dependency graph is cyclic")

func newDAG(es *edgeSpace) *dag {
	n := es.numVertices()
	return &dag{es: es, cnt: make([]uint16, es.size()), ord: make([]int32, n), pk: cdg.NewPK(n)}
}

// endpoints decodes an edge id into its two vertices.
func (d *dag) endpoints(e int64) (int32, int32) {
	es, g, V := d.es, d.es.g, int64(d.es.V)
	t, vl1, vl2 := e/V, e%V, e%V
	if es.cross {
		t, vl1, vl2 = e/(V*V), (e/V)%V, e%V
	}
	c := int32(sort.Search(g.NumChannels(), func(i int) bool { return es.tbase[i+1] > t }))
	c2 := g.Off[g.Head[c]] + int32(t-es.tbase[c])
	return c*int32(V) + int32(vl1), c2*int32(V) + int32(vl2)
}

// succ calls fn for every successor of vertex v present in the graph.
func (d *dag) succ(v int32, fn func(w int32) bool) bool {
	es, g, V := d.es, d.es.g, int32(d.es.V)
	c, vl := v/V, v%V
	h := g.Head[c]
	for k := int32(0); k < int32(g.Degree(h)); k++ {
		c2, t := g.Off[h]+k, es.tbase[c]+int64(k)
		if !es.cross {
			if d.cnt[es.turnEdge(t, int(vl), int(vl))] > 0 && !fn(c2*V+vl) {
				return false
			}
			continue
		}
		for vl2 := int32(0); vl2 < V; vl2++ {
			if d.cnt[es.turnEdge(t, int(vl), int(vl2))] > 0 && !fn(c2*V+vl2) {
				return false
			}
		}
	}
	return true
}

// pred calls fn for every predecessor of vertex v present in the graph.
func (d *dag) pred(v int32, fn func(u int32)) {
	es, g, V := d.es, d.es.g, int32(d.es.V)
	c2, vl2 := v/V, v%V
	x := g.Tail[c2]
	k2 := int64(c2 - g.Off[x])
	for k := int32(0); k < int32(g.Degree(x)); k++ {
		c0 := g.Rev[g.Off[x]+k] // enters x
		t := es.tbase[c0] + k2
		if !es.cross {
			if d.cnt[es.turnEdge(t, int(vl2), int(vl2))] > 0 {
				fn(c0*V + vl2)
			}
			continue
		}
		for vl1 := int32(0); vl1 < V; vl1++ {
			if d.cnt[es.turnEdge(t, int(vl1), int(vl2))] > 0 {
				fn(c0*V + vl1)
			}
		}
	}
}

// order computes a topological order of the current edges (Kahn), or
// errCyclic.
func (d *dag) order() error {
	if !cdg.KahnOrder(d.ord, d.succ) {
		return errCyclic
	}
	return nil
}

// insert adds one occurrence of edge e and reports true, or reports false
// and leaves the graph unchanged when e would close a cycle.
func (d *dag) insert(e int64) bool {
	if d.cnt[e] > 0 {
		d.cnt[e]++
		return true
	}
	x, y := d.endpoints(e)
	if !d.pk.Insert(d.ord, x, y, d.succ, d.pred) {
		d.cycle = append(d.cycle[:0], d.pk.Cycle...)
		return false
	}
	d.cnt[e] = 1
	return true
}

// remove drops one occurrence of edge e.
func (d *dag) remove(e int64) { d.cnt[e]-- }

// replace swaps one destination's dependencies: one occurrence of every
// edge of out removed, of every edge of in added. When in closes a cycle
// it restores the graph and returns false.
func (d *dag) replace(out, in []int64) bool { return cdg.SwapEdges(out, in, d.remove, d.insert) }
