package routing

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Metrics describe a routing's paths between terminals (CA and router
// ports): hop counts between their switches, the edge forwarding index (EFI:
// paths per channel) and VL use.
type Metrics struct {
	Pairs      int64   // (source port, destination LID) pairs measured
	MinHops    int     // switch-to-switch hops
	MaxHops    int     //
	AvgHops    float64 //
	EFI        []int64 // per channel: paths through it
	MaxEFI     int64
	AvgEFI     float64 // mean over channels
	VLPairs    []int64 // paths per VL (by the VL they are injected on)
	NumVLs     int     // what the routing claims
	LFTEntries int     // LFT entries holding a route
}

// Measure computes the metrics of a routing that delivers every connected
// pair (run cdg.Verify first; undelivered pairs make Measure fail). Pairs
// the fabric disconnects are skipped. It spreads destinations over workers
// (0 = GOMAXPROCS); the result does not depend on their number.
func Measure(g *fabric.Graph, r *lft.Routing, workers int) (*Metrics, error) {
	if err := r.CheckShape(g); err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var dests []int
	for _, t := range g.Terms {
		if t.Switch < 0 || t.LID == 0 {
			continue
		}
		for l := 0; l < 1<<t.LMC; l++ {
			dests = append(dests, int(t.LID)+l)
		}
	}
	type part struct {
		m   Metrics
		err error
		sum int64
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			p := &parts[w]
			p.m = Metrics{EFI: make([]int64, g.NumChannels()), VLPairs: make([]int64, lft.MaxVLs+1), MinHops: 1 << 30}
			tw := newTreeWalker(g, r)
			for i := w; i < len(dests); i += workers {
				if err := tw.measure(dests[i], &p.m, &p.sum); err != nil {
					p.err = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	m := &Metrics{EFI: make([]int64, g.NumChannels()), VLPairs: make([]int64, lft.MaxVLs+1), MinHops: 1 << 30,
		NumVLs: r.NumVLs, LFTEntries: r.Entries()}
	var sum int64
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
		m.Pairs += p.m.Pairs
		m.MinHops = min(m.MinHops, p.m.MinHops)
		m.MaxHops = max(m.MaxHops, p.m.MaxHops)
		sum += p.sum
		for c, v := range p.m.EFI {
			m.EFI[c] += v
		}
		for vl, v := range p.m.VLPairs {
			m.VLPairs[vl] += v
		}
	}
	if m.Pairs == 0 {
		m.MinHops = 0
	} else {
		m.AvgHops = float64(sum) / float64(m.Pairs)
	}
	var tot int64
	for _, v := range m.EFI {
		m.MaxEFI = max(m.MaxEFI, v)
		tot += v
	}
	if len(m.EFI) > 0 {
		m.AvgEFI = float64(tot) / float64(len(m.EFI))
	}
	for len(m.VLPairs) > 1 && m.VLPairs[len(m.VLPairs)-1] == 0 {
		m.VLPairs = m.VLPairs[:len(m.VLPairs)-1]
	}
	return m, nil
}

// treeWalker measures one destination at a time: the LFT column of a
// destination is a forest of next hops; loads accumulate from the leaves.
type treeWalker struct {
	g     *fabric.Graph
	r     *lft.Routing
	hops  []int32 // per switch: hops to the destination switch, -1 unknown
	load  []int64
	order [][]int32 // switches by hop count
	stack []int32
	comp  []int32
}

func newTreeWalker(g *fabric.Graph, r *lft.Routing) *treeWalker {
	S := g.NumSwitches()
	tw := &treeWalker{g: g, r: r, hops: make([]int32, S), load: make([]int64, S), comp: make([]int32, S)}
	for i := range tw.comp {
		tw.comp[i] = -1
	}
	dist, q := make([]int32, S), make([]int32, S)
	for s := int32(0); int(s) < S; s++ {
		if tw.comp[s] < 0 {
			g.BFS(s, dist, q)
			for t, d := range dist {
				if d >= 0 {
					tw.comp[t] = s
				}
			}
		}
	}
	return tw
}

func (tw *treeWalker) measure(d int, m *Metrics, sum *int64) error {
	g, r := tw.g, tw.r
	_, term := g.Owner(d)
	dsw := g.Terms[term].Switch
	S := g.NumSwitches()
	for i := range tw.hops {
		tw.hops[i] = -1
		tw.load[i] = 0
	}
	for i := range tw.order {
		tw.order[i] = tw.order[i][:0]
	}
	tw.hops[dsw] = 0
	for u := int32(0); int(u) < S; u++ {
		n := int64(g.TermOff[u+1] - g.TermOff[u])
		if u == dsw {
			n--
		}
		if n <= 0 || tw.comp[u] != tw.comp[dsw] {
			continue
		}
		tw.load[u] = n
		if tw.hops[u] >= 0 {
			continue
		}
		// Follow next hops until a switch of known distance.
		tw.stack = tw.stack[:0]
		x := u
		for tw.hops[x] < 0 {
			tw.stack = append(tw.stack, x)
			if len(tw.stack) > S {
				return fmt.Errorf("routing: metrics: forwarding loop towards LID %d (verify the routing first)", d)
			}
			c := g.ChannelAt(x, r.Port(x, d))
			if c < 0 {
				return fmt.Errorf("routing: metrics: switch %q has no route to LID %d (verify the routing first)", g.SwitchName(x), d)
			}
			x = g.Head[c]
		}
		h := tw.hops[x]
		for i := len(tw.stack) - 1; i >= 0; i-- {
			h++
			tw.hops[tw.stack[i]] = h
		}
	}
	for u := int32(0); int(u) < S; u++ {
		if h := tw.hops[u]; h > 0 {
			for int(h) >= len(tw.order) {
				tw.order = append(tw.order, nil)
			}
			tw.order[h] = append(tw.order[h], u)
		}
	}
	for u := int32(0); int(u) < S; u++ {
		n := tw.load[u]
		if n == 0 {
			continue
		}
		h := int(tw.hops[u])
		m.Pairs += n
		*sum += n * int64(h)
		m.MinHops = min(m.MinHops, h)
		m.MaxHops = max(m.MaxHops, h)
		if !r.SL.PerDest() {
			// Source-dependent SLs: count each source port.
			for _, t := range g.TermsOf(u) {
				if t != term {
					sl := r.SL.Of(u, int(g.Terms[t].LID), d)
					m.VLPairs[r.SL2VL.InjectVL(sl)]++
				}
			}
		} else {
			m.VLPairs[r.SL2VL.InjectVL(r.SL.ByDest[d])] += n
		}
	}
	// Push loads towards the destination, farthest switches first.
	for h := len(tw.order) - 1; h >= 1; h-- {
		for _, u := range tw.order[h] {
			c := g.ChannelAt(u, r.Port(u, d))
			m.EFI[c] += tw.load[u]
			tw.load[g.Head[c]] += tw.load[u]
		}
	}
	return nil
}
