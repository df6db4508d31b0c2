package fabric

import (
	"fmt"
	"sort"
)

// AssignLIDs gives a LID to every endpoint (switch port 0, cabled CA and
// router port) whose LID is 0, leaving assigned LIDs alone. Endpoints are
// served in order of port GUID (then node GUID and port number), each the
// lowest free block of 2^LMC LIDs aligned to its size, so the result depends
// only on the fabric. An unassigned CA/router port keeps its own LMC if it
// has one, else gets lmc; an enhanced switch port 0 likewise; a base switch
// port 0 always has LMC 0. It fails if the unicast range is exhausted or an
// LID or LMC already present is invalid (run Validate for the full list);
// on failure the fabric is left unchanged.
func (f *Fabric) AssignLIDs(lmc uint8) error {
	if lmc > 7 {
		return fmt.Errorf("fabric: LMC %d, expected 0..7: %w", lmc, ErrLMC)
	}
	used := make([]bool, MaxUnicastLID+1)
	used[0] = true
	var todo []PortRef
	for _, r := range f.Endpoints() {
		p := f.Port(r)
		if p.LMC > 7 {
			return fmt.Errorf("fabric: %s: LMC %d, expected 0..7: %w", f.PortName(r), p.LMC, ErrLMC)
		}
		if p.LID == 0 {
			todo = append(todo, r)
			continue
		}
		n := 1 << p.LMC
		if int(p.LID)+n-1 > MaxUnicastLID {
			return fmt.Errorf("fabric: %s: LID %d LMC %d is invalid: %w", f.PortName(r), p.LID, p.LMC, ErrLIDRange)
		}
		for l := int(p.LID); l < int(p.LID)+n; l++ {
			used[l] = true
		}
	}
	sort.Slice(todo, func(i, j int) bool {
		a, b := todo[i], todo[j]
		ga, gb := f.Port(a).GUID, f.Port(b).GUID
		if ga != gb {
			return ga < gb
		}
		na, nb := f.Nodes[a.Node].GUID, f.Nodes[b.Node].GUID
		if na != nb {
			return na < nb
		}
		return less(a, b) // only reached with duplicate GUIDs (invalid)
	})
	// Plan every assignment first and apply them only when all fit.
	type grant struct {
		lid uint16
		lmc uint8
	}
	plan := make([]grant, len(todo))
	next := [8]int{1, 2, 4, 8, 16, 32, 64, 128} // lowest candidate per LMC
	for i, r := range todo {
		p := f.Port(r)
		n := f.Node(r.Node)
		k := p.LMC
		switch {
		case n.Kind == Switch && !n.Enhanced:
			k = 0
		case k == 0:
			k = lmc
		}
		size := 1 << k
		lid := next[k]
	search:
		for ; lid+size-1 <= MaxUnicastLID; lid += size {
			for l := lid; l < lid+size; l++ {
				if used[l] {
					continue search
				}
			}
			break
		}
		if lid+size-1 > MaxUnicastLID {
			return fmt.Errorf("fabric: no free block of %d LIDs for %s: %w", size, f.PortName(r), ErrLIDRange)
		}
		for l := lid; l < lid+size; l++ {
			used[l] = true
		}
		plan[i] = grant{uint16(lid), k}
		next[k] = lid + size
	}
	for i, r := range todo {
		p := f.Port(r)
		p.LID, p.LMC = plan[i].lid, plan[i].lmc
	}
	return nil
}

// MaxLID returns the highest LID any endpoint answers (base + 2^LMC - 1).
func (f *Fabric) MaxLID() int {
	m := 0
	for _, r := range f.Endpoints() {
		p := f.Port(r)
		if p.LID == 0 {
			continue
		}
		if top := int(p.LID) + (1 << p.LMC) - 1; top > m {
			m = top
		}
	}
	return m
}
