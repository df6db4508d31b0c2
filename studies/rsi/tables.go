package rsi

import (
	"errors"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// ErrGroups is wrapped by errors about a group assignment that does not
// fit the fabric.
var ErrGroups = errors.New("rsi: bad super-node assignment")

// Entry is one routing-table entry: the channels (fabric.Graph channel ids,
// increasing) of the output ports on minimal paths toward the entry's
// address. An empty entry means "no route". The slices belong to the
// Tables and must not be modified.
type Entry []int32

// Tables are the two-level routing tables of every node of a grouped
// fabric (seed 000 §IV-A, Fig. 4). Node x holds
//
//   - T1: one entry per other node y of its own super node, with every
//     channel leaving x toward a layer-1 neighbour on a shortest path to y
//     inside the super node ("there may be more than one minimal path");
//   - T2: one entry per other super node t, with every channel on a
//     shortest path from x to a global cable toward t, taken inside x's
//     own super node (x's own cables to t when it has some).
//
// Two-level routing looks up T1 when the destination is in the current
// super node and T2 otherwise (Algorithm 1, lines 5–13), so a packet never
// passes through a third super node. Tables are read-only after Build and
// safe for concurrent use.
type Tables struct {
	G       *fabric.Graph
	Group   []int     // switch -> super node
	Index   []int     // switch -> position inside its super node
	Members [][]int32 // super node -> its switches, increasing

	t1 [][]Entry // t1[x][i]: entry toward member i of x's super node
	t2 [][]Entry // t2[x][t]: entry toward super node t

	// Local is the routing inside a super node the entries follow.
	Local Local

	ldist [][]int32 // ldist[x][i]: hops inside the super node from x to member i, -1 unreachable
	gdist [][]int32 // gdist[x][t]: two-level hops from x to the first node of super node t, -1 none
}

// Build computes the two-level tables of g with super nodes group (one
// value per switch, as topo.Topology.Group; values 0..S−1, each used),
// every entry holding every minimal port. O(S_n·(N + C_l) + V·C) where
// S_n is the number of switches, N the largest super node and C_l its
// layer-1 channels.
func Build(g *fabric.Graph, group []int) (*Tables, error) {
	return BuildWith(g, group, BuildOptions{})
}

// BuildWith computes the two-level tables with the routing inside super
// nodes that opt selects (see BuildOptions).
func BuildWith(g *fabric.Graph, group []int, opt BuildOptions) (*Tables, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	n := g.NumSwitches()
	if len(group) != n {
		return nil, fmt.Errorf("%w: %d group values for %d switches", ErrGroups, len(group), n)
	}
	S := 0
	for s, v := range group {
		if v < 0 {
			return nil, fmt.Errorf("%w: switch %s in group %d", ErrGroups, g.SwitchName(int32(s)), v)
		}
		S = max(S, v+1)
	}
	t := &Tables{G: g, Group: group, Index: make([]int, n), Members: make([][]int32, S), Local: opt.Local}
	for s, v := range group {
		t.Index[s] = len(t.Members[v])
		t.Members[v] = append(t.Members[v], int32(s))
	}
	for v, m := range t.Members {
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: super node %d has no nodes", ErrGroups, v)
		}
	}
	t.localDistances()
	t.gatewayDistances()
	if opt.Local == DimOrder {
		d, err := newDimOrder(t, opt.Dims)
		if err != nil {
			return nil, err
		}
		d.fill()
		return t, nil
	}
	t.fill()
	return t, nil
}

// NumSuperNodes returns the number of super nodes.
func (t *Tables) NumSuperNodes() int { return len(t.Members) }

// T1 returns node x's layer-1 entry toward switch y (same super node).
func (t *Tables) T1(x, y int32) Entry { return t.t1[x][t.Index[y]] }

// T2 returns node x's super-node entry toward super node sn (nil for x's
// own super node).
func (t *Tables) T2(x int32, sn int) Entry { return t.t2[x][sn] }

