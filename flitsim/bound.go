package flitsim

import (
	"fmt"
	"io"
)

// Bound is the analytic throughput bound of the routing for a traffic
// pattern, from the channel loads along the LFT paths.
//
// What it bounds: Saturation is the highest offered load per active
// source at which no link exceeds its bandwidth when every source spreads
// its flits over its destinations as the pattern does on average. Below
// it the accepted throughput equals the offered one; it is also the
// accepted throughput's bound at and past saturation for patterns whose
// every source crosses the busiest link equally. For the others the
// accepted mean may exceed it past saturation: the sources that avoid
// the busiest link keep their full load, so the delivered traffic no
// longer has the pattern's proportions. Run calls such runs unstable
// (Result.Verdict), so a bound exceeded is never silent.
//
// The destination mix per pattern (Traffic.Pattern):
//   - uniform: every other node alike (never the source itself);
//     shift: the same over the whole exchange;
//   - permutation, bitrev, transpose: one destination; a node mapped to
//     itself does not send;
//   - hotspot: HotFraction of the messages, weighted by their classes'
//     sizes in flits, to HotNode, the rest uniform; past saturation the
//     sources keep their uniform share, so the mean exceeds the bound;
//   - neighbor, nextgroup, grouphotspot: the candidates alike;
//     grouplocal: the other nodes of the group alike;
//   - io: IORatio of the messages (weighted by flits) to the node's I/O
//     node, the rest uniform over the other compute nodes; the busiest
//     link is usually an I/O node's ejection link, which the compute
//     traffic never crosses, so past saturation the mean exceeds the
//     bound.
type Bound struct {
	// Loads[l] is the flits per cycle crossing link l when every active
	// source offers one flit per cycle, spread over its destinations as
	// the pattern does on average.
	Loads []float64 `json:"-"`
	// MaxLoad is the largest entry of Loads, on link MaxLink.
	MaxLoad  float64 `json:"max_load"`
	MaxLink  int32   `json:"max_link"`
	LinkName string  `json:"max_link_name"`
	// Saturation = 1/MaxLoad is the highest offered load per source, as a
	// fraction of the link bandwidth, that no link exceeds: the paths
	// cannot carry more from every source at once. Beyond it the mean
	// accepted throughput may still grow when some sources avoid the
	// busiest link, and even Result.AcceptedMin may when per-VL source
	// queues let a node's traffic to other destinations pass (the
	// delivered traffic then no longer follows the pattern).
	Saturation float64 `json:"saturation"`
	// CompletionCycles bounds the completion time of a finite pattern
	// (Shift, or Traffic.Messages > 0) from below: the flits the busiest
	// link must carry divided by its bandwidth. 0 for open-loop patterns.
	CompletionCycles float64 `json:"completion_cycles,omitempty"`
	// PhaseCycles (Shift only) is the completion time if the exchange ran
	// phase after phase, each phase as long as its busiest link needs:
	// the sum over phases of their maximum link load. Phases overlap in
	// the simulation, so this is an estimate, not a bound; it shows how
	// much of the gap to CompletionCycles the phases' own contention
	// explains. PhaseSaturation is the matching throughput.
	PhaseCycles     float64 `json:"phase_cycles,omitempty"`
	PhaseSaturation float64 `json:"phase_saturation,omitempty"`
}

