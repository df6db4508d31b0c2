package sar

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestMixDeterministic: a mix depends on the seed alone; other seeds give
// other mixes.
func TestMixDeterministic(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	g := compile(t, tp, err)
	for _, a := range []Alloc{AllocLinear, AllocTree, AllocScatter} {
		m1, err := Mix(g, MixConfig{Alloc: a}, 7)
		if err != nil {
			t.Fatal(err)
		}
		m2, _ := Mix(g, MixConfig{Alloc: a}, 7)
		m3, _ := Mix(g, MixConfig{Alloc: a}, 8)
		if fmt.Sprint(m1) != fmt.Sprint(m2) {
			t.Errorf("%s: seed 7 gave two mixes", a)
		}
		if fmt.Sprint(m1) == fmt.Sprint(m3) {
			t.Errorf("%s: seeds 7 and 8 gave the same mix", a)
		}
	}
}

// TestMixValid: jobs are disjoint sets of hosts, no larger than MaxSize,
// in start order, and most of the machine is busy at the snapshot.
func TestMixValid(t *testing.T) {
	tp, err := topo.Clos2(12)
	g := compile(t, tp, err)
	for _, a := range []Alloc{AllocLinear, AllocTree, AllocScatter} {
		for seed := uint64(1); seed <= 5; seed++ {
			jobs, err := Mix(g, MixConfig{Alloc: a, MaxSize: 20, Starts: 100}, seed)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int32]bool{}
			busy, last := 0, 0
			for _, j := range jobs {
				var id int
				fmt.Sscan(j.ID, &id)
				if id <= last || id > 100 {
					t.Errorf("%s seed %d: job %s after %d", a, seed, j.ID, last)
				}
				last = id
				if len(j.Terms) < 1 || len(j.Terms) > 20 || !slices.IsSorted(j.Terms) {
					t.Errorf("%s seed %d: job %s hosts %v", a, seed, j.ID, j.Terms)
				}
				for _, h := range j.Terms {
					if seen[h] || g.Terms[h].Switch < 0 {
						t.Errorf("%s seed %d: host %d twice or not a host", a, seed, h)
					}
					seen[h] = true
				}
				busy += len(j.Terms)
			}
			if busy < len(g.Terms)/2 {
				t.Errorf("%s seed %d: %d of %d hosts busy", a, seed, busy, len(g.Terms))
			}
		}
	}
	if _, err := Mix(g, MixConfig{Alloc: "random"}, 1); err == nil {
		t.Error("unknown allocator accepted")
	}
	if _, err := Mix(g, MixConfig{MaxSize: -1}, 1); err == nil {
		t.Error("negative max size accepted")
	}
}

// TestJobSizes: Lublin and Feitelson's model: about a quarter serial,
// most parallel sizes powers of two, all within 1..max.
func TestJobSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	serial, pow2, n := 0, 0, 20000
	for range n {
		s := jobSize(rng, 128)
		if s < 1 || s > 128 {
			t.Fatalf("size %d", s)
		}
		switch {
		case s == 1:
			serial++
		case s&(s-1) == 0:
			pow2++
		}
	}
	if f := float64(serial) / float64(n); f < 0.22 || f > 0.26 {
		t.Errorf("serial fraction %.3f, want about 0.24", f)
	}
	if f := float64(pow2) / float64(n-serial); f < 0.75 || f > 0.85 {
		t.Errorf("power-of-two fraction of parallel jobs %.3f, want about 0.75 plus the rounded ones", f)
	}
}

// TestAllocTree: SLURM's topology/tree selection on the k=4 3-level fat
// tree (4 hosts per leaf, 4 leaves per pod): a job fits in the fullest
// leaf that holds it, else in the fullest pod, leaf by leaf, fullest
// leaves first.
func TestAllocTree(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	g := compile(t, tp, err)
	m := newMachine(g)
	leafOf := func(hosts []int32) []int32 {
		var ls []int32
		for _, h := range hosts {
			ls = append(ls, g.Terms[h].Switch)
		}
		return slices.Compact(ls)
	}
	a := m.tree(3) // leaf 0, hosts 0..2
	if !slices.Equal(a, []int32{0, 1, 2}) {
		t.Fatalf("first job %v", a)
	}
	b := m.tree(1) // best fit: leaf 0's last host, not a fresh leaf
	if !slices.Equal(b, []int32{3}) {
		t.Fatalf("one host: %v, want the last free host of leaf 0", b)
	}
	c := m.tree(6) // pod 0 has 12 free hosts on 3 leaves: two leaves
	if ls := leafOf(c); len(ls) != 2 || ls[0] != 1 || ls[1] != 2 {
		t.Fatalf("six hosts on leaves %v, want leaves 1 and 2", ls)
	}
	m.release(a)
	d := m.tree(5) // no leaf holds 5; pod 0 (9 free: leaves 0, 2, 3 with 3, 2, 4) is the fullest pod that does
	if ls := leafOf(d); len(ls) != 2 || ls[0] != 2 || ls[1] != 3 {
		t.Fatalf("five hosts on leaves %v, want leaf 3 (most free) and then leaf 2 (fewest free that hold the last one)", ls)
	}
	e := m.tree(17) // no pod holds 17: the whole tree
	if len(e) != 17 {
		t.Fatalf("%d hosts", len(e))
	}
}

