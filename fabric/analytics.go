package fabric

import (
	"context"
	"sort"

	"github.com/nuesm/nuesm/internal/parallel"
)

// BFS fills dist with the hop distance (switch-to-switch cables) from switch
// src to every switch, -1 where unreachable. queue is scratch of length
// NumSwitches() (allocated when nil). O(S + C).
func (g *Graph) BFS(src int32, dist, queue []int32) {
	for i := range dist {
		dist[i] = -1
	}
	if queue == nil {
		queue = make([]int32, len(g.Switches))
	}
	dist[src] = 0
	queue[0] = src
	h, t := 0, 1
	for h < t {
		u := queue[h]
		h++
		du := dist[u] + 1
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			v := g.Head[c]
			if dist[v] < 0 {
				dist[v] = du
				queue[t] = v
				t++
			}
		}
	}
}

// SwitchComponents labels every switch with its connected component of
// the switch graph, named by the lowest switch index in it: two switches
// reach each other iff their labels are equal. O(S + C).
func (g *Graph) SwitchComponents() []int32 { return g.ComponentsWithin(nil) }

// ComponentsWithin labels every switch s with in(s) (every switch when in
// is nil) with its connected component in the switch graph cut down to
// those switches, named by the lowest switch index in it; the other
// switches get -1. O(S + C) plus a call of in per channel.
func (g *Graph) ComponentsWithin(in func(s int32) bool) []int32 {
	S := len(g.Switches)
	comp, queue := make([]int32, S), make([]int32, S)
	for i := range comp {
		comp[i] = -1
	}
	for s := int32(0); int(s) < S; s++ {
		if comp[s] >= 0 || (in != nil && !in(s)) {
			continue
		}
		comp[s] = s
		queue[0] = s
		h, t := 0, 1
		for h < t {
			u := queue[h]
			h++
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if v := g.Head[c]; comp[v] < 0 && (in == nil || in(v)) {
					comp[v] = s
					queue[t] = v
					t++
				}
			}
		}
	}
	return comp
}

// HopStats summarises hop distances in the switch graph.
type HopStats struct {
	Switches      int     // switches in the fabric
	CASwitches    int     // switches with at least one terminal
	Terminals     int     // terminals attached to switches
	Connected     bool    // every switch reaches every other switch
	Diameter      int     // longest shortest path between any two connected switches
	CADiameter    int     // longest shortest path between CA-bearing switches
	AvgSwitchHops float64 // mean hops over ordered pairs of distinct CA-bearing switches that reach each other
	AvgTermHops   float64 // mean switch-to-switch hops over ordered pairs of distinct terminals that reach each other
	Unreachable   int64   // ordered pairs of distinct terminals that cannot reach each other
}

// hopPart is one worker's share of Hops: sums and maxima over the BFS of
// its sources.
type hopPart struct {
	diam, caDiam          int
	swSum, swPairs        int64
	termSum, unreachTerms int64
	disconnected          bool
	dist, queue           []int32
}

// add counts the distances from switch s; tcount holds each switch's
// terminals.
func (p *hopPart) add(g *Graph, s int, tcount []int64) {
	S := len(tcount)
	if p.dist == nil {
		p.dist, p.queue = make([]int32, S), make([]int32, S)
	}
	g.BFS(int32(s), p.dist, p.queue)
	for t, d := range p.dist {
		if d < 0 {
			p.disconnected = true
			if tcount[s] > 0 && tcount[t] > 0 {
				p.unreachTerms += tcount[s] * tcount[t]
			}
			continue
		}
		p.diam = max(p.diam, int(d))
		if tcount[s] == 0 || tcount[t] == 0 {
			continue
		}
		p.caDiam = max(p.caDiam, int(d))
		if s != t {
			p.swSum += int64(d)
			p.swPairs++
		}
		p.termSum += int64(d) * tcount[s] * tcount[t]
	}
}

