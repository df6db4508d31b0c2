package cdg

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// Sentinel errors of Verify (besides ErrCycle).
var (
	ErrUndelivered = errors.New("pairs not delivered")
	ErrVLLimit     = errors.New("VL limit exceeded")
)

// Options tune Verify.
type Options struct {
	// MaxVLs is the VL limit to check; 0 means lft.MaxVLs.
	MaxVLs int
	// SwitchSources also walks paths from every switch's own LID (switch
	// management traffic) to every destination; by default the sources are
	// the CA and router ports.
	SwitchSources bool
	// SwitchDelivery checks that every switch's own packets reach every
	// destination (no loops, no dead ends) without adding their
	// dependencies to the CDG: the guarantee of engines whose deadlock
	// freedom covers the traffic terminals inject (switch-originated
	// management traffic travels on VL15). Implied by SwitchSources.
	SwitchDelivery bool
	// MaxExamples caps the failing pairs kept as examples (default 10).
	MaxExamples int
	// Workers is the number of goroutines (0 = GOMAXPROCS). The report does
	// not depend on it.
	Workers int
}

// PairFailure is an example of an undelivered pair.
type PairFailure struct {
	Src    string // source name (CA description or switch name) and port
	SLID   int
	DLID   int
	Reason string // what went wrong and where
}

// Report is the outcome of Verify.
type Report struct {
	Sources      int   // source ports (CA/router ports cabled to a switch, plus the switches with SwitchSources or SwitchDelivery)
	Destinations int   // destination LIDs (every LID of every endpoint)
	Pairs        int64 // (source, destination LID) pairs the fabric connects
	Delivered    int64
	Unconnected  int64 // pairs the fabric itself disconnects (not checked)
	Loops        int64 // undelivered pairs by reason
	DeadEnds     int64
	Examples     []PairFailure

	VLsUsed    int // highest VL used on any hop + 1
	VLLimit    int
	NumVLs     int // what the routing claims
	CDGEdges   int // dependencies between virtual channels
	EdgesPerVL []int
	CrossVL    int // dependencies that change VL
	Cycle      *CycleError
}

// OK reports whether the routing passed every check.
func (r *Report) OK() bool {
	return r.Delivered == r.Pairs && r.Cycle == nil && r.VLsUsed <= r.VLLimit && r.VLsUsed <= max(r.NumVLs, 1)
}

// Err returns nil for a passing report, else the failures joined: an
// ErrUndelivered error naming the first failing pair, an ErrVLLimit error,
// and the *CycleError.
func (r *Report) Err() error {
	var errs []error
	if r.Delivered != r.Pairs {
		msg := fmt.Sprintf("cdg: %d of %d pairs not delivered (%d loops, %d dead ends)", r.Pairs-r.Delivered, r.Pairs, r.Loops, r.DeadEnds)
		if len(r.Examples) > 0 {
			e := r.Examples[0]
			msg += fmt.Sprintf("; first: %s (LID %d) -> LID %d: %s", e.Src, e.SLID, e.DLID, e.Reason)
		}
		errs = append(errs, fmt.Errorf("%s: %w", msg, ErrUndelivered))
	}
	if r.VLsUsed > r.VLLimit {
		errs = append(errs, fmt.Errorf("cdg: routing uses %d VLs, limit %d: %w", r.VLsUsed, r.VLLimit, ErrVLLimit))
	} else if r.VLsUsed > max(r.NumVLs, 1) {
		errs = append(errs, fmt.Errorf("cdg: routing uses %d VLs but claims %d: %w", r.VLsUsed, r.NumVLs, ErrVLLimit))
	}
	if r.Cycle != nil {
		errs = append(errs, r.Cycle)
	}
	return errors.Join(errs...)
}

