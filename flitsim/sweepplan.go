package flitsim

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/lft"
)

// EngineSpec is one engine of a sweep: its label as given
// ("nue:share=switch/4"), the engine spec (a registered name with its
// parameters) and the VL limit.
type EngineSpec struct {
	Label, Name string
	VLs         int
}

// ParseEngineSpecs reads a comma-separated list of SPEC or SPEC/K (K the
// VL limit, 1..15; defVLs without it). A SPEC is one engine with its
// parameters (nue:share=switch); the VL limit follows the last '/'. known
// checks a spec (the engine registry's parse); labels may not repeat.
func ParseEngineSpecs(s string, defVLs int, known func(name string) error) ([]EngineSpec, error) {
	var out []EngineSpec
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		e := EngineSpec{Label: f, Name: f, VLs: defVLs}
		if i := strings.LastIndexByte(f, '/'); i >= 0 {
			name, k := strings.TrimSpace(f[:i]), strings.TrimSpace(f[i+1:])
			v, err := strconv.Atoi(k)
			if err != nil || v < 1 || v > 15 {
				return nil, fmt.Errorf("engine %q: VL limit %q, expected 1..15", f, k)
			}
			e.Name, e.VLs = name, v
		}
		if err := known(e.Name); err != nil {
			return nil, err
		}
		if seen[f] {
			return nil, fmt.Errorf("engine %q listed twice", f)
		}
		seen[f] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no engine given")
	}
	return out, nil
}