// Hops computes HopStats with one BFS per switch, spread over GOMAXPROCS
// workers (the result does not depend on their number). O(S·(S+C)).
func (g *Graph) Hops() HopStats {
	S := len(g.Switches)
	st := HopStats{Switches: S, Connected: true}
	if S == 0 {
		return st
	}
	tcount := make([]int64, S)
	for s := 0; s < S; s++ {
		tcount[s] = int64(g.TermOff[s+1] - g.TermOff[s])
		st.Terminals += int(tcount[s])
		if tcount[s] > 0 {
			st.CASwitches++
		}
	}
	parts := make([]hopPart, parallel.Workers(S, 0))
	_ = parallel.For(context.Background(), S, 0, func(w, s int) error {
		parts[w].add(g, s, tcount)
		return nil
	})
	var swSum, swPairs, termSum int64
	for _, p := range parts {
		st.Diameter = max(st.Diameter, p.diam)
		st.CADiameter = max(st.CADiameter, p.caDiam)
		swSum += p.swSum
		swPairs += p.swPairs
		termSum += p.termSum
		st.Unreachable += p.unreachTerms
		if p.disconnected {
			st.Connected = false
		}
	}
	if swPairs > 0 {
		st.AvgSwitchHops = float64(swSum) / float64(swPairs)
	}
	T := int64(st.Terminals)
	if pairs := T*(T-1) - st.Unreachable; pairs > 0 {
		st.AvgTermHops = float64(termSum) / float64(pairs)
	}
	return st
}

// LinkClass counts cables of one kind, width and speed.
type LinkClass struct {
	Ends  string // "switch-switch", "switch-CA", "switch-router", "CA-CA", …
	Width Width
	Speed Speed
	Count int
}

// LinkCounts counts cables by the kinds of their ends and by width and
// speed. When the two ends disagree the lower width/speed counts (that is
// what the cable carries). Sorted by ends, width, speed.
func (f *Fabric) LinkCounts() []LinkClass {
	type key struct {
		ends string
		w    Width
		s    Speed
	}
	m := map[key]int{}
	for _, l := range f.Links() {
		a, b := f.Port(l.A), f.Port(l.B)
		ka, kb := f.Nodes[l.A.Node].Kind, f.Nodes[l.B.Node].Kind
		if ka > kb {
			ka, kb = kb, ka
		}
		k := key{endName(ka) + "-" + endName(kb), min(a.Width, b.Width), min(a.Speed, b.Speed)}
		m[k]++
	}
	out := make([]LinkClass, 0, len(m))
	for k, n := range m {
		out = append(out, LinkClass{k.ends, k.w, k.s, n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Ends != b.Ends {
			return a.Ends > b.Ends // "switch-…" first
		}
		if a.Width != b.Width {
			return a.Width < b.Width
		}
		return a.Speed < b.Speed
	})
	return out
}

func endName(k NodeKind) string {
	switch k {
	case Switch:
		return "switch"
	case CA:
		return "CA"
	case Router:
		return "router"
	}
	return "?"
}

// Components returns the connected components of the whole fabric (all
// node kinds, all cables) as node-id lists, largest first (ties: lowest
// node id first). Each list is in increasing node id order.
func (f *Fabric) Components() [][]NodeID {
	comp := make([]int32, len(f.Nodes))
	for i := range comp {
		comp[i] = -1
	}
	var out [][]NodeID
	var stack []NodeID
	for i := range f.Nodes {
		if comp[i] >= 0 {
			continue
		}
		c := int32(len(out))
		var members []NodeID
		comp[i] = c
		stack = append(stack[:0], NodeID(i))
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			members = append(members, u)
			for _, p := range f.Nodes[u].Ports {
				if v := p.Peer.Node; v >= 0 && comp[v] < 0 {
					comp[v] = c
					stack = append(stack, v)
				}
			}
		}
		sort.Slice(members, func(a, b int) bool { return members[a] < members[b] })
		out = append(out, members)
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}
