package enginetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"

	// Engines register themselves with routing.Register from init.
	_ "github.com/nuesm/nuesm/dfsssp"
	_ "github.com/nuesm/nuesm/nue"
	_ "github.com/nuesm/nuesm/sar"
	_ "github.com/nuesm/nuesm/studies/novacube" // the "pora" engine
)

// maxVLs is the VL limit of the main conformance runs: routing's default,
// the eight data VLs most switches offer.
const maxVLs = routing.DefaultMaxVLs

// tightLimits are the VL limits every engine also runs with, where
// VL-bounded engines must refuse with a *routing.VLError or fit.
var tightLimits = []int{1, 2}

// allLimits are the VL limits of every run, the default first.
var allLimits = append([]int{maxVLs}, tightLimits...)

// outcome is what an engine did with a fabric.
type outcome uint8

const (
	ok            outcome = iota // tables delivered every pair; CDG acyclic per VL
	cyclic                       // tables delivered every pair; CDG cyclic (engines without deadlock freedom)
	notApplicable                // refused the shape: routing.ErrNotApplicable
	needVLs                      // refused: *routing.VLError
	broken                       // anything else: a test failure
)

func (o outcome) String() string {
	return [...]string{"ok", "cyclic", "n/a", "needVLs", "BROKEN"}[o]
}

// result is one (fabric, engine, VL limit) run.
type result struct {
	limit int
	out   outcome
	vls   int // VLs the tables use, or VLError.Needed
	r     *lft.Routing
}

// cell renders the result for the summary table.
func (res *result) cell() string {
	switch res.out {
	case ok:
		return fmt.Sprintf("ok/%d", res.vls)
	case cyclic:
		return fmt.Sprintf("CYC/%d", res.vls)
	case needVLs:
		return fmt.Sprintf("VL>%d(%d)", res.limit, res.vls)
	}
	return res.out.String()
}

// maxRefPairs bounds the fabrics on which every routing is also walked
// by the naive Reference (terminals × destination LIDs).
const maxRefPairs = 40000

// refChecked counts the routings compared with the Reference.
var refChecked atomic.Int64

// runEngine routes g with one engine under a VL limit and checks what
// comes back against the engine contract (routing.Engine) and the
// expectations.
func runEngine(t *testing.T, name string, c *fabricCase, g *fabric.Graph, limit int) *result {
	t.Helper()
	e, err := newEngine(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: limit})
	res := &result{limit: limit, r: r}
	var ve *routing.VLError
	switch {
	case err == nil && r == nil:
		t.Errorf("%s: neither tables nor an error", name)
		res.out = broken
	case err == nil:
		res.out, res.vls = checkTables(t, e, c, g, r, limit)
	case r != nil:
		t.Errorf("%s: tables and an error: %v", name, err)
		res.out = broken
	case errors.Is(err, routing.ErrNotApplicable):
		res.out = notApplicable
		if !contract[name].shapes {
			t.Errorf("%s refuses %s as not applicable, but its contract covers every fabric: %v", name, c.name, err)
		}
	case errors.As(err, &ve):
		res.out, res.vls = needVLs, ve.Needed
		if !contract[name].vlBounded {
			t.Errorf("%s needs more VLs on %s, but its contract has no VL bound: %v", name, c.name, err)
		}
		if ve.Limit != limit || ve.Needed <= ve.Limit || !errors.Is(err, routing.ErrNeedVLs) {
			t.Errorf("%s: malformed VLError (needed %d, limit %d, want limit %d and more needed): %v", name, ve.Needed, ve.Limit, limit, err)
		}
		if ve.Engine != name {
			t.Errorf("%s: VLError names engine %q, want its own name", name, ve.Engine)
		}
	default:
		t.Errorf("%s on %s: unexpected error (neither ErrNotApplicable nor *VLError): %v", name, c.name, err)
		res.out = broken
	}
	if err != nil && limit == maxVLs {
		t.Logf("%s / %-15s %-8s %v", c.name, name, res.out, err)
	}
	if want, why := expected(name, c, limit); want != nil && !slices.Contains(want, res.out) {
		t.Errorf("%s on %s, %d VLs: %s, expected %v (%s)", name, c.name, limit, res.cell(), want, why)
	}
	if vls, why := expectedVLs(name, c, limit); vls > 0 && (res.out == ok || res.out == cyclic || res.out == needVLs) && res.vls != vls {
		t.Errorf("%s on %s, %d VLs: %s, expected %d VLs (%s)", name, c.name, limit, res.cell(), vls, why)
	}
	return res
}