// ParseList parses "a,b,c" or a range "from:to[:step]" (step default 1):
// finite numbers only, at most 10,001 of them, a range ascending.
func ParseList(s string) ([]float64, error) {
	if from, rest, ok := strings.Cut(s, ":"); ok {
		to, st, _ := strings.Cut(rest, ":")
		if st == "" {
			st = "1"
		}
		a, e1 := strconv.ParseFloat(from, 64)
		b, e2 := strconv.ParseFloat(to, 64)
		d, e3 := strconv.ParseFloat(st, 64)
		if e1 != nil || e2 != nil || e3 != nil || !finite(a, b, d) || d <= 0 || b < a || (b-a)/d > 10000 {
			return nil, fmt.Errorf("range %q, expected FROM:TO:STEP with FROM <= TO and STEP > 0", s)
		}
		n := int((b-a)/d+1e-6) + 1 // counted, not compared: no endless loop on odd floats
		out := make([]float64, 0, n)
		for i := range n {
			x := a + float64(i)*d
			if math.Abs(x) < 1e9 {
				// Round to 1e-9 so that 0.1:1:0.1 gives 0.3, not 0.30000000000000004.
				x = math.Round(x*1e9) / 1e9
			}
			out = append(out, x)
		}
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || !finite(x) {
			return nil, fmt.Errorf("list %q: %q is not a finite number", s, f)
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// ParseLoads parses a list or range of offered loads in (0, 1].
func ParseLoads(s string) ([]float64, error) {
	loads, err := ParseList(s)
	if err != nil {
		return nil, err
	}
	for _, l := range loads {
		if !(l > 0 && l <= 1) {
			return nil, fmt.Errorf("load %g, expected (0, 1]", l)
		}
	}
	return loads, nil
}

// ParseSeeds parses a list or range of seeds.
func ParseSeeds(s string) ([]uint64, error) {
	sv, err := ParseList(s)
	if err != nil {
		return nil, err
	}
	seeds := make([]uint64, len(sv))
	for i, x := range sv {
		if x < 0 || x != float64(uint64(x)) {
			return nil, fmt.Errorf("%g is not a seed", x)
		}
		seeds[i] = uint64(x)
	}
	return seeds, nil
}

// SweepNetSpec is one simulated network of a sweep: an engine's tables
// under a routing policy; Label names its points (ENGINE, or
// ENGINE@POLICY).
type SweepNetSpec struct {
	Label  string
	Engine EngineSpec
	Policy PolicySpec
}

// SweepPlan is a sweep resolved: its networks and points.
type SweepPlan struct {
	Nets    []SweepNetSpec
	Pattern Pattern
	Points  []Point
}

// PlanSweep lists engines × policies (labelled ENGINE@POLICY unless the
// only policy is the LFT) × loads × seeds. The shift exchange is finite
// and has one load, 0.
func PlanSweep(engines []EngineSpec, policies []PolicySpec, pattern Pattern, loads []float64, seeds []uint64) *SweepPlan {
	if pattern == Shift {
		loads = []float64{0}
	}
	pl := &SweepPlan{Pattern: pattern}
	var labels []string
	for _, e := range engines {
		for _, sp := range policies {
			ns := SweepNetSpec{Label: e.Label, Engine: e, Policy: sp}
			if len(policies) > 1 || sp.Spec != "lft" {
				ns.Label += "@" + sp.Spec
			}
			pl.Nets = append(pl.Nets, ns)
			labels = append(labels, ns.Label)
		}
	}
	pl.Points = SweepPoints(labels, loads, seeds)
	return pl
}

// SweepSetup is what running a plan needs besides the plan.
type SweepSetup struct {
	Config Config
	// Route routes the fabric with one engine (verified by the caller's
	// route-and-verify function); Env builds the policies.
	Route func(ctx context.Context, e EngineSpec) (*lft.Routing, error)
	Env   PolicyEnv
	// Traffic gives the workload on a network (load set per point).
	Traffic func(n *Network) (Traffic, error)
	// BoundSeed seeds Network.Bound; Options are the run options (the
	// seed is the point's).
	BoundSeed uint64
	Options   RunOptions
	Workers   int
	// Log receives one line per network that is not simulated.
	Log io.Writer
}

// Run routes and compiles every network the points need, simulates the
// points on a worker pool and returns one row per point, in order. A
// network that fails to route, verify or compile gets rows carrying the
// reason; a Traffic error is returned (it is wrong for every engine).
func (s SweepSetup) Run(ctx context.Context, pl *SweepPlan, points []Point) ([]Row, error) {
	nets, failed, tr, err := s.networks(ctx, pl, points)
	if err != nil {
		return nil, err
	}
	var run []Point
	for _, p := range points {
		if _, ok := nets[p.Engine]; ok {
			run = append(run, p)
		}
	}
	done, err := Sweep(ctx, nets, tr, s.Options, run, s.Workers)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(points))
	k := 0
	for _, p := range points {
		if why, ok := failed[p.Engine]; ok {
			rows = append(rows, Row{Point: p, Pattern: pl.Pattern.String(), Error: why})
			continue
		}
		rows = append(rows, done[k])
		k++
	}
	return rows, nil
}

// networks routes each engine the points need once, applies the policies
// and computes the bounds of the plain LFTs; failed maps a label to why
// it is not simulated.
func (s SweepSetup) networks(ctx context.Context, pl *SweepPlan, points []Point) (nets map[string]SweepNet, failed map[string]string, tr Traffic, err error) {
	nets, failed = map[string]SweepNet{}, map[string]string{}
	type routed struct {
		n   *Network
		err error
	}
	byEngine := map[string]routed{}
	for _, ns := range pl.Nets {
		if !hasEngine(points, ns.Label) {
			continue
		}
		rt, ok := byEngine[ns.Engine.Label]
		if !ok {
			r, err := s.Route(ctx, ns.Engine)
			if err == nil {
				rt.n, err = NewNetwork(s.Env.Graph, r, s.Config)
			}
			rt.err = err
			byEngine[ns.Engine.Label] = rt
		}
		n, err := rt.n, rt.err
		if err == nil {
			n, err = ns.Policy.Apply(n, s.Env)
		}
		if err == nil {
			if tr, err = s.Traffic(n); err != nil {
				return nil, nil, tr, err // the traffic is wrong for every engine
			}
		}
		var b *Bound
		if err == nil && ns.Policy.Plain() { // the bound walks the LFT paths
			b, err = n.Bound(tr, s.BoundSeed)
		}
		if err != nil {
			fmt.Fprintf(s.Log, "%s: not simulated: %v\n", ns.Label, err)
			failed[ns.Label] = err.Error()
			continue
		}
		nets[ns.Label] = SweepNet{Net: n, Bound: b}
	}
	return nets, failed, tr, nil
}

func hasEngine(points []Point, label string) bool {
	for _, p := range points {
		if p.Engine == label {
			return true
		}
	}
	return false
}
