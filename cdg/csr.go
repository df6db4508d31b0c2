package cdg

import "fmt"

// CSR is a directed graph in compressed sparse row form: the successors of
// vertex v are Adj[Off[v]:Off[v+1]].
type CSR struct {
	Off []int32
	Adj []int32
}

// NumVertices returns the number of vertices.
func (g *CSR) NumVertices() int { return len(g.Off) - 1 }

// NumEdges returns the number of edges.
func (g *CSR) NumEdges() int { return len(g.Adj) }

// Succ returns the successors of v.
func (g *CSR) Succ(v int32) []int32 { return g.Adj[g.Off[v]:g.Off[v+1]] }

// NewCSR builds a CSR graph with n vertices from an edge list (from[i] ->
// to[i]). Successors keep the order of the edge list.
func NewCSR(n int, from, to []int32) (*CSR, error) {
	if len(from) != len(to) {
		return nil, fmt.Errorf("cdg: %d edge tails, %d edge heads", len(from), len(to))
	}
	if len(from) > 1<<31-1 {
		return nil, fmt.Errorf("cdg: %d edges exceed the int32 CSR limit", len(from))
	}
	g := &CSR{Off: make([]int32, n+1), Adj: make([]int32, len(from))}
	for i, u := range from {
		if u < 0 || int(u) >= n || to[i] < 0 || int(to[i]) >= n {
			return nil, fmt.Errorf("cdg: edge %d->%d outside 0..%d", u, to[i], n-1)
		}
		g.Off[u+1]++
	}
	for v := 0; v < n; v++ {
		g.Off[v+1] += g.Off[v]
	}
	fill := append([]int32(nil), g.Off[:n]...)
	for i, u := range from {
		g.Adj[fill[u]] = to[i]
		fill[u]++
	}
	return g, nil
}

// FindCycle returns the vertices of one directed cycle (v0, v1, …, vk with
// an edge vk -> v0), or nil when the graph is acyclic. It is an iterative
// depth-first search with three colours, O(V + E) time and O(V) extra
// memory; the cycle it returns is the first one the search closes, scanning
// start vertices in increasing order, so the result is deterministic.
func FindCycle(g *CSR) []int32 {
	n := g.NumVertices()
	const (
		white = 0
		grey  = 1
		black = 2
	)
	color := make([]uint8, n)
	// stack of (vertex, next successor index)
	stackV := make([]int32, 0, 64)
	stackI := make([]int32, 0, 64)
	for s := 0; s < n; s++ {
		if color[s] != white {
			continue
		}
		color[s] = grey
		stackV = append(stackV[:0], int32(s))
		stackI = append(stackI[:0], g.Off[s])
		for len(stackV) > 0 {
			top := len(stackV) - 1
			v := stackV[top]
			i := stackI[top]
			if i == g.Off[v+1] {
				color[v] = black
				stackV = stackV[:top]
				stackI = stackI[:top]
				continue
			}
			stackI[top] = i + 1
			w := g.Adj[i]
			switch color[w] {
			case white:
				color[w] = grey
				stackV = append(stackV, w)
				stackI = append(stackI, g.Off[w])
			case grey:
				// w is on the stack: the cycle is w … v.
				j := top
				for stackV[j] != w {
					j--
				}
				return append([]int32(nil), stackV[j:]...)
			}
		}
	}
	return nil
}
