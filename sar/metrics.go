package sar

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// JobMetrics is the effective EFI of one job: the largest number of the
// job's own (source terminal, destination LID) paths on one channel.
type JobMetrics struct {
	ID           string
	Terminals    int
	Paths        int64 // intra-job paths measured
	EffectiveEFI int64
}

// Metrics are SAR's measures of a routing for a set of running jobs.
type Metrics struct {
	Jobs []JobMetrics
	// EffectiveEFI is the largest number of intra-job paths (of all jobs
	// together) on one channel.
	EffectiveEFI int64
	// MaxJobEFI is the largest per-job effective EFI.
	MaxJobEFI int64
	// Cables counts the switch-to-switch cables; DarkCables those no
	// intra-job path uses in either direction.
	Cables, DarkCables int
	// DarkFiber is DarkCables / Cables in percent.
	DarkFiber float64
}

// Measure computes SAR's metrics of routing r for jobs (terminal indices
// into g.Terms). Paths between terminals of different jobs, or from
// terminals outside jobs, do not count. Every intra-job pair must be
// routed (verify the routing first).
func Measure(g *fabric.Graph, r *lft.Routing, jobs []routing.Job) (*Metrics, error) {
	if err := r.CheckShape(g); err != nil {
		return nil, err
	}
	S, C := g.NumSwitches(), g.NumChannels()
	of := routing.JobOf(jobs, len(g.Terms))
	total := make([]int64, C)
	load := make([]int64, C)
	src := make([]int64, S)
	carry := make([]int64, S)
	hops := make([]int32, S)
	var order []int32
	m := &Metrics{}
	for j, job := range jobs {
		jm := JobMetrics{ID: job.ID}
		for i := range load {
			load[i] = 0
		}
		for i := range src {
			src[i] = 0
		}
		var mine []int32
		for _, t := range job.Terms {
			if t < 0 || int(t) >= len(g.Terms) || of[t] != int32(j) || g.Terms[t].Switch < 0 {
				continue
			}
			mine = append(mine, t)
			src[g.Terms[t].Switch]++
		}
		jm.Terminals = len(mine)
		for _, t := range mine {
			tm := &g.Terms[t]
			for l := 0; l < 1<<tm.LMC; l++ {
				d := int(tm.LID) + l
				// Load of this destination: the job's terminals on each
				// switch, pushed along the forwarding tree.
				order = order[:0]
				for v := int32(0); int(v) < S; v++ {
					carry[v] = src[v]
					hops[v] = -1
				}
				carry[tm.Switch]-- // the destination port itself sends nothing to itself
				hops[tm.Switch] = 0
				for v := int32(0); int(v) < S; v++ {
					if src[v] == 0 || hops[v] >= 0 {
						continue
					}
					if err := walkHops(g, r, d, v, hops); err != nil {
						return nil, err
					}
				}
				for v := int32(0); int(v) < S; v++ {
					if hops[v] > 0 {
						order = append(order, v)
					}
				}
				// farthest first
				sortByHops(order, hops)
				for _, v := range order {
					if carry[v] == 0 {
						continue
					}
					c := g.ChannelAt(v, r.Port(v, d))
					load[c] += carry[v]
					carry[g.Head[c]] += carry[v]
				}
				jm.Paths += int64(len(mine) - 1)
			}
		}
		for c, x := range load {
			total[c] += x
			jm.EffectiveEFI = max(jm.EffectiveEFI, x)
		}
		m.MaxJobEFI = max(m.MaxJobEFI, jm.EffectiveEFI)
		m.Jobs = append(m.Jobs, jm)
	}
	for c, x := range total {
		m.EffectiveEFI = max(m.EffectiveEFI, x)
		if int32(c) < g.Rev[c] {
			m.Cables++
			if x == 0 && total[g.Rev[c]] == 0 {
				m.DarkCables++
			}
		}
	}
	if m.Cables > 0 {
		m.DarkFiber = 100 * float64(m.DarkCables) / float64(m.Cables)
	}
	return m, nil
}

// walkHops fills hops[x] (switch hops to the destination LID d) for the
// switches on v's path, stopping at a switch of known distance.
func walkHops(g *fabric.Graph, r *lft.Routing, d int, v int32, hops []int32) error {
	var path []int32
	x := v
	for hops[x] < 0 {
		path = append(path, x)
		if len(path) > len(hops) {
			return fmt.Errorf("sar: forwarding loop towards LID %d (verify the routing first)", d)
		}
		c := g.ChannelAt(x, r.Port(x, d))
		if c < 0 {
			return fmt.Errorf("sar: switch %q has no route to LID %d (verify the routing first)", g.SwitchName(x), d)
		}
		x = g.Head[c]
	}
	h := hops[x]
	for i := len(path) - 1; i >= 0; i-- {
		h++
		hops[path[i]] = h
	}
	return nil
}

// sortByHops orders switches by decreasing hop count (counting sort).
func sortByHops(order []int32, hops []int32) {
	maxH := int32(0)
	for _, v := range order {
		maxH = max(maxH, hops[v])
	}
	buckets := make([][]int32, maxH+1)
	for _, v := range order {
		buckets[hops[v]] = append(buckets[hops[v]], v)
	}
	order = order[:0]
	for h := maxH; h >= 0; h-- {
		order = append(order, buckets[h]...)
	}
}