// String renders the report for people.
func (r *Report) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "verdict:        %s\n", verdict)
	fmt.Fprintf(&b, "sources:        %d ports, %d destination LIDs\n", r.Sources, r.Destinations)
	fmt.Fprintf(&b, "pairs:          %d delivered of %d connected (%d loops, %d dead ends); %d pairs disconnected by the fabric\n",
		r.Delivered, r.Pairs, r.Loops, r.DeadEnds, r.Unconnected)
	fmt.Fprintf(&b, "VLs:            %d used, %d claimed, limit %d\n", r.VLsUsed, r.NumVLs, r.VLLimit)
	fmt.Fprintf(&b, "CDG:            %d dependencies", r.CDGEdges)
	if r.CrossVL > 0 {
		fmt.Fprintf(&b, " (%d change VL)", r.CrossVL)
	}
	b.WriteString("; per VL:")
	for vl, n := range r.EdgesPerVL {
		fmt.Fprintf(&b, " VL%d=%d", vl, n)
	}
	b.WriteString("\n")
	if r.Cycle == nil {
		b.WriteString("deadlock:       none (CDG acyclic)\n")
	} else {
		fmt.Fprintf(&b, "deadlock:       cycle of %d channels:\n", len(r.Cycle.Names))
		for i, n := range r.Cycle.Names {
			if i == 3*maxListed {
				fmt.Fprintf(&b, "                … %d more\n", len(r.Cycle.Names)-i)
				break
			}
			fmt.Fprintf(&b, "                %s\n", n)
		}
	}
	for _, e := range r.Examples {
		fmt.Fprintf(&b, "undelivered:    %s (LID %d) -> LID %d: %s\n", e.Src, e.SLID, e.DLID, e.Reason)
	}
	return b.String()
}

// Verify checks routing r on fabric g: every connected (source,
// destination LID) pair is delivered without loops or dead ends, the VLs
// used stay within the limit and what the routing claims, and the CDG over
// virtual channels is acyclic. The returned report is complete either way;
// the error is Report.Err() (nil when the routing is safe), or, with a nil
// report, a shape mismatch between r and g or tables no InfiniBand routing
// holds (an SL beyond 15, an SL in use mapped to a VL beyond 15, SL or
// SL2VL tables of the wrong size).
func Verify(g *fabric.Graph, r *lft.Routing, opt Options) (*Report, error) {
	v, err := prepare(g, r, opt)
	if err != nil {
		return nil, err
	}
	v.run()
	rep := v.report()
	return rep, rep.Err()
}

// prepare checks r's shape and tables against g (Verify's errors with a
// nil report) and returns a verifier for them.
func prepare(g *fabric.Graph, r *lft.Routing, opt Options) (*verifier, error) {
	if err := r.CheckShape(g); err != nil {
		return nil, err
	}
	if err := checkTables(g, r); err != nil {
		return nil, err
	}
	return newVerifier(g, r, opt), nil
}

// verifier holds what the per-destination walks share (read-only) and the
// dependency bitset they fill.
type verifier struct {
	g     *fabric.Graph
	r     *lft.Routing
	opt   Options
	comp  []int32 // switch -> component of the switch graph
	nsrc  []int32 // switch -> terminal sources attached
	V     int     // VLs addressed in the bitset
	cross bool    // SL2VL may change the VL along a path
	tbase []int64 // channel -> first turn id
	edges []uint64
	// counting, when a State is kept, has every walker count per
	// dependency bit the destinations whose paths set it (wcnt, one
	// array per walker); noState says a destination took the pair walk,
	// which may set a bit more than once (no State then).
	counting bool
	wcnt     [][]uint16
	dmask    []uint32 // per LID, when a State is kept: the VLs of its paths
	noState  atomic.Bool
	dests    int // destination LIDs
	// srcCols: per-source-switch SLs read a block at a time (see walker.block)
	srcCols bool
	// Per switch, as the walks of a destination on another switch count its
	// sources: base their number, need 1 when there are any, srcAll all ones
	// when their paths count in the CDG. Per component of the switch graph:
	// compN the sources, compNeed the switches with sources; totalN the
	// sources of the fabric.
	base     []int64
	need     []uint8
	srcAll   []uint32
	compN    []int64
	compNeed []int32
	totalN   int64

	pairs    int64
	deliv    int64
	unconn   int64
	loops    int64
	dead     int64
	vlMask   uint32
	examples []example
}

type example struct {
	dlid int
	src  int // source order: switch index*1024 + port, for determinism
	f    PairFailure
}

func newVerifier(g *fabric.Graph, r *lft.Routing, opt Options) *verifier {
	if opt.MaxVLs <= 0 {
		opt.MaxVLs = lft.MaxVLs
	}
	if opt.MaxExamples <= 0 {
		opt.MaxExamples = 10
	}
	v := &verifier{g: g, r: r, opt: opt}
	S := g.NumSwitches()
	v.comp = g.SwitchComponents()
	v.nsrc = make([]int32, S)
	for s := 0; s < S; s++ {
		v.nsrc[s] = g.TermOff[s+1] - g.TermOff[s]
	}
	v.V = r.MaxVL() + 1
	v.cross = !r.SL2VL.Uniform()
	v.tbase = make([]int64, g.NumChannels()+1)
	for c := 0; c < g.NumChannels(); c++ {
		v.tbase[c+1] = v.tbase[c] + int64(g.Degree(g.Head[c]))
	}
	nbits := v.tbase[g.NumChannels()] * int64(v.V)
	if v.cross {
		nbits *= int64(v.V)
	}
	v.edges = make([]uint64, (nbits+63)/64)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if sw, term := g.Owner(lid); sw >= 0 || term >= 0 {
			v.dests++
		}
	}
	v.srcCols = !v.cross && r.SL.BySrc != nil && len(r.SL.Pair) == 0 && len(r.SL.ByDest) > g.MaxLID()
	v.sourceSums()
	return v
}