// checkTables verifies a routing: every connected pair delivered without
// loops or dead ends (from every CA and router port and, where the engine
// promises it, from every switch), VLs within the limit and the claim,
// and an acyclic CDG for engines that claim deadlock freedom.
func checkTables(t *testing.T, e routing.Engine, c *fabricCase, g *fabric.Graph, r *lft.Routing, limit int) (outcome, int) {
	t.Helper()
	name := e.Name()
	if err := r.CheckShape(g); err != nil {
		t.Errorf("%s: %v", name, err)
		return broken, 0
	}
	opt := cdg.Options{MaxVLs: limit, SwitchDelivery: !contract[name].caDeliveryOnly}
	rep, _ := cdg.Verify(g, r, opt)
	if rep == nil {
		t.Errorf("%s: no report", name)
		return broken, 0
	}
	out := ok
	if rep.Cycle != nil {
		out = cyclic
	}
	if rep.Delivered != rep.Pairs {
		t.Errorf("%s on %s: %d of %d pairs undelivered (%d loops, %d dead ends):\n%s", name, c.name, rep.Pairs-rep.Delivered, rep.Pairs, rep.Loops, rep.DeadEnds, rep)
		out = broken
	}
	if rep.VLsUsed > r.NumVLs || r.NumVLs > limit {
		t.Errorf("%s on %s: uses %d VLs, claims %d, limit %d", name, c.name, rep.VLsUsed, r.NumVLs, limit)
		out = broken
	}
	if e.DeadlockFree() && rep.Cycle != nil {
		t.Errorf("%s on %s: BUG: claims deadlock freedom, but its CDG is cyclic:\n%s", name, c.name, rep.Cycle.Long())
		out = broken
	}
	if limit == maxVLs && len(g.Terms)*(g.MaxLID()+1) <= maxRefPairs {
		compareReference(t, name, g, r, opt, rep)
	}
	return out, r.NumVLs
}

// compareReference checks the verifier's report on engine tables against
// the naive Reference.
func compareReference(t *testing.T, name string, g *fabric.Graph, r *lft.Routing, opt cdg.Options, rep *cdg.Report) {
	t.Helper()
	refChecked.Add(1)
	ref := Reference(g, r, RefOptions{SwitchSources: opt.SwitchSources, SwitchDelivery: opt.SwitchDelivery})
	per, cross := ref.EdgesPerVL()
	got := fmt.Sprintf("pairs %d/%d/%d, VLs %d, deps %d (cross %d), cyclic %v",
		rep.Pairs, rep.Delivered, rep.Unconnected, rep.VLsUsed, rep.CDGEdges, rep.CrossVL, rep.Cycle != nil)
	want := fmt.Sprintf("pairs %d/%d/%d, VLs %d, deps %d (cross %d), cyclic %v",
		ref.Pairs, ref.Delivered, ref.Unconnected, ref.VLsUsed, len(ref.Deps), cross, ref.Cyclic())
	if got != want {
		t.Errorf("%s: the verifier and the reference disagree:\nverifier:  %s\nreference: %s", name, got, want)
	}
	for vl := 0; vl < 16; vl++ {
		n := 0
		if vl < len(rep.EdgesPerVL) {
			n = rep.EdgesPerVL[vl]
		}
		if n != per[uint8(vl)] {
			t.Errorf("%s: VL%d: the verifier has %d dependencies, the reference %d", name, vl, n, per[uint8(vl)])
		}
	}
	if rep.Cycle != nil {
		vs := make([]VChan, len(rep.Cycle.Channels))
		for i, ch := range rep.Cycle.Channels {
			vs[i] = VChan{ch, rep.Cycle.VLs[i]}
		}
		if !ref.IsCycle(vs) {
			t.Errorf("%s: the verifier's cycle is not one of the reference's dependencies: %v", name, rep.Cycle)
		}
	}
}

// key names one run.
type key struct {
	fabric, engine string
	limit          int
}

// results collects the outcomes for the summary.
type results struct {
	mu sync.Mutex
	m  map[key]*result
}

func (rs *results) put(k key, res *result) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.m[k] = res
}

func (rs *results) get(k key) *result {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.m[k]
}

