package routing

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// UpDn is Up*/Down* routing ("updn") after Schroeder et al., "Autonet: a
// High-speed, Self-configuring Local Area Network Using Point-to-point
// Links", IEEE JSAC 9(8), 1991, §6.6.1, as OpenSM's updn engine applies it
// (doc/current-routing.txt, "UPDN Routing Algorithm"):
//
//  1. Root: Options.Root when given (a switch GUID or description, or a CA
//     standing for its switch; see ResolveSwitch; an unknown name is an
//     error wrapping ErrUnknownSwitch). Otherwise the switch of lowest
//     eccentricity in the switch graph, ties to the lowest node GUID (a
//     centre, where OpenSM guesses roots from hop histograms).
//  2. Ranks: BFS distance from the root. A channel goes up when it leads to
//     a lower rank, or to an equal rank and a lower node GUID (OpenSM's
//     tie rule). This orients every cable and admits no up cycle.
//  3. Routes: zero or more up channels, then zero or more down channels.
//     For each destination switch the engine computes, in O(S+C), the
//     shortest such route a destination-based table can follow: a switch
//     that reaches the destination descending only always descends
//     (upDown.dist explains why), the others climb towards the nearest
//     such switch. Ports are then chosen and balanced exactly as MinHop
//     does (fewest LIDs at the switch, LMC groups spread over neighbours).
//
// Legal up*/down* routes cannot close a cycle of channel dependencies, so
// the routing is deadlock-free with one VL and SL 0 (DeadlockFree reports
// true). A disconnected switch graph is routed per component, each with
// its own root (Options.Root picks the root of its own component only).
// Any topology is accepted; paths may be longer than shortest.
//
// Cost: the root search runs one BFS per switch, O(S·(S+C)) at worst,
// pruned as soon as a BFS exceeds the best eccentricity found; the rest is
// MinHop's cost. Results do not depend on Options.Workers.
type UpDn struct{}

func init() {
	Register("updn", func() Engine { return UpDn{} })
}

// Name returns "updn".
func (UpDn) Name() string { return "updn" }

// DeadlockFree returns true.
func (UpDn) DeadlockFree() bool { return true }

// Route computes the Up*/Down* routing of g. It takes no parameters.
func (e UpDn) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	roots, err := e.Roots(ctx, g, opt)
	if err != nil {
		return nil, err
	}
	ud := updnOrientation(g, roots)
	r := lft.New(g, "updn")
	if err := routeBalanced(ctx, g, r, ud.up, func(dst int32, row []uint16, queue []int32) {
		ud.dist(g, dst, row, queue)
	}, opt); err != nil {
		return nil, err
	}
	return r, nil
}

// Roots returns the root switch of every component of the switch graph, in
// order of the components' lowest switch index, as Route chooses them.
func (UpDn) Roots(ctx context.Context, g *fabric.Graph, opt Options) ([]int32, error) {
	S := g.NumSwitches()
	comp := g.SwitchComponents()
	root := make([]int32, S) // by component label
	for i := range root {
		root[i] = -1
	}
	if opt.Root != "" {
		s, err := ResolveSwitch(g, opt.Root)
		if err != nil {
			return nil, fmt.Errorf("updn: root: %w", err)
		}
		root[comp[s]] = s
	}
	if err := centres(ctx, g, comp, root, opt.Workers); err != nil {
		return nil, err
	}
	var out []int32
	for s := int32(0); int(s) < S; s++ {
		if comp[s] == s {
			out = append(out, root[s])
		}
	}
	return out, nil
}

// centres fills root[c] for every component label c whose root is -1 with
// the switch of lowest eccentricity (ties: lowest node GUID). Each BFS stops
// once it goes deeper than the best eccentricity its component has seen, so
// only switches that can still tie are searched completely; the outcome
// does not depend on the order or the number of workers.
func centres(ctx context.Context, g *fabric.Graph, comp, root []int32, workers int) error {
	S := g.NumSwitches()
	best := make([]atomic.Int32, S) // by component label
	for i := range best {
		best[i].Store(int32(S))
	}
	ecc := make([]int32, S)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	marks := make([][]uint32, workers)
	queues := make([][]int32, workers)
	stamps := make([]uint32, workers)
	err := parallel.For(ctx, S, workers, func(w, i int) error {
		s := int32(i)
		if root[comp[s]] >= 0 {
			ecc[s] = -1
			return nil
		}
		if marks[w] == nil {
			marks[w], queues[w] = make([]uint32, S), make([]int32, S)
		}
		stamps[w]++
		b := &best[comp[s]]
		e := boundedEccentricity(g, s, b.Load(), marks[w], stamps[w], queues[w])
		ecc[s] = e
		for cur := b.Load(); e < cur && !b.CompareAndSwap(cur, e); cur = b.Load() {
		}
		return nil
	})
	if err != nil {
		return err
	}
	for s := int32(0); int(s) < S; s++ {
		c := comp[s]
		if ecc[s] < 0 || ecc[s] != best[c].Load() {
			continue
		}
		if r := root[c]; r < 0 || g.F.Nodes[g.Switches[s]].GUID < g.F.Nodes[g.Switches[r]].GUID {
			root[c] = s
		}
	}
	return nil
}

// boundedEccentricity returns the eccentricity of switch s, or bound+1 as
// soon as the BFS passes depth bound. mark[v] == stamp marks visited
// switches (the caller changes stamp per call, so no reset is needed).
func boundedEccentricity(g *fabric.Graph, s, bound int32, mark []uint32, stamp uint32, queue []int32) int32 {
	mark[s] = stamp
	queue[0] = s
	h, t := 0, 1
	depth := int32(0)
	for {
		end := t
		for ; h < end; h++ {
			u := queue[h]
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if v := g.Head[c]; mark[v] != stamp {
					mark[v] = stamp
					queue[t] = v
					t++
				}
			}
		}
		if t == end {
			return depth
		}
		depth++
		if depth > bound {
			return bound + 1
		}
	}
}

// updnOrientation ranks the switches by BFS distance from their component's
// root and orients every channel: up towards lower (rank, node GUID).
func updnOrientation(g *fabric.Graph, roots []int32) *upDown {
	S := g.NumSwitches()
	rank := make([]int32, S)
	for i := range rank {
		rank[i] = -1
	}
	queue := make([]int32, 0, S)
	for _, r := range roots {
		rank[r] = 0
		queue = append(queue, r)
	}
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; rank[v] < 0 {
				rank[v] = rank[u] + 1
				queue = append(queue, v)
			}
		}
	}
	guid := func(s int32) uint64 { return g.F.Nodes[g.Switches[s]].GUID }
	less := func(a, b int32) int {
		if c := cmp.Compare(rank[a], rank[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(guid(a), guid(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // only with duplicate GUIDs (invalid fabrics)
	}
	ud := &upDown{up: make([]bool, g.NumChannels()), order: make([]int32, S)}
	for c := range ud.up {
		ud.up[c] = less(g.Head[c], g.Tail[c]) < 0
	}
	for i := range ud.order {
		ud.order[i] = int32(i)
	}
	slices.SortFunc(ud.order, less)
	return ud
}