// TestAllocLinear: SLURM's select/linear: the smallest run of free hosts
// that holds the job, else the largest runs.
func TestAllocLinear(t *testing.T) {
	tp, err := topo.Ring(4, 4, nil) // 16 hosts in node order
	g := compile(t, tp, err)
	m := newMachine(g)
	for _, p := range []int{3, 4, 10} { // runs: 0-2 (3), 5-9 (5), 11-15 (5)
		m.take(p)
	}
	if got := m.linear(3); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("3 hosts: %v, want the run 0-2", got)
	}
	if got := m.linear(4); !slices.Equal(got, []int32{5, 6, 7, 8}) {
		t.Fatalf("4 hosts: %v, want the first run of 5", got)
	}
	// runs now: 9 (1), 11-15 (5): 6 hosts take the largest run, then the next
	if got := m.linear(6); !slices.Equal(got, []int32{9, 11, 12, 13, 14, 15}) {
		t.Fatalf("6 hosts: %v", got)
	}
}

// TestMultiSwitch keeps jobs on two switches or more.
func TestMultiSwitch(t *testing.T) {
	tp, err := topo.Ring(3, 2, nil)
	g := compile(t, tp, err)
	jobs := []routing.Job{{ID: "a", Terms: []int32{0, 1}}, {ID: "b", Terms: []int32{1, 2}}, {ID: "c", Terms: []int32{4}}}
	got := MultiSwitch(g, jobs)
	if len(got) != 1 || got[0].ID != "b" {
		t.Fatalf("%v", got)
	}
}

// TestBoundHolds: the bound never exceeds the effective EFI of any
// verified engine, on mixes of every allocator.
func TestBoundHolds(t *testing.T) {
	for _, c := range []struct {
		name string
		tp   func() (*topo.Topology, error)
		eng  []string
	}{
		{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, []string{"ftree", "minhop", "nue", "updn"}},
		{"torus4x4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 2, false) }, []string{"dor", "minhop", "nue"}},
	} {
		tp, err := c.tp()
		g := compile(t, tp, err)
		for _, name := range c.eng {
			e, _ := routing.Lookup(name)
			r, err := e.Route(context.Background(), g, routing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []Alloc{AllocLinear, AllocTree, AllocScatter} {
				for seed := uint64(1); seed <= 4; seed++ {
					all, _ := Mix(g, MixConfig{Alloc: a}, seed)
					jobs := MultiSwitch(g, all)
					m, err := Measure(g, r, jobs)
					if err != nil {
						t.Fatal(err)
					}
					if b := Bound(g, jobs); b > m.EffectiveEFI {
						t.Errorf("%s %s %s seed %d: bound %d above %d", c.name, name, a, seed, b, m.EffectiveEFI)
					}
				}
			}
		}
	}
}

// TestBoundKnown: one job of 4 hosts on each of two leaves of a 2-level
// Clos with 4 spines: every host sends to 4 others across 4 up-links, one
// destination per up-link at best: 4 paths per channel (and that is
// reached by ftree).
func TestBoundKnown(t *testing.T) {
	tp, err := topo.Clos2(8) // 8 leaves of 4 hosts, 4 spines
	g := compile(t, tp, err)
	job := routing.Job{ID: "j", Terms: []int32{0, 1, 2, 3, 4, 5, 6, 7}}
	if b := Bound(g, []routing.Job{job}); b != 4 {
		t.Fatalf("bound %d, want 4", b)
	}
	e, _ := routing.Lookup("ftree")
	r, err := e.Route(context.Background(), g, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := Measure(g, r, []routing.Job{job}); m.EffectiveEFI != 4 {
		t.Fatalf("ftree effective EFI %d, want the bound 4", m.EffectiveEFI)
	}
}