// sourceSums fills base, need, srcAll, compN, compNeed and totalN.
func (v *verifier) sourceSums() {
	S := v.g.NumSwitches()
	v.base, v.need, v.srcAll = make([]int64, S), make([]uint8, S), make([]uint32, S)
	v.compN, v.compNeed = make([]int64, S), make([]int32, S)
	for u := 0; u < S; u++ {
		n := int64(v.nsrc[u])
		if v.opt.SwitchSources || v.opt.SwitchDelivery {
			n++
		}
		if v.nsrc[u] > 0 || v.opt.SwitchSources {
			v.srcAll[u] = ^uint32(0)
		}
		v.base[u] = n
		v.compN[v.comp[u]] += n
		v.totalN += n
		if n > 0 {
			v.need[u] = 1
			v.compNeed[v.comp[u]]++
		}
	}
}

// vlField is the number of VLs the 4-bit VL field can name (VL15, for
// subnet management, fails the VL limit rather than checkTables).
const vlField = 16

// checkTables rejects what no InfiniBand routing holds and the walks would
// misread: an SL beyond 15 (per-port SL2VL lookups would index another
// entry or past the table), an SL in use mapped to a VL beyond 15 (the VL
// bookkeeping holds 32 VLs, so VL 32 and up would escape the VL limit),
// and per-source SL or per-switch SL2VL tables of the wrong size.
func checkTables(g *fabric.Graph, r *lft.Routing) error {
	S, stride := g.NumSwitches(), len(r.SL.ByDest)
	if r.SL.BySrc != nil && len(r.SL.BySrc) != S*stride {
		return fmt.Errorf("cdg: per-source SL table has %d entries, want %d switches × %d LIDs", len(r.SL.BySrc), S, stride)
	}
	if r.SL2VL.Switch != nil && len(r.SL2VL.Switch) < S {
		return fmt.Errorf("cdg: SL2VL tables for %d switches, fabric has %d", len(r.SL2VL.Switch), S)
	}
	for s, t := range r.SL2VL.Switch {
		if t != nil && (t.NPorts < 0 || len(t.VL) != (t.NPorts+1)*(t.NPorts+1)*lft.NumSLs) {
			return fmt.Errorf("cdg: SL2VL table of switch %d has %d entries for %d ports", s, len(t.VL), t.NPorts)
		}
	}
	bad := func(sl uint8) bool { return sl >= lft.NumSLs }
	if i := slices.IndexFunc(r.SL.ByDest, bad); i >= 0 {
		return fmt.Errorf("cdg: SL %d for LID %d, expected 0..%d", r.SL.ByDest[i], i, lft.NumSLs-1)
	}
	if i := slices.IndexFunc(r.SL.BySrc, bad); i >= 0 {
		return fmt.Errorf("cdg: SL %d from switch %d to LID %d, expected 0..%d", r.SL.BySrc[i], i/stride, i%stride, lft.NumSLs-1)
	}
	var pairs []uint32
	for k, sl := range r.SL.Pair {
		if bad(sl) {
			pairs = append(pairs, k)
		}
	}
	if len(pairs) > 0 {
		k := slices.Min(pairs)
		return fmt.Errorf("cdg: SL %d from LID %d to LID %d, expected 0..%d", r.SL.Pair[k], k>>16, k&0xFFFF, lft.NumSLs-1)
	}
	if vl := r.MaxVL(); vl >= vlField {
		return fmt.Errorf("cdg: an SL in use maps to VL %d, expected 0..%d", vl, vlField-1)
	}
	return nil
}

// run walks the destinations a block of LIDs at a time, each worker its
// blocks in increasing order (so that each keeps its first examples).
func (v *verifier) run() {
	nblocks := v.g.MaxLID()/block + 1
	wks := make([]*walker, parallel.Workers(nblocks, v.opt.Workers))
	_ = parallel.For(context.Background(), nblocks, v.opt.Workers, func(w, b int) error {
		if wks[w] == nil {
			wks[w] = newWalker(v)
		}
		wks[w].block(b)
		return nil
	})
	for _, wk := range wks {
		if wk != nil {
			wk.flush()
		}
	}
}

