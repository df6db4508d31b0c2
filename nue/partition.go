package nue

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// dest is one destination LID: the switch it hangs off and the port there
// (0 for a switch's own LID).
type dest struct {
	lid  int32
	sw   int32
	port uint8
	term bool  // a CA/router LID (else a switch LID)
	job  int32 // SAR: the job of the terminal, -1 for none
	// phase orders a layer's destinations: 0 the terminal LIDs (with SAR
	// only those inside jobs), 1 with SAR the other terminal LIDs, 2 the
	// switch LIDs, which add no balancing load.
	phase uint8
	off   uint8 // LMC offset: lid − the port's base LID
	// also are the LIDs that share this destination's search (see
	// groupBySwitch): same switch, layer, phase, job and LMC offset.
	also []member
}

// member is a LID routed on the tree of another destination of its switch.
type member struct {
	lid  int32
	port uint8
	term bool
}

// destinations lists every LID Nue routes: each LID of every terminal
// attached to a switch (all 2^LMC of them), then each switch LID, both in
// LID order, with their phases (see dest). jobOf (per terminal, -1 = no
// job) is nil without SAR. It fails on unassigned LIDs.
func destinations(g *fabric.Graph, jobOf []int32) ([]dest, error) {
	nt := 0
	for _, t := range g.Terms {
		if t.Switch >= 0 {
			nt += 1 << t.LMC
		}
	}
	terms, sws := make([]dest, 0, nt), make([]dest, 0, g.NumSwitches())
	for ti, t := range g.Terms {
		if t.Switch < 0 {
			continue // cabled to a CA: no switch can reach it
		}
		if t.LID == 0 {
			return nil, fmt.Errorf("nue: %s port %d has no LID (assign LIDs first)", g.F.Name(t.Node), t.Port)
		}
		job, phase := int32(-1), uint8(0)
		if jobOf != nil {
			if job = jobOf[ti]; job < 0 {
				phase = 1
			}
		}
		for l := 0; l < 1<<t.LMC; l++ {
			terms = append(terms, dest{lid: int32(t.LID) + int32(l), sw: t.Switch, port: t.SwitchPort, term: true, job: job, phase: phase, off: uint8(l)})
		}
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		p := &g.F.Nodes[g.Switches[s]].Ports[0]
		if p.LID == 0 {
			return nil, fmt.Errorf("nue: switch %q has no LID (assign LIDs first)", g.SwitchName(s))
		}
		for l := 0; l < 1<<p.LMC; l++ {
			sws = append(sws, dest{lid: int32(p.LID) + int32(l), sw: s, job: -1, phase: 2, off: uint8(l)})
		}
	}
	all := byLID(terms, make([]dest, 0, len(terms)+len(sws)))
	return byLID(sws, all), nil
}

// Partition names a way to spread destinations over layers.
type Partition string

// Partitions Nue offers.
const (
	// RoundRobin deals the destinations in LID order to the layers in
	// turn, the terminal LIDs first (OpenSM's nue without METIS does the
	// same), then the switch LIDs.
	RoundRobin Partition = "roundrobin"
	// Locality splits the switch graph into k connected-ish parts of equal
	// destination weight by recursive bisection along the line between two
	// far-apart switches, and gives every destination its switch's part.
	Locality Partition = "locality"
	// Switches deals whole switches, each with all its LIDs, to the layers
	// in turn: first the switches with terminals in index order, then the
	// LIDs of the others. It keeps a switch's LIDs in one layer, so they
	// can share one search (share=switch).
	Switches Partition = "switches"
)

// Auto picks RoundRobin for indirect networks (some switch has no
// terminals: fat trees, Clos, XGFT) and Locality for direct networks
// (every switch has terminals: tori, Dragonflies, random fabrics).
// Measured (nue/README.md): in indirect networks every shortest path goes
// up then down, so layers need no locality to stay acyclic and round robin
// balances best; in direct networks compact layers avoid the ring
// dependencies of shortest paths (figures: bench/nue/NOTES.md).
const Auto Partition = "auto"

func autoPartition(g *fabric.Graph) Partition {
	has := make([]bool, g.NumSwitches())
	for _, t := range g.Terms {
		if t.Switch >= 0 {
			has[t.Switch] = true
		}
	}
	for _, h := range has {
		if !h {
			return RoundRobin
		}
	}
	return Locality
}

