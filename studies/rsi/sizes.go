package rsi

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// NodeSizes are the table sizes of one node.
//
// What the paper counts (seed 000 §IV-A: "in a RSI network with 3 super
// nodes and 16 nodes in every super node, there need to be 47 routing
// entries in each node before but only 2+15 entries totally with two
// routing tables"): one entry per destination node other than the node
// itself. A node is a router with its processor behind it and one address,
// so the flat table has S·N − 1 = 47 entries, T1 has N − 1 = 15 and T2 has
// S − 1 = 2. FlatNodes derives the flat count from a real flat table (an
// LFT built by minimal routing) by counting the distinct destination nodes
// it routes to; FlatLIDs is what an InfiniBand LFT holds for the same
// fabric, where the router (switch) and its processor (CA) each own a LID.
type NodeSizes struct {
	Node      int32
	FlatNodes int // destination nodes other than itself with a flat entry
	FlatLIDs  int // LIDs with a route in the flat InfiniBand LFT (own LIDs included)
	T1, T2    int // non-empty entries
	Multipath int // entries (T1 and T2) holding more than one port
	Ports     int // ports stored over all T1 and T2 entries
}

// Hier returns the hierarchical entry count T1 + T2.
func (s NodeSizes) Hier() int { return s.T1 + s.T2 }

// FlatLFT routes g with OpenSM's MinHop (a flat, destination-based table
// of minimal routes) for the flat side of the comparison.
func FlatLFT(ctx context.Context, g *fabric.Graph) (*lft.Routing, error) {
	r, err := routing.MinHop{}.Route(ctx, g, routing.Options{})
	if err != nil {
		return nil, fmt.Errorf("rsi: flat table: %w", err)
	}
	return r, nil
}

// Sizes returns the table sizes of every node; flat is a flat LFT of the
// same fabric (FlatLFT), or nil to leave the flat columns 0. O(V·(N + S +
// LIDs)).
func (t *Tables) Sizes(flat *lft.Routing) []NodeSizes {
	g := t.G
	out := make([]NodeSizes, g.NumSwitches())
	seen := make([]int32, g.NumSwitches())
	for i := range seen {
		seen[i] = -1
	}
	for x := int32(0); int(x) < g.NumSwitches(); x++ {
		s := NodeSizes{Node: x}
		for _, tab := range [2][]Entry{t.t1[x], t.t2[x]} {
			for _, e := range tab {
				if len(e) > 1 {
					s.Multipath++
				}
				s.Ports += len(e)
			}
		}
		for _, e := range t.t1[x] {
			if len(e) > 0 {
				s.T1++
			}
		}
		for _, e := range t.t2[x] {
			if len(e) > 0 {
				s.T2++
			}
		}
		if flat != nil {
			for lid := 1; lid <= flat.MaxLID() && lid <= g.MaxLID(); lid++ {
				if flat.Port(x, lid) == lft.NoPort {
					continue
				}
				s.FlatLIDs++
				sw, _ := g.Owner(lid)
				if sw >= 0 && sw != x && seen[sw] != x {
					seen[sw] = x
					s.FlatNodes++
				}
			}
		}
		out[x] = s
	}
	return out
}

// HopStats are the hop counts (router-to-router cables) of two-level
// routing over ordered pairs of distinct nodes.
type HopStats struct {
	Pairs      int64   // ordered pairs of distinct nodes
	Unroutable int64   // pairs the tables cannot route
	AvgMin     float64 // mean over routable pairs of the shortest table path
	AvgMax     float64 // mean over routable pairs of the longest table path
	Max        int     // longest table path of any pair
}

// Hops computes HopStats by dynamic programming over the tables: a node's
// table paths toward super node t are one hop longer than its T2
// successors', and end with a global cable into t followed by layer-1
// shortest paths. With one cable per super-node pair every table path of a
// pair has the same length, so AvgMin = AvgMax (the paper's averages, §VI).
// O(V²·deg).
func (t *Tables) Hops() HopStats {
	g := t.G
	n := g.NumSwitches()
	var st HopStats
	var sumMin, sumMax int64
	lo := make([]int32, n)
	hi := make([]int32, n)
	order := make([]int32, 0, n)
	for d := int32(0); int(d) < n; d++ {
		dsn, di := t.Group[d], t.Index[d]
		for i := range lo {
			lo[i], hi[i] = -1, -1
		}
		for _, y := range t.Members[dsn] {
			lo[y] = t.ldist[y][di]
			hi[y] = lo[y]
		}
		// Other nodes in increasing gateway distance to d's super node.
		order = order[:0]
		for x := int32(0); int(x) < n; x++ {
			if t.Group[x] != dsn && t.gdist[x][dsn] > 0 {
				order = append(order, x)
			}
		}
		sortByGateway(order, t.gdist, dsn)
		for _, x := range order {
			for _, c := range t.t2[x][dsn] {
				v := g.Head[c]
				if lo[v] < 0 {
					continue
				}
				if lo[x] < 0 || lo[v]+1 < lo[x] {
					lo[x] = lo[v] + 1
				}
				hi[x] = max(hi[x], hi[v]+1)
			}
		}
		for x := int32(0); int(x) < n; x++ {
			if x == d {
				continue
			}
			st.Pairs++
			if lo[x] < 0 {
				st.Unroutable++
				continue
			}
			sumMin += int64(lo[x])
			sumMax += int64(hi[x])
			st.Max = max(st.Max, int(hi[x]))
		}
	}
	if ok := st.Pairs - st.Unroutable; ok > 0 {
		st.AvgMin = float64(sumMin) / float64(ok)
		st.AvgMax = float64(sumMax) / float64(ok)
	}
	return st
}

// sortByGateway sorts nodes by increasing gdist[x][sn] (counting sort).
func sortByGateway(xs []int32, gdist [][]int32, sn int) {
	most := int32(0)
	for _, x := range xs {
		most = max(most, gdist[x][sn])
	}
	buckets := make([][]int32, most+1)
	for _, x := range xs {
		d := gdist[x][sn]
		buckets[d] = append(buckets[d], x)
	}
	xs = xs[:0]
	for _, b := range buckets {
		xs = append(xs, b...)
	}
}