// Bound computes the analytic saturation bound of the routing for traffic
// t (seed fixes the random permutation, as in Run). Shift counts as
// uniform traffic: over the whole exchange every ordered pair carries one
// message. Cost: O(N²) for the traffic matrix plus O(S·N·hops) for the
// path walks (S source switches, N nodes); memory O(N + links).
func (n *Network) Bound(t Traffic, seed uint64) (*Bound, error) {
	t = t.withDefaults()
	if t.Load == 0 {
		t.Load = 1 // the bound does not depend on it
	}
	if err := t.validate(n); err != nil {
		return nil, err
	}
	w, err := compile(n, t, seed)
	if err != nil {
		return nil, err
	}
	N := int32(n.NumNodes())
	b := &Bound{Loads: make([]float64, n.nLinks)}
	S := n.g.NumSwitches()
	bySw := make([][]int32, S)
	for i, s := range n.nodeSw {
		if w.active[i] {
			bySw[s] = append(bySw[s], int32(i))
		}
	}
	dem := make([]float64, N)
	for s := int32(0); int(s) < S; s++ {
		if len(bySw[s]) == 0 {
			continue
		}
		clear(dem)
		for _, src := range bySw[s] {
			b.Loads[n.nChan+src]++
			w.dist(src, func(d int32, f float64) { dem[d] += f })
		}
		for d := int32(0); d < N; d++ {
			if dem[d] == 0 {
				continue
			}
			x := s
			for {
				l, _ := n.outLink(x, n.nodeLID[d])
				b.Loads[l] += dem[d]
				if l >= n.nChan {
					break
				}
				x = n.lkDstSw[l]
			}
		}
	}
	for l, v := range b.Loads {
		if v > b.MaxLoad {
			b.MaxLoad, b.MaxLink = v, int32(l)
		}
	}
	b.LinkName = n.LinkName(b.MaxLink)
	b.Saturation = 1 / b.MaxLoad
	perSource := 0.0 // flits each source sends in a finite pattern
	switch {
	case t.Pattern == Shift:
		perSource = float64(N-1) * float64(w.classes[0].MessagePackets) * float64(n.cfg.PacketFlits)
	case t.Messages > 0:
		perSource = float64(t.Messages) * w.meanPackets(0) * float64(n.cfg.PacketFlits)
	}
	b.CompletionCycles = perSource * b.MaxLoad / n.cfg.LinkBandwidth
	if t.Pattern == Shift {
		msg := float64(w.classes[0].MessagePackets) * float64(n.cfg.PacketFlits) / n.cfg.LinkBandwidth
		b.PhaseCycles = float64(n.phaseLoads()) * msg
		b.PhaseSaturation = b.Saturation * b.CompletionCycles / b.PhaseCycles
	}
	return b, nil
}

// phaseLoads returns the sum over the shift phases s = 1..N-1 of the most
// paths (i -> i+s mod N) any link carries in phase s. O(N² · hops).
func (n *Network) phaseLoads() int64 {
	N := int32(n.NumNodes())
	cnt := make([]int32, n.nLinks)
	var used []int32
	var sum int64
	for s := int32(1); s < N; s++ {
		best := int32(0)
		bump := func(l int32) {
			if cnt[l] == 0 {
				used = append(used, l)
			}
			cnt[l]++
			best = max(best, cnt[l])
		}
		for i := int32(0); i < N; i++ {
			d := (i + s) % N
			bump(n.nChan + i)
			for x := n.nodeSw[i]; ; {
				l, _ := n.outLink(x, n.nodeLID[d])
				bump(l)
				if l >= n.nChan {
					break
				}
				x = n.lkDstSw[l]
			}
		}
		sum += int64(best)
		for _, l := range used {
			cnt[l] = 0
		}
		used = used[:0]
	}
	return sum
}

// WriteLines prints the bound beside result r (bw: the link bandwidth)
// and, when r's offered load is beyond it, how much of it r accepted and
// why the mean may exceed it.
func (b *Bound) WriteLines(w io.Writer, r *Result, bw float64) {
	fmt.Fprintf(w, "bound            saturation at %.4f of link bandwidth: the offered load at which %s reaches its bandwidth (%.3f flits/cycle per unit load)\n",
		b.Saturation, b.LinkName, b.MaxLoad)
	if b.CompletionCycles > 0 {
		fmt.Fprintf(w, "bound            completion at least %.0f cycles\n", b.CompletionCycles)
	}
	if r.Load == 0 || r.OfferedFraction <= b.Saturation {
		return
	}
	fmt.Fprintf(w, "note             offered load beyond the bound: accepted %.1f%% of the bound (mean), %.1f%% (least served source)",
		100*r.AcceptedFraction/b.Saturation, 100*r.AcceptedMin/bw/b.Saturation)
	if r.AcceptedFraction > b.Saturation {
		fmt.Fprint(w, "; the mean exceeds it because sources that avoid the busiest link keep their load past saturation")
	}
	fmt.Fprintln(w)
}