// partition assigns a layer to every destination (seed 001, Algorithm 4.1,
// line 1: N into k disjoint subsets; how is the choice the algorithm leaves
// open, see Partition); the result holds, per layer, the destinations in
// routing order (terminal LIDs first, then switch LIDs, each in LID
// order). A round-robin layer of all of them may be ds itself, reordered in
// place: ds is the caller's no more.
func partition(g *fabric.Graph, ds []dest, k int, how Partition) ([][]dest, error) {
	var layers [][]dest
	switch how {
	case RoundRobin:
		layers = roundRobinLayers(ds, k)
	case Switches:
		layers = switchLayers(g, ds, k)
	case Locality:
		layers = localityLayers(g, ds, k)
	default:
		return nil, fmt.Errorf("nue: unknown partition %q, expected %s, %s, %s or %s", how, Auto, RoundRobin, Locality, Switches)
	}
	for i := range layers {
		if how == Locality {
			spreadOrder(layers[i], g.NumSwitches())
			continue
		}
		// LIDs are distinct: (phase, LID) orders fully.
		sortDests(layers[i], func(a, b dest) int {
			if a.phase != b.phase {
				return int(a.phase) - int(b.phase)
			}
			return int(a.lid - b.lid)
		})
	}
	return layers, nil
}

// roundRobinLayers deals the terminal LIDs out first, from layer 0, then
// the switch LIDs: without SAR the sequential schedule, which takes the
// layers' i-th destinations in turn, then routes the terminal LIDs in LID
// order. With k = 1 the one layer may be ds itself (see partition).
func roundRobinLayers(ds []dest, k int) [][]dest {
	layers := make([][]dest, k)
	termsFirst := func(a, b dest) int {
		if sa, sb := a.term, b.term; sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		return int(a.lid - b.lid)
	}
	// destinations lists them in this order: read ds as it is then.
	sorted := ds
	if !slices.IsSortedFunc(ds, termsFirst) {
		sorted = append([]dest(nil), ds...)
		slices.SortFunc(sorted, termsFirst)
	}
	if k == 1 {
		// One layer takes them all, in this order: ds itself, full, so
		// that an append reallocates.
		layers[0] = sorted[:len(sorted):len(sorted)]
		return layers
	}
	// Each layer's share, counted first: one allocation per layer.
	nt := 0
	for _, d := range sorted {
		if d.term {
			nt++
		}
	}
	for j := range layers {
		layers[j] = make([]dest, 0, (nt+k-1-j)/k+(len(sorted)-nt+k-1-j)/k)
	}
	for i, n := 0, 0; i < len(sorted); i, n = i+1, n+1 {
		if i > 0 && sorted[i].term != sorted[i-1].term {
			n = 0
		}
		layers[n%k] = append(layers[n%k], sorted[i])
	}
	return layers
}

// switchLayers deals the switches with terminals to the layers in turn,
// each with all its LIDs (its own included), then the LIDs of the other
// switches one by one, so that a switch's LIDs can share one search.
func switchLayers(g *fabric.Graph, ds []dest, k int) [][]dest {
	layers := make([][]dest, k)
	has := make([]bool, g.NumSwitches())
	for _, d := range ds {
		if d.term {
			has[d.sw] = true
		}
	}
	part := make([]int32, g.NumSwitches())
	next := 0
	for s, h := range has {
		if h {
			part[s] = int32(next % k)
			next++
		}
	}
	for _, d := range ds {
		if has[d.sw] {
			layers[part[d.sw]] = append(layers[part[d.sw]], d)
		} else {
			layers[next%k] = append(layers[next%k], d)
			next++
		}
	}
	return layers
}

// localityLayers gives each layer a compact region of switches (see
// bisectSwitches), weighted by the LIDs each switch holds, and every LID
// its switch's layer.
func localityLayers(g *fabric.Graph, ds []dest, k int) [][]dest {
	layers := make([][]dest, k)
	weight := make([]int64, g.NumSwitches())
	for _, d := range ds {
		weight[d.sw]++
	}
	part := bisectSwitches(g, weight, k)
	for _, d := range ds {
		layers[part[d.sw]] = append(layers[part[d.sw]], d)
	}
	return layers
}

