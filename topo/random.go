package topo

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// randomStream is the second word of the PCG state Random seeds; the first
// is the caller's seed.
const randomStream = 0x6e7565736d2d7267 // "nuesm-rg"

// Random builds a connected random irregular fabric: a random (nearly)
// regular graph on switches vertices with inter-switch degree degree, and
// hosts per switch. It is the random regular graph of Jellyfish (Singla,
// Hong, Popa, Godfrey, "Jellyfish: Networking data centers randomly", NSDI
// 2012, Section 3): join random non-adjacent pairs of switches with free
// ports; when none is left, a switch u with two or more free ports takes a
// random cable (x, y) with x, y not adjacent to u and replaces it by (u, x)
// and (u, y), and two switches u, v with one free port each replace (x, y)
// by (u, x) and (v, y). Finally, while the graph is disconnected, a random
// cable (a, b) of the component of switch 0 and a random cable (c, d) of
// another component are replaced by (a, c) and (b, d), which keeps every
// degree and merges the two components.
//
// Choices: no self-loops and no parallel cables (the graph is simple, as in
// Jellyfish; a parallel cable adds no path diversity to hop-based routing).
// Every switch gets exactly degree cables, except that when switches·degree
// is odd the last switch gets degree−1, and in the rare case that no swap
// can place a switch's last free ports they stay free. Degree 1 is accepted
// only for two switches (a perfect matching of more cannot be connected).
//
// Randomness comes only from a PCG generator seeded with (seed,
// randomStream), so a seed always yields the same fabric. Switches are
// "sw0", "sw1", …; cables are created in increasing (u, v) order on the
// next free ports after the hosts. Radix = degree + hosts; Coords, Group
// and Bisection are not set. Expected time O(switches·degree) plus the
// repair steps, each O(cables).
func Random(switches, degree, hosts int, seed uint64) (*Topology, error) {
	const kind = "random"
	if switches < 2 {
		return nil, paramError(kind, "%d switches, expected >= 2", switches)
	}
	if degree < 1 || degree > switches-1 {
		return nil, paramError(kind, "degree %d for %d switches, expected 1..%d (no parallel cables)", degree, switches, switches-1)
	}
	if degree == 1 && switches > 2 {
		return nil, paramError(kind, "degree 1 cannot connect %d switches, expected >= 2", switches)
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	if degree+hosts > fabric.MaxPorts {
		return nil, paramError(kind, "degree %d and %d hosts need %d ports, expected at most %d", degree, hosts, degree+hosts, fabric.MaxPorts)
	}
	if err := checkLIDBudget(kind, switches, mulCap(switches, hosts)); err != nil {
		return nil, err
	}
	g := &randomGraph{
		rng:   rand.New(rand.NewPCG(seed, randomStream)),
		want:  make([]int, switches),
		deg:   make([]int, switches),
		index: make(map[uint64]int, switches*degree/2),
	}
	for u := range g.want {
		g.want[u] = degree
	}
	if switches*degree%2 == 1 {
		g.want[switches-1]--
	}
	g.pairFree()
	g.fillByRewiring()
	if err := g.connect(); err != nil {
		return nil, paramError(kind, "%v (switches=%d degree=%d seed=%d)", err, switches, degree, seed)
	}

	s := newSpec(kind, fmt.Sprintf("switches=%d degree=%d hosts=%d seed=%d", switches, degree, hosts, seed), degree+hosts)
	for u := range switches {
		s.addSwitch(fmt.Sprintf("sw%d", u), hosts)
	}
	edges := slices.Clone(g.edges)
	slices.SortFunc(edges, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	s.cables = make([]cable, 0, len(edges))
	for _, e := range edges {
		s.link(e[0], e[1])
	}
	return s.build()
}

// randomGraph is the simple graph Random grows. Edges are stored with the
// smaller end first; index maps an edge key to its position in edges (it is
// never iterated, so map order cannot leak into the result).
type randomGraph struct {
	rng   *rand.Rand
	want  []int
	deg   []int
	edges [][2]int
	index map[uint64]int
}

func randomKey(u, v int) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(v)
}

func (g *randomGraph) free(u int) int    { return g.want[u] - g.deg[u] }
func (g *randomGraph) has(u, v int) bool { _, ok := g.index[randomKey(u, v)]; return ok }

func (g *randomGraph) add(u, v int) {
	if u > v {
		u, v = v, u
	}
	g.index[randomKey(u, v)] = len(g.edges)
	g.edges = append(g.edges, [2]int{u, v})
	g.deg[u]++
	g.deg[v]++
}

// remove deletes edge i (the last edge takes its place) and returns it.
func (g *randomGraph) remove(i int) (u, v int) {
	e := g.edges[i]
	last := len(g.edges) - 1
	g.edges[i] = g.edges[last]
	g.index[randomKey(g.edges[i][0], g.edges[i][1])] = i
	g.edges = g.edges[:last]
	delete(g.index, randomKey(e[0], e[1]))
	g.deg[e[0]]--
	g.deg[e[1]]--
	return e[0], e[1]
}

// pairFree joins random non-adjacent pairs of switches with free ports
// until no such pair is left.
func (g *randomGraph) pairFree() {
	var open []int
	pos := make([]int, len(g.want))
	for u := range g.want {
		if g.free(u) > 0 {
			pos[u] = len(open)
			open = append(open, u)
		}
	}
	drop := func(u int) {
		i, last := pos[u], open[len(open)-1]
		open[i], pos[last] = last, i
		open = open[:len(open)-1]
	}
	fails := 0
	for len(open) >= 2 {
		i := g.rng.IntN(len(open))
		j := g.rng.IntN(len(open) - 1)
		if j >= i {
			j++
		}
		u, v := open[i], open[j]
		if g.has(u, v) {
			if fails++; fails < 4*len(open)+16 {
				continue
			}
			// Most open pairs are adjacent: choose uniformly among the
			// others, if any.
			count := 0
			for a := range open {
				for b := a + 1; b < len(open); b++ {
					if !g.has(open[a], open[b]) {
						count++
					}
				}
			}
			if count == 0 {
				return
			}
			r := g.rng.IntN(count)
		find:
			for a := range open {
				for b := a + 1; b < len(open); b++ {
					if !g.has(open[a], open[b]) {
						if r == 0 {
							u, v = open[a], open[b]
							break find
						}
						r--
					}
				}
			}
		}
		fails = 0
		g.add(u, v)
		if g.free(u) == 0 {
			drop(u)
		}
		if g.free(v) == 0 {
			drop(v)
		}
	}
}

// findEdge returns the index of a random edge satisfying ok, or -1: a few
// random probes, then a scan of all edges from a random start.
func (g *randomGraph) findEdge(ok func(x, y int) bool) int {
	m := len(g.edges)
	if m == 0 {
		return -1
	}
	for range 64 {
		if i := g.rng.IntN(m); ok(g.edges[i][0], g.edges[i][1]) {
			return i
		}
	}
	start := g.rng.IntN(m)
	for d := range m {
		i := (start + d) % m
		if ok(g.edges[i][0], g.edges[i][1]) {
			return i
		}
	}
	return -1
}

// fillByRewiring places the free ports pairFree could not: by splitting a
// cable (x, y) into (u, x) and (u, y) for a switch with two free ports, or
// into (u, x) and (v, y) for two switches with one free port each.
func (g *randomGraph) fillByRewiring() {
	for u := range g.want {
		for g.free(u) >= 2 {
			i := g.findEdge(func(x, y int) bool {
				return x != u && y != u && !g.has(u, x) && !g.has(u, y)
			})
			if i < 0 {
				break
			}
			x, y := g.remove(i)
			g.add(u, x)
			g.add(u, y)
		}
	}
	for u := range g.want {
		for v := u + 1; v < len(g.want) && g.free(u) > 0; v++ {
			if g.free(v) == 0 {
				continue
			}
			if !g.has(u, v) {
				g.add(u, v)
				continue
			}
			i := g.findEdge(func(x, y int) bool {
				if x == u || x == v || y == u || y == v {
					return false
				}
				return (!g.has(u, x) && !g.has(v, y)) || (!g.has(u, y) && !g.has(v, x))
			})
			if i < 0 {
				continue
			}
			x, y := g.remove(i)
			if g.has(u, x) || g.has(v, y) {
				x, y = y, x
			}
			g.add(u, x)
			g.add(v, y)
		}
	}
}

// connect merges the components of the graph by degree-preserving swaps.
func (g *randomGraph) connect() error {
	n := len(g.want)
	comp := make([]int, n)
	adjOff := make([]int, n+1)
	adj := make([]int, 0)
	stack := make([]int, 0, n)
	for {
		// CSR adjacency of the current edges, then components by DFS in
		// switch order (component 0 holds switch 0).
		clear(adjOff)
		for _, e := range g.edges {
			adjOff[e[0]+1]++
			adjOff[e[1]+1]++
		}
		for u := range n {
			adjOff[u+1] += adjOff[u]
		}
		adj = slices.Grow(adj[:0], 2*len(g.edges))[:2*len(g.edges)]
		fill := slices.Clone(adjOff[:n])
		for _, e := range g.edges {
			adj[fill[e[0]]], adj[fill[e[1]]] = e[1], e[0]
			fill[e[0]]++
			fill[e[1]]++
		}
		for u := range comp {
			comp[u] = -1
		}
		nc := 0
		for r := range n {
			if comp[r] >= 0 {
				continue
			}
			comp[r] = nc
			stack = append(stack[:0], r)
			for len(stack) > 0 {
				u := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, v := range adj[adjOff[u]:adjOff[u+1]] {
					if comp[v] < 0 {
						comp[v] = nc
						stack = append(stack, v)
					}
				}
			}
			nc++
		}
		if nc == 1 {
			return nil
		}
		i := g.findEdge(func(x, _ int) bool { return comp[x] == 0 })
		j := g.findEdge(func(x, _ int) bool { return comp[x] == 1 })
		if i < 0 || j < 0 {
			return fmt.Errorf("cannot connect the switches: a component has no cable")
		}
		if i < j { // remove the later index first so the earlier stays valid
			i, j = j, i
		}
		a, b := g.remove(i)
		c, d := g.remove(j)
		g.add(a, c)
		g.add(b, d)
	}
}

func init() {
	register(Generator{
		Kind:    "random",
		Short:   "connected random (nearly) regular switch graph, Jellyfish-style; deterministic by seed",
		Example: "--switches 32 --degree 4 --hosts 2 --seed 7",
		Params: []Param{
			{"switches", "32", "number of switches"},
			{"degree", "4", "cables per switch to other switches"},
			{"hosts", "1", "hosts per switch"},
			{"seed", "1", "random seed"},
		},
		Build: func(v Values) (*Topology, error) {
			n, d, h, seed := v.Int("switches"), v.Int("degree"), v.Int("hosts"), v.Uint64("seed")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Random(n, d, h, seed)
		},
	})
}