// TestConformance runs every registered engine on every fabric of the
// table (the small ones with -short), with the default limit of 8 VLs and
// with the tight limits.
func TestConformance(t *testing.T) {
	engines := suiteEngines()
	for _, must := range []string{"minhop", "updn", "ftree", "dor", "dor-nodateline", "lash", "nue", "sssp", "dfsssp"} {
		if !slices.Contains(engines, must) {
			t.Errorf("engine %q is not registered", must)
		}
	}
	for _, name := range engines {
		if _, known := contract[name]; !known {
			t.Errorf("engine %q has no entry in the contract table; add one (which refusals it may make)", name)
		}
	}
	cases := fabricCases()
	if len(corpusCases()) == 0 {
		t.Logf("SKIP LOUDLY: no ibnetdiscover corpus at %s; the table runs without the sample dumps", corpusDir)
	}
	rs := &results{m: map[key]*result{}}
	start := time.Now()
	t.Run("fabric", func(t *testing.T) {
		for _, c := range cases {
			if testing.Short() && !c.short {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				g, err := c.graph()
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range engines {
					for _, limit := range allLimits {
						rs.put(key{c.name, name, limit}, runEngine(t, name, c, g, limit))
					}
					checkLimits(t, rs, c.name, name)
				}
				for _, limit := range allLimits {
					checkAliases(t, rs, c.name, limit)
				}
			})
		}
	})
	t.Logf("engine × fabric outcomes at %d VLs (ok/V: verified, acyclic, V VLs; CYC/V: delivers, CDG cyclic; n/a: not applicable; VL>L(N): needs N VLs), %v in all:\n%s",
		maxVLs, time.Since(start).Round(time.Millisecond), summary(rs, cases, engines, []int{maxVLs}))
	var bounded []string
	for _, e := range engines {
		if contract[e].vlBounded || contract[e].vlSensitive {
			bounded = append(bounded, e)
		}
	}
	t.Logf("VL-bounded and VL-sensitive engines at %v VLs (the others gave the same tables as at %d VLs):\n%s",
		tightLimits, maxVLs, summary(rs, cases, bounded, tightLimits))
	t.Logf("%d routings also compared with the naive reference verifier", refChecked.Load())
}

// checkLimits compares an engine's runs at the different VL limits.
// Shape refusals do not depend on the limit; a VLError at some limit
// implies one at every lower limit; engines that are not VL-sensitive
// give the same tables at every limit they fit in; engines that report
// the exact VL count (contract.exactNeeded) need as many VLs as their
// tables use at the default limit.
func checkLimits(t *testing.T, rs *results, fabric, engine string) {
	t.Helper()
	c := contract[engine]
	def := rs.get(key{fabric, engine, maxVLs})
	for _, lo := range allLimits {
		a := rs.get(key{fabric, engine, lo})
		for _, hi := range allLimits {
			b := rs.get(key{fabric, engine, hi})
			if lo < hi && b.out == needVLs && a.out != needVLs {
				t.Errorf("%s on %s: %s at %d VLs but %s at %d", engine, fabric, b.cell(), hi, a.cell(), lo)
			}
		}
		if (a.out == notApplicable) != (def.out == notApplicable) {
			t.Errorf("%s on %s: %s at %d VLs, %s at %d: the shape does not depend on the VL limit", engine, fabric, a.cell(), lo, def.cell(), maxVLs)
		}
		if !c.vlSensitive && a.r != nil && def.r != nil && !lft.Equal(a.r, def.r) {
			t.Errorf("%s on %s: the tables at %d VLs differ from those at %d", engine, fabric, lo, maxVLs)
		}
		if c.exactNeeded && def.r != nil {
			switch {
			case lo >= def.vls && a.r == nil:
				t.Errorf("%s on %s: %s at %d VLs, but its tables use %d VLs", engine, fabric, a.cell(), lo, def.vls)
			case lo < def.vls && (a.out != needVLs || a.vls != def.vls):
				t.Errorf("%s on %s: %s at %d VLs, want a VLError needing exactly %d", engine, fabric, a.cell(), lo, def.vls)
			}
		}
	}
}

// checkAliases: the sar-* engines route exactly like their base engines
// when no jobs are given.
func checkAliases(t *testing.T, rs *results, fabric string, limit int) {
	t.Helper()
	for alias, base := range map[string]string{"sar-nue": "nue", "sar-dfsssp": "dfsssp"} {
		a, b := rs.get(key{fabric, alias, limit}), rs.get(key{fabric, base, limit})
		if a == nil || b == nil {
			continue
		}
		if a.out != b.out || a.vls != b.vls || (a.r != nil && !lft.Equal(a.r, b.r)) {
			t.Errorf("%s differs from %s without jobs at %d VLs: %s vs %s", alias, base, limit, a.cell(), b.cell())
		}
	}
}

// summary renders the outcome table, one row per fabric and one column
// per engine and limit.
func summary(rs *results, cases []*fabricCase, engines []string, limits []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s", "fabric")
	for _, e := range engines {
		for _, l := range limits {
			h := e
			if len(limits) > 1 {
				h = fmt.Sprintf("%s@%d", e, l)
			}
			fmt.Fprintf(&b, " %-14s", h)
		}
	}
	b.WriteString("\n")
	for _, c := range cases {
		if rs.get(key{c.name, engines[0], limits[0]}) == nil {
			continue
		}
		fmt.Fprintf(&b, "%-32s", c.name)
		for _, e := range engines {
			for _, l := range limits {
				cell := "-"
				if res := rs.get(key{c.name, e, l}); res != nil {
					cell = res.cell()
				}
				fmt.Fprintf(&b, " %-14s", cell)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