// bisectSwitches gives every switch one of k parts: recursively, the
// switches are ordered by dist(a,x) − dist(b,x) for two far-apart switches
// a and b (a double BFS sweep) and cut where the weight splits in the
// ratio of the parts on either side. Deterministic; O(k·(S+C) + S log S·log k).
func bisectSwitches(g *fabric.Graph, weight []int64, k int) []int32 {
	S := g.NumSwitches()
	part := make([]int32, S)
	all := make([]int32, S)
	for i := range all {
		all[i] = int32(i)
	}
	da, db, q := make([]int32, S), make([]int32, S), make([]int32, S)
	var rec func(sws []int32, k, first int)
	rec = func(sws []int32, k, first int) {
		if k <= 1 || len(sws) <= 1 {
			for _, s := range sws {
				part[s] = int32(first)
			}
			return
		}
		// Double sweep: a = farthest from sws[0], b = farthest from a.
		far := func(from int32, dist []int32) int32 {
			g.BFS(from, dist, q)
			best := sws[0]
			for _, s := range sws {
				if dist[s] > dist[best] || (dist[s] == dist[best] && s < best) {
					best = s
				}
			}
			return best
		}
		a := far(sws[0], da)
		b := far(a, da)
		g.BFS(b, db, q)
		const inf = 1 << 20
		key := func(s int32) int32 {
			x, y := da[s], db[s]
			if x < 0 {
				x = inf
			}
			if y < 0 {
				y = inf
			}
			return x - y
		}
		slices.SortFunc(sws, func(x, y int32) int {
			if kx, ky := key(x), key(y); kx != ky {
				return int(kx - ky)
			}
			return int(x - y)
		})
		var total int64
		for _, s := range sws {
			total += weight[s]
		}
		k1 := k / 2
		target := total * int64(k1) / int64(k)
		cut, acc := 0, int64(0)
		for cut < len(sws)-1 && (acc < target || cut == 0) {
			acc += weight[sws[cut]]
			cut++
		}
		left := append([]int32(nil), sws[:cut]...)
		right := append([]int32(nil), sws[cut:]...)
		rec(left, k1, first)
		rec(right, k-k1, first+k1)
	}
	rec(all, k, 0)
	return part
}

