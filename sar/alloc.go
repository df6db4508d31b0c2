package sar

import (
	"math/rand/v2"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// Alloc names a node selection of Mix, after SLURM's.
type Alloc string

// Node selections.
const (
	// AllocLinear is SLURM's select/linear without a topology plugin:
	// hosts in terminal order (by node GUID, whatever order the dump
	// lists them in), the smallest run of consecutive free hosts that
	// holds the job (best fit), else the largest runs until it fits.
	AllocLinear Alloc = "linear"
	// AllocTree is SLURM's topology/tree plugin: the lowest switch whose
	// subtree holds the job, the one with the fewest free hosts among
	// those (best fit); inside it, leaf by leaf, the leaf with the fewest
	// free hosts that holds the rest, else the one with the most. The
	// tree is derived from the fabric: level 0 are the leaves (switches
	// with hosts), level i groups the leaves within 2i switch hops of
	// each other, transitively (the pods of a fat tree at level 1).
	AllocTree Alloc = "tree"
	// AllocScatter takes free hosts uniformly at random: no locality at
	// all. Not a SLURM selection; the reference for placements that a
	// long-running machine has fragmented or a locality-blind scheduler
	// made.
	AllocScatter Alloc = "scatter"
)

var allocators = map[Alloc]func(m *machine, n int, rng *rand.Rand) []int32{
	AllocLinear:  func(m *machine, n int, _ *rand.Rand) []int32 { return m.linear(n) },
	AllocTree:    func(m *machine, n int, _ *rand.Rand) []int32 { return m.tree(n) },
	AllocScatter: (*machine).scatter,
}

// machine is the state of Mix's batch system: which hosts are free.
type machine struct {
	g      *fabric.Graph
	hosts  []int32 // terminal indices of the hosts, ascending
	isFree []bool  // per host position
	free   int
	// leaves are the switches with hosts, in switch order; leafPos[i] the
	// positions of leaf i's hosts, leafFree[i] how many are free.
	leaves   []int32
	leafPos  [][]int
	leafFree []int
	levels   [][]int // per tree level: the group of each leaf (tree only)
}

func newMachine(g *fabric.Graph) *machine {
	m := &machine{g: g}
	leafOf := make([]int, g.NumSwitches())
	for i := range leafOf {
		leafOf[i] = -1
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if len(g.TermsOf(s)) > 0 {
			leafOf[s] = len(m.leaves)
			m.leaves = append(m.leaves, s)
		}
	}
	m.leafPos = make([][]int, len(m.leaves))
	for t, tm := range g.Terms {
		if tm.Switch < 0 {
			continue
		}
		l := leafOf[tm.Switch]
		m.leafPos[l] = append(m.leafPos[l], len(m.hosts))
		m.hosts = append(m.hosts, int32(t))
	}
	m.isFree = make([]bool, len(m.hosts))
	for i := range m.isFree {
		m.isFree[i] = true
	}
	m.free = len(m.hosts)
	m.leafFree = make([]int, len(m.leaves))
	for i, p := range m.leafPos {
		m.leafFree[i] = len(p)
	}
	return m
}

// take marks host position p busy and returns its terminal.
func (m *machine) take(p int) int32 {
	m.isFree[p] = false
	m.free--
	m.leafFree[m.leafOfPos(p)]--
	return m.hosts[p]
}

func (m *machine) leafOfPos(p int) int {
	sw := m.g.Terms[m.hosts[p]].Switch
	i, _ := slices.BinarySearch(m.leaves, sw)
	return i
}

// release frees the hosts (terminal indices) of a finished job.
func (m *machine) release(terms []int32) {
	for _, t := range terms {
		p, _ := slices.BinarySearch(m.hosts, t)
		m.isFree[p] = true
		m.free++
		m.leafFree[m.leafOfPos(p)]++
	}
}

// linear is AllocLinear; n <= m.free.
func (m *machine) linear(n int) []int32 {
	type run struct{ start, n int }
	var runs []run
	for p := 0; p < len(m.hosts); {
		if !m.isFree[p] {
			p++
			continue
		}
		r := run{start: p}
		for p < len(m.hosts) && m.isFree[p] {
			p++
		}
		r.n = p - r.start
		runs = append(runs, r)
	}
	best := -1
	for i, r := range runs {
		if r.n >= n && (best < 0 || r.n < runs[best].n) {
			best = i
		}
	}
	if best >= 0 {
		runs = runs[best : best+1]
	} else {
		slices.SortStableFunc(runs, func(a, b run) int { return b.n - a.n })
	}
	out := make([]int32, 0, n)
	for _, r := range runs {
		for p := r.start; p < r.start+r.n && len(out) < n; p++ {
			out = append(out, m.take(p))
		}
	}
	slices.Sort(out)
	return out
}

// tree is AllocTree; n <= m.free.
func (m *machine) tree(n int) []int32 {
	if m.levels == nil {
		m.levels = treeLevels(m.g, m.leaves)
	}
	var group []int // leaves of the chosen subtree
	free := make([]int, len(m.leaves))
	for _, lv := range m.levels {
		clear(free)
		for i, gid := range lv {
			free[gid] += m.leafFree[i]
		}
		best := -1
		for gid, f := range free { // group ids are first leaves: in leaf order
			if f >= n && (best < 0 || f < free[best]) {
				best = gid
			}
		}
		if best >= 0 {
			for i, gid := range lv {
				if gid == best {
					group = append(group, i)
				}
			}
			break
		}
	}
	out := make([]int32, 0, n)
	for rem := n; rem > 0; {
		pick := -1
		for _, i := range group {
			f := m.leafFree[i]
			if f == 0 {
				continue
			}
			switch {
			case pick < 0:
				pick = i
			case f >= rem && (m.leafFree[pick] < rem || f < m.leafFree[pick]):
				pick = i
			case f < rem && m.leafFree[pick] < rem && f > m.leafFree[pick]:
				pick = i
			}
		}
		for _, p := range m.leafPos[pick] {
			if rem > 0 && m.isFree[p] {
				out = append(out, m.take(p))
				rem--
			}
		}
	}
	slices.Sort(out)
	return out
}

// scatter is AllocScatter; n <= m.free.
func (m *machine) scatter(n int, rng *rand.Rand) []int32 {
	free := make([]int, 0, m.free)
	for p, f := range m.isFree {
		if f {
			free = append(free, p)
		}
	}
	out := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		k := i + rng.IntN(len(free)-i)
		free[i], free[k] = free[k], free[i]
		out = append(out, m.take(free[i]))
	}
	slices.Sort(out)
	return out
}