// Lookup returns the entry node x uses for destination switch d: T1 when
// d is in x's super node, T2 of d's super node otherwise (nil when x = d).
func (t *Tables) Lookup(x, d int32) Entry {
	if t.Group[x] == t.Group[d] {
		return t.t1[x][t.Index[d]]
	}
	return t.t2[x][t.Group[d]]
}

// LocalDist returns the hops from x to y inside their super node (-1 when
// they are in different super nodes or y is unreachable inside it).
func (t *Tables) LocalDist(x, y int32) int {
	if t.Group[x] != t.Group[y] {
		return -1
	}
	return int(t.ldist[x][t.Index[y]])
}

// GatewayDist returns the two-level hops from x to the first node of
// super node sn (0 for x's own, -1 when the tables have no way there).
func (t *Tables) GatewayDist(x int32, sn int) int { return int(t.gdist[x][sn]) }

// localDistances runs one BFS per node restricted to its super node.
func (t *Tables) localDistances() {
	g := t.G
	n := g.NumSwitches()
	t.ldist = make([][]int32, n)
	queue := make([]int32, 0, 64)
	for x := int32(0); int(x) < n; x++ {
		sn := t.Group[x]
		d := make([]int32, len(t.Members[sn]))
		for i := range d {
			d[i] = -1
		}
		d[t.Index[x]] = 0
		queue = append(queue[:0], x)
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			du := d[t.Index[u]]
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				v := g.Head[c]
				if t.Group[v] == sn && d[t.Index[v]] < 0 {
					d[t.Index[v]] = du + 1
					queue = append(queue, v)
				}
			}
		}
		t.ldist[x] = d
	}
}

// gatewayDistances sets gdist[x][t] = min over global channels c from x's
// super node to t of ldist(x, tail c) + 1.
func (t *Tables) gatewayDistances() {
	g := t.G
	n, S := g.NumSwitches(), len(t.Members)
	t.gdist = make([][]int32, n)
	for x := range t.gdist {
		t.gdist[x] = make([]int32, S)
		for s := range t.gdist[x] {
			t.gdist[x][s] = -1
		}
		t.gdist[x][t.Group[x]] = 0
	}
	for c := 0; c < g.NumChannels(); c++ {
		u, v := g.Tail[c], g.Head[c]
		su, sv := t.Group[u], t.Group[v]
		if su == sv {
			continue
		}
		for _, x := range t.Members[su] {
			if d := t.ldist[x][t.Index[u]]; d >= 0 && (t.gdist[x][sv] < 0 || d+1 < t.gdist[x][sv]) {
				t.gdist[x][sv] = d + 1
			}
		}
	}
}

// fill computes the entries from the distances: every minimal port.
func (t *Tables) fill() {
	g := t.G
	n, S := g.NumSwitches(), len(t.Members)
	t.t1 = make([][]Entry, n)
	t.t2 = make([][]Entry, n)
	for x := int32(0); int(x) < n; x++ {
		sn := t.Group[x]
		t.t1[x] = make([]Entry, len(t.Members[sn]))
		for i := range t.Members[sn] {
			dx := t.ldist[x][i]
			if dx <= 0 {
				continue
			}
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				v := g.Head[c]
				if t.Group[v] == sn && t.ldist[v][i] == dx-1 {
					t.t1[x][i] = append(t.t1[x][i], c)
				}
			}
		}
		t.t2[x] = make([]Entry, S)
		for s := 0; s < S; s++ {
			dx := t.gdist[x][s]
			if s == sn || dx <= 0 {
				continue
			}
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				v := g.Head[c]
				if (dx == 1 && t.Group[v] == s) || (dx > 1 && t.Group[v] == sn && t.gdist[v][s] == dx-1) {
					t.t2[x][s] = append(t.t2[x][s], c)
				}
			}
		}
	}
}