// spreadOrder orders the destinations of one layer by phase, then LID,
// and then reorders its terminal LIDs so that consecutive destinations lie
// far apart: their switches in the bit-reversed order of their rank in
// the layer (the van der Corput sequence), each switch's LIDs together in
// LID order; switch LIDs last, in LID order. In direct networks a layer
// routed in LID order advances like a wavefront, and the turns its first
// trees put in use funnel later ones through the same channels
// (nue/README.md, "Destination order").
func spreadOrder(ds []dest, S int) {
	rank := make([]int32, S)
	for i := range rank {
		rank[i] = -1
	}
	var sws []int32
	for _, d := range ds {
		if d.phase < 2 && rank[d.sw] < 0 {
			rank[d.sw] = 0
			sws = append(sws, d.sw)
		}
	}
	slices.Sort(sws)
	nb := bits.Len(uint(max(len(sws)-1, 1)))
	for i, s := range sws {
		rank[s] = int32(bits.Reverse32(uint32(i)) >> (32 - nb))
	}
	// A counting sort by (phase, rank): the keys of phases 0 and 1 are
	// below 2<<nb, phase 2 has one key. It keeps the order of equal keys,
	// so the LIDs of a key come in LID order once each phase's LIDs do.
	if !phasesByLID(ds) {
		slices.SortFunc(ds, func(a, b dest) int { return int(a.lid - b.lid) })
	}
	span := 1 << nb
	key := func(d dest) int {
		if d.phase == 2 {
			return 2 * span
		}
		return int(d.phase)*span + int(rank[d.sw])
	}
	start := make([]int, 2*span+2)
	for _, d := range ds {
		start[key(d)+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	out := make([]dest, len(ds))
	for _, d := range ds {
		k := key(d)
		out[start[k]] = d
		start[k]++
	}
	copy(ds, out)
}

// phasesByLID reports whether the LIDs of each phase of ds come in
// increasing order.
func phasesByLID(ds []dest) bool {
	var last [3]int32
	for _, d := range ds {
		if d.lid < last[d.phase] {
			return false
		}
		last[d.phase] = d.lid
	}
	return true
}

// groupBySwitch merges, within one layer's destinations (in routing
// order), the LIDs that can share one search: terminal LIDs on the same
// switch with the same phase, job and LMC offset share the first one's
// tree (if terms is set), and so does the switch's own LID of that offset,
// if it is in the layer (its tree towards the switch is the same; only the
// last hop, port 0, differs). LMC offsets stay apart so a port's LIDs keep
// distinct paths.
func groupBySwitch(ds []dest, terms bool) []dest {
	ix := newGroupIndex(ds)
	out := make([]dest, 0, len(ds))
	for _, d := range ds {
		so := ix.first(d)
		if d.term {
			if terms {
				k := ix.lead(d)
				if i := *k; i >= 0 {
					out[i].also = append(out[i].also, member{d.lid, d.port, true})
					continue
				}
				*k = int32(len(out))
			}
			if *so < 0 {
				*so = int32(len(out))
			}
			d.also = nil
			out = append(out, d)
			continue
		}
		if i := *so; i >= 0 {
			out[i].also = append(out[i].also, member{d.lid, 0, false})
			continue
		}
		out = append(out, d)
	}
	return out
}

// groupIndex finds the groups of groupBySwitch: per (switch, LMC offset)
// the first terminal group, per (switch, phase, job, LMC offset) the
// terminal group; slots hold an index into its output, -1 for none.
// Without jobs the slots are arrays, else maps.
type groupIndex struct {
	offs     int32 // LMC offsets in ds (max + 1)
	firsts   []int32
	leads    []int32 // by (switch·offs + offset)·2 + phase
	firstMap map[int64]*int32
	leadMap  map[groupKey]*int32
}

type groupKey struct {
	sw    int32
	phase uint8
	job   int32
	off   uint8
}

func newGroupIndex(ds []dest) *groupIndex {
	ix := &groupIndex{offs: 1}
	var sws int32
	jobs := false
	for _, d := range ds {
		sws = max(sws, d.sw+1)
		ix.offs = max(ix.offs, int32(d.off)+1)
		jobs = jobs || d.job >= 0 || d.phase == 1
	}
	if jobs {
		ix.firstMap, ix.leadMap = make(map[int64]*int32, len(ds)), make(map[groupKey]*int32, len(ds))
		return ix
	}
	ix.firsts, ix.leads = make([]int32, sws*ix.offs), make([]int32, 2*sws*ix.offs)
	for i := range ix.firsts {
		ix.firsts[i] = -1
	}
	for i := range ix.leads {
		ix.leads[i] = -1
	}
	return ix
}

// first returns the slot of d's (switch, LMC offset).
func (ix *groupIndex) first(d dest) *int32 {
	if ix.firstMap == nil {
		return &ix.firsts[d.sw*ix.offs+int32(d.off)]
	}
	k := int64(d.sw)<<8 | int64(d.off)
	p, ok := ix.firstMap[k]
	if !ok {
		p = new(int32)
		*p = -1
		ix.firstMap[k] = p
	}
	return p
}

// lead returns the slot of d's (switch, phase, job, LMC offset).
func (ix *groupIndex) lead(d dest) *int32 {
	if ix.leadMap == nil {
		return &ix.leads[(d.sw*ix.offs+int32(d.off))*2+int32(d.phase)]
	}
	k := groupKey{d.sw, d.phase, d.job, d.off}
	p, ok := ix.leadMap[k]
	if !ok {
		p = new(int32)
		*p = -1
		ix.leadMap[k] = p
	}
	return p
}

// sortDests sorts ds by cmp, a full order, skipping the sort when ds is
// in order already (switches list their ports in LID order, and
// destinations hands partition its list sorted).
func sortDests(ds []dest, cmp func(a, b dest) int) {
	if !slices.IsSortedFunc(ds, cmp) {
		slices.SortFunc(ds, cmp)
	}
}

// byLID appends ds in LID order to out: placed by LID when the LIDs are
// distinct (a compiled fabric's are), else sorted.
func byLID(ds []dest, out []dest) []dest {
	lo, hi := int32(1<<30), int32(-1)
	for _, d := range ds {
		lo, hi = min(lo, d.lid), max(hi, d.lid)
	}
	sorted := func() []dest {
		n := len(out)
		out = append(out, ds...)
		slices.SortFunc(out[n:], func(a, b dest) int { return int(a.lid - b.lid) })
		return out
	}
	if len(ds) == 0 || int(hi-lo) > 4*len(ds)+64 {
		return sorted()
	}
	slot := make([]int32, hi-lo+1)
	for i, d := range ds {
		if slot[d.lid-lo] != 0 {
			return sorted()
		}
		slot[d.lid-lo] = int32(i) + 1
	}
	for _, i := range slot {
		if i != 0 {
			out = append(out, ds[i-1])
		}
	}
	return out
}