// treeLevels returns the levels of AllocTree's tree: per level, the group
// of each leaf (a leaf index of the group's first leaf). Level 0 has every
// leaf alone; the last level has one group of all leaves.
func treeLevels(g *fabric.Graph, leaves []int32) [][]int {
	L := len(leaves)
	// dist[i][j]: switch hops between leaves i and j (BFS per leaf).
	dist := make([][]int32, L)
	d := make([]int32, g.NumSwitches())
	var q []int32
	for i, s := range leaves {
		for v := range d {
			d[v] = -1
		}
		d[s], q = 0, append(q[:0], s)
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			for c := g.Off[v]; c < g.Off[v+1]; c++ {
				if h := g.Head[c]; d[h] < 0 {
					d[h] = d[v] + 1
					q = append(q, h)
				}
			}
		}
		dist[i] = make([]int32, L)
		for j, t := range leaves {
			dist[i][j] = d[t]
		}
	}
	lv0 := make([]int, L)
	for i := range lv0 {
		lv0[i] = i
	}
	levels := [][]int{lv0}
	for r := int32(2); ; r += 2 {
		lv := make([]int, L)
		for i := range lv {
			lv[i] = -1
		}
		groups := 0
		for i := range lv {
			if lv[i] >= 0 {
				continue
			}
			groups++
			lv[i] = i
			stack := []int{i}
			for len(stack) > 0 {
				a := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for b := range lv {
					if lv[b] < 0 && dist[a][b] >= 0 && dist[a][b] <= r {
						lv[b] = i
						stack = append(stack, b)
					}
				}
			}
		}
		if !slices.Equal(lv, levels[len(levels)-1]) {
			levels = append(levels, lv)
		}
		if groups == 1 {
			return levels
		}
		if r > int32(g.NumSwitches()) { // disconnected: one last level of all
			all := make([]int, L)
			return append(levels, all)
		}
	}
}