func (v *verifier) report() *Report {
	rep := v.reportPairs()
	v.reportCDG(rep)
	return rep
}

// reportPairs reports all but the CDG.
func (v *verifier) reportPairs() *Report {
	g := v.g
	rep := &Report{
		Destinations: v.dests, Pairs: v.pairs, Delivered: v.deliv, Unconnected: v.unconn,
		Loops: v.loops, DeadEnds: v.dead, VLLimit: v.opt.MaxVLs, NumVLs: v.r.NumVLs,
		VLsUsed: bits.Len32(v.vlMask),
	}
	// Sources are the ports whose paths are walked: those cabled to a
	// switch (a CA cabled to another CA sends into no switch).
	for _, n := range v.nsrc {
		rep.Sources += int(n)
	}
	if v.opt.SwitchSources || v.opt.SwitchDelivery {
		rep.Sources += g.NumSwitches()
	}
	sort.Slice(v.examples, func(i, j int) bool {
		a, b := v.examples[i], v.examples[j]
		if a.dlid != b.dlid {
			return a.dlid < b.dlid
		}
		return a.src < b.src
	})
	for i := 0; i < len(v.examples) && i < v.opt.MaxExamples; i++ {
		rep.Examples = append(rep.Examples, v.examples[i].f)
	}
	return rep
}

// reportCDG fills the CDG's counts and cycle into rep from the
// dependency bitset and returns the CDG.
func (v *verifier) reportCDG(rep *Report) *CSR {
	csr := v.csr(rep)
	if cyc := FindCycle(csr); cyc != nil {
		rep.Cycle = newCycleError(v.g, cyc, v.V)
	}
	return csr
}

// csr turns the dependency bitset into a graph over virtual channels and
// fills the edge counts of rep. Each vertex's successors keep the order of
// the bits, as NewCSR keeps the order of an edge list.
func (v *verifier) csr(rep *Report) *CSR {
	V := v.V
	rep.EdgesPerVL = make([]int, V)
	n := v.g.NumChannels() * V
	// Counts go to off[from+2], so that after the prefix sums off[from+1]
	// is where from's successors start, and filling them moves it on to
	// where they end: off[:n+1] is then the CSR's offsets, with no copy.
	off := make([]int32, n+2)
	var m int64
	v.eachEdge(func(from, _ int32, vl1, vl2 int) {
		off[from+2]++
		m++
		if vl1 == vl2 {
			rep.EdgesPerVL[vl1]++
		} else {
			rep.CrossVL++
		}
	})
	if m > 1<<31-1 {
		panic(fmt.Sprintf("cdg: %d dependencies exceed the int32 CSR limit", m))
	}
	rep.CDGEdges = int(m)
	for i := 2; i < n+2; i++ {
		off[i] += off[i-1]
	}
	g := &CSR{Adj: make([]int32, m)}
	v.eachEdge(func(from, to int32, _, _ int) {
		g.Adj[off[from+1]] = to
		off[from+1]++
	})
	g.Off = off[:n+1]
	return g
}

// eachEdge calls fn for every dependency of the bitset in bit order: from
// and to are virtual-channel vertices (channel*V + VL).
func (v *verifier) eachEdge(fn func(from, to int32, vl1, vl2 int)) {
	g, V := v.g, v.V
	per := int64(V)
	if v.cross {
		per *= int64(V)
	}
	for c := 0; c < g.NumChannels(); c++ {
		head := g.Head[c]
		lo, hi := v.tbase[c]*per, v.tbase[c+1]*per
		// The set bits of [lo, hi) in increasing order, a word at a time.
		for b := lo; b < hi; b++ {
			word := v.edges[b>>6] >> (b & 63)
			if word == 0 {
				b |= 63 // the loop's b++ moves to the next word
				continue
			}
			b += int64(bits.TrailingZeros64(word))
			if b >= hi {
				break
			}
			rel := b - lo
			k := rel / per
			vl1, vl2 := int(rel%per), int(rel%per)
			if v.cross {
				vl1, vl2 = int(rel%per)/V, int(rel%per)%V
			}
			c2 := g.Off[head] + int32(k)
			fn(int32(c)*int32(V)+int32(vl1), c2*int32(V)+int32(vl2), vl1, vl2)
		}
	}
}
