package routing

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
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
		sum int64
		tw  *treeWalker
	}
	comp := g.SwitchComponents()
	parts := make([]part, parallel.Workers(len(dests), workers))
	for w := range parts {
		parts[w] = part{m: Metrics{EFI: make([]int64, g.NumChannels()), VLPairs: make([]int64, lft.MaxVLs+1), MinHops: 1 << 30},
			tw: newTreeWalker(g, r, comp)}
	}
	err := parallel.For(context.Background(), len(dests), workers, func(w, i int) error {
		p := &parts[w]
		return p.tw.measure(dests[i], &p.m, &p.sum)
	})
	if err != nil {
		return nil, err
	}
	m := &Metrics{EFI: make([]int64, g.NumChannels()), VLPairs: make([]int64, lft.MaxVLs+1), MinHops: 1 << 30,
		NumVLs: r.NumVLs, LFTEntries: r.Entries()}
	var sum int64
	for _, p := range parts {
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
	g    *fabric.Graph
	r    *lft.Routing
	w    *lft.Walker
	load []int64
	comp []int32
}

func newTreeWalker(g *fabric.Graph, r *lft.Routing, comp []int32) *treeWalker {
	return &treeWalker{g: g, r: r, w: lft.NewWalker(g, r), load: make([]int64, g.NumSwitches()), comp: comp}
}

func (tw *treeWalker) measure(d int, m *Metrics, sum *int64) error {
	g, r, w := tw.g, tw.r, tw.w
	dsw, _, term := lft.Target(g, d)
	w.Dest(d)
	clear(tw.load)
	for u := int32(0); int(u) < g.NumSwitches(); u++ {
		n := int64(g.TermOff[u+1] - g.TermOff[u])
		if u == dsw {
			n--
		}
		if n <= 0 || tw.comp[u] != tw.comp[dsw] {
			continue
		}
		if why, at := w.Resolve(u); why != lft.Delivered {
			return fmt.Errorf("routing: metrics: LID %d from switch %q: %s at switch %q (verify the routing first)",
				d, g.SwitchName(u), why, g.SwitchName(at))
		}
		tw.load[u] = n
		h := int(w.Hops(u))
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
	w.Accumulate(tw.load, m.EFI)
	return nil
}
