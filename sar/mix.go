package sar

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// This file draws job mixes the way SAR is evaluated (seed 001 §3): the
// running jobs of a batch system at one moment, placed by a SLURM-like
// node selection, so that some jobs are compact and others fragmented by
// the jobs that ran before them. The thesis replays real job histories;
// here a standard workload model stands in for the history.

// MixConfig configures Mix. The zero value is valid: the tree allocator,
// jobs of up to a quarter of the hosts, 200 job starts before the
// snapshot.
type MixConfig struct {
	// Alloc is the node selection (default AllocTree).
	Alloc Alloc
	// MaxSize is the largest job in hosts (0 = a quarter of the hosts,
	// at least 2; capped at the number of hosts).
	MaxSize int
	// Starts is the number of job starts simulated before the snapshot
	// (0 = 200): enough turnover that free hosts are fragmented as on a
	// machine that has run for a while.
	Starts int
}

// Validate rejects negative values and unknown allocators.
func (c MixConfig) Validate() error {
	if _, ok := allocators[c.Alloc]; !ok && c.Alloc != "" {
		return fmt.Errorf("sar: allocator %q, expected %s, %s or %s", c.Alloc, AllocLinear, AllocTree, AllocScatter)
	}
	if c.MaxSize < 0 {
		return fmt.Errorf("sar: max job size %d, expected >= 0", c.MaxSize)
	}
	if c.Starts < 0 {
		return fmt.Errorf("sar: %d job starts, expected >= 0", c.Starts)
	}
	return nil
}

// mixJob is a running job of the simulation.
type mixJob struct {
	id    int
	end   float64
	hosts []int32 // terminal indices
}

// endHeap orders running jobs by end time, then start order.
type endHeap []*mixJob

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].id < h[j].id
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(*mixJob)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Mix returns the jobs running on g's hosts (terminals attached to a
// switch) after cfg.Starts job starts of a first-come-first-served batch
// system, in start order; job ids are their start numbers. Sizes follow
// Lublin and Feitelson's workload model ("The workload on parallel
// supercomputers", JPDC 63(11), 2003, §4: serial jobs with probability
// 0.24, else log2 of the size from a two-stage uniform, a power of two
// with probability 0.75); run times are log-uniform over three decades,
// independent of size. Placement is cfg.Alloc's. Single-switch jobs are
// included (they fragment the machine; see MultiSwitch). The result
// depends only on g, cfg and seed.
func Mix(g *fabric.Graph, cfg MixConfig, seed uint64) ([]routing.Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := newMachine(g)
	if len(m.hosts) < 2 {
		return nil, fmt.Errorf("sar: %d hosts, a job mix needs at least 2", len(m.hosts))
	}
	maxSize := cfg.MaxSize
	if maxSize == 0 {
		maxSize = max(2, len(m.hosts)/4)
	}
	maxSize = min(maxSize, len(m.hosts))
	starts := cfg.Starts
	if starts == 0 {
		starts = 200
	}
	alloc := allocators[cfg.Alloc]
	if cfg.Alloc == "" {
		alloc = allocators[AllocTree]
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a7))
	var running endHeap
	now := 0.0
	for id := 1; id <= starts; id++ {
		size := jobSize(rng, maxSize)
		run := math.Pow(10, 3*rng.Float64())
		for m.free < size {
			j := heap.Pop(&running).(*mixJob)
			now = j.end
			m.release(j.hosts)
		}
		j := &mixJob{id: id, end: now + run, hosts: alloc(m, size, rng)}
		heap.Push(&running, j)
	}
	jobs := make([]*mixJob, len(running))
	copy(jobs, running)
	slices.SortFunc(jobs, func(a, b *mixJob) int { return a.id - b.id })
	out := make([]routing.Job, len(jobs))
	for i, j := range jobs {
		out[i] = routing.Job{ID: fmt.Sprint(j.id), Terms: j.hosts}
	}
	return out, nil
}

// jobSize draws a job size of 1..maxSize hosts (Lublin and Feitelson §4.1:
// serial with probability 0.24; else u from a two-stage uniform over
// [0.8, log2 maxSize], split 2.5 below the top, the lower stage taken with
// probability 0.86; a power of two 2^round(u) with probability 0.75, else
// round(2^u)).
func jobSize(rng *rand.Rand, maxSize int) int {
	if maxSize < 2 || rng.Float64() < 0.24 {
		return 1
	}
	hi := math.Log2(float64(maxSize))
	lo := min(0.8, hi)
	med := max(lo, hi-2.5)
	var u float64
	if rng.Float64() < 0.86 {
		u = lo + (med-lo)*rng.Float64()
	} else {
		u = med + (hi-med)*rng.Float64()
	}
	var size int
	if rng.Float64() < 0.75 {
		size = 1 << int(math.Round(u))
	} else {
		size = int(math.Round(math.Exp2(u)))
	}
	return min(max(size, 2), maxSize)
}

// MultiSwitch returns the jobs whose terminals hang off at least two
// switches: the jobs the SAR filter passes on (seed 001 §3, Figure 3).
func MultiSwitch(g *fabric.Graph, jobs []routing.Job) []routing.Job {
	var out []routing.Job
	for _, j := range jobs {
		first := int32(-1)
		for _, t := range j.Terms {
			if t < 0 || int(t) >= len(g.Terms) || g.Terms[t].Switch < 0 {
				continue
			}
			if s := g.Terms[t].Switch; first < 0 {
				first = s
			} else if s != first {
				out = append(out, j)
				break
			}
		}
	}
	return out
}
