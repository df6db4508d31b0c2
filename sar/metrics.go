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
	w := lft.NewWalker(g, r)
	m := &Metrics{}
	for j, job := range jobs {
		jm := JobMetrics{ID: job.ID}
		clear(load)
		clear(src)
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
				// Load of this destination: the job's terminals on each
				// switch, pushed along the forwarding tree.
				if err := jobDest(w, int(tm.LID)+l, src, carry, load); err != nil {
					return nil, err
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

// jobDest adds to load (per channel) the paths towards LID d from src[x]
// job terminals on each switch x, the destination port itself excepted.
func jobDest(w *lft.Walker, d int, src, carry, load []int64) error {
	dsw := w.Dest(d)
	copy(carry, src)
	carry[dsw]-- // the destination port itself sends nothing to itself
	for v := int32(0); int(v) < len(src); v++ {
		if src[v] == 0 {
			continue
		}
		if why, at := w.Resolve(v); why != lft.Delivered {
			g := w.Graph()
			return fmt.Errorf("sar: LID %d from switch %q: %s at switch %q (verify the routing first)", d, g.SwitchName(v), why, g.SwitchName(at))
		}
	}
	w.Accumulate(carry, load)
	return nil
}

// Bound is a lower bound on the effective EFI (all jobs together) of any
// destination-based routing of g for jobs: at a switch v with a of a
// job's s terminals, the a·(s−a) paths to the job's other terminals leave
// v on v's channels, and the a paths towards one destination take the
// same channel (one table entry per LID). So some channel carries a job's
// a·⌈(s−a)/deg v⌉ paths, and all jobs together ⌈Σ a·(s−a) / deg v⌉. It
// assumes LMC 0 and counts each terminal of a job once.
func Bound(g *fabric.Graph, jobs []routing.Job) int64 {
	S := g.NumSwitches()
	of := routing.JobOf(jobs, len(g.Terms))
	all := make([]int64, S)
	count := make([]int64, S)
	var bound int64
	for j, job := range jobs {
		clear(count)
		var s int64
		for _, t := range job.Terms {
			if t >= 0 && int(t) < len(g.Terms) && of[t] == int32(j) && g.Terms[t].Switch >= 0 {
				count[g.Terms[t].Switch]++
				s++
			}
		}
		for v, a := range count {
			deg := int64(g.Degree(int32(v)))
			if a == 0 || a == s || deg == 0 {
				continue
			}
			bound = max(bound, a*((s-a+deg-1)/deg))
			all[v] += a * (s - a)
		}
	}
	for v, x := range all {
		if deg := int64(g.Degree(int32(v))); x > 0 && deg > 0 {
			bound = max(bound, (x+deg-1)/deg)
		}
	}
	return bound
}
