package plan

import (
	"strconv"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
)

// edgeSpace numbers the vertices of a channel dependency graph over
// virtual channels, (channel, VL) -> channel*V + VL, and every dependency
// that can exist: a turn (channel c into switch x, channel c2 out of x)
// on given VLs. Turn ids are dense per channel (tbase), as in package cdg,
// so that dependency sets are bitsets or count arrays indexed by edge id.
// When no SL2VL table changes the VL along a path (cross false) an edge
// keeps its VL and there are turns × V edge ids; otherwise turns × V².
type edgeSpace struct {
	g     *fabric.Graph
	V     int
	cross bool
	tbase []int64 // channel -> first turn id; len NumChannels+1
}

func newEdgeSpace(g *fabric.Graph, V int, cross bool) *edgeSpace {
	es := &edgeSpace{g: g, V: V, cross: cross, tbase: make([]int64, g.NumChannels()+1)}
	for c := 0; c < g.NumChannels(); c++ {
		es.tbase[c+1] = es.tbase[c] + int64(g.Degree(g.Head[c]))
	}
	return es
}

// numVertices returns the number of virtual channels.
func (es *edgeSpace) numVertices() int { return es.g.NumChannels() * es.V }

// size returns the number of edge ids.
func (es *edgeSpace) size() int64 {
	n := es.tbase[len(es.tbase)-1] * int64(es.V)
	if es.cross {
		n *= int64(es.V)
	}
	return n
}

// edge returns the id of the dependency (c1, vl1) -> (c2, vl2); c2 must
// leave the switch c1 enters. Without cross, vl2 must equal vl1.
func (es *edgeSpace) edge(c1 int32, vl1 uint8, c2 int32, vl2 uint8) int64 {
	t := es.tbase[c1] + int64(c2-es.g.Off[es.g.Head[c1]])
	if es.cross {
		return (t*int64(es.V)+int64(vl1))*int64(es.V) + int64(vl2)
	}
	return t*int64(es.V) + int64(vl2)
}

// turnEdge returns the edge id of turn t (the k-th channel out of the
// head of c1) on the given VLs.
func (es *edgeSpace) turnEdge(t int64, vl1, vl2 int) int64 {
	if es.cross {
		return (t*int64(es.V)+int64(vl1))*int64(es.V) + int64(vl2)
	}
	return t*int64(es.V) + int64(vl2)
}

// forEachEdge calls fn(edge id, from vertex, to vertex) for every edge id
// whose bit is set in bits, in id order.
func (es *edgeSpace) forEachEdge(bits []uint64, fn func(e int64, from, to int32)) {
	g, V := es.g, int32(es.V)
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		h := g.Head[c]
		for k := int32(0); k < int32(g.Degree(h)); k++ {
			c2 := g.Off[h] + k
			t := es.tbase[c] + int64(k)
			for vl1 := int32(0); vl1 < V; vl1++ {
				if !es.cross {
					e := es.turnEdge(t, int(vl1), int(vl1))
					if bits[e>>6]&(1<<(e&63)) != 0 {
						fn(e, c*V+vl1, c2*V+vl1)
					}
					continue
				}
				for vl2 := int32(0); vl2 < V; vl2++ {
					e := es.turnEdge(t, int(vl1), int(vl2))
					if bits[e>>6]&(1<<(e&63)) != 0 {
						fn(e, c*V+vl1, c2*V+vl2)
					}
				}
			}
		}
	}
}

// cycle builds the CSR graph of the edges in bits and returns one cycle
// (vertex ids) or nil, with the number of edges, using cdg.FindCycle.
func (es *edgeSpace) cycle(bits []uint64) ([]int32, int) {
	var from, to []int32
	es.forEachEdge(bits, func(_ int64, a, b int32) {
		from = append(from, a)
		to = append(to, b)
	})
	return es.cycleOf(from, to), len(from)
}

// cycleOf returns a cycle of the graph with the given edge list, or nil.
func (es *edgeSpace) cycleOf(from, to []int32) []int32 {
	csr, err := cdg.NewCSR(es.numVertices(), from, to)
	if err != nil {
		panic(err) // vertex ids come from the edge space itself
	}
	return cdg.FindCycle(csr)
}

// cycleError describes a cycle of vertex ids like cdg does.
func (es *edgeSpace) cycleError(verts []int32) *cdg.CycleError {
	e := &cdg.CycleError{}
	for _, v := range verts {
		c, vl := v/int32(es.V), uint8(v%int32(es.V))
		e.Channels = append(e.Channels, c)
		e.VLs = append(e.VLs, vl)
		e.Names = append(e.Names, "VL"+strconv.Itoa(int(vl))+" "+es.g.ChannelName(c))
	}
	return e
}
