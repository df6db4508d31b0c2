package topo

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// fiRandom builds a random switch graph (connected or not) with 0..maxHosts
// single-port CAs per switch.
func fiRandom(t testing.TB, r *rand.Rand, maxSwitches int, p float64, maxHosts int) *fabric.Fabric {
	t.Helper()
	n := 2 + r.IntN(maxSwitches-1)
	hosts := make([]int, n)
	for i := range hosts {
		hosts[i] = r.IntN(maxHosts + 1)
	}
	var cables [][2]int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < p {
				cables = append(cables, [2]int{i, j})
				if r.IntN(6) == 0 {
					cables = append(cables, [2]int{i, j}) // parallel cable
				}
			}
		}
	}
	return fiFabric(t, hosts, cables)
}

// fiSame reports whether two failure lists are identical.
func fiSame(a, b []Failure) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Link != y.Link || x.Switch != y.Switch || x.Critical != y.Critical || !x.LostCAs.Equals(y.LostCAs) {
			return false
		}
	}
	return true
}

// fiCheckStep checks one failure against fabric.Components of the fabrics
// before and after it (single-port CAs only, so Components equals host
// connectivity).
func fiCheckStep(t *testing.T, orig, before, after *fabric.Fabric, fl Failure) {
	t.Helper()
	gb, ga := fiCAGroups(before), fiCAGroups(after)
	lostPartner := map[uint64]bool{}
	for g, n := range gb {
		if ga[g] < n {
			lostPartner[g] = true
		}
	}
	if fl.Critical != (len(lostPartner) > 0) {
		t.Fatalf("%+v: critical=%v, but %d CAs lost partners", fl, fl.Critical, len(lostPartner))
	}
	comp := fiCompOf(after)
	lost := map[uint64]bool{}
	maxLost := 0
	for _, g := range fiLostGUIDs(orig, fl) {
		if !lostPartner[g] {
			t.Fatalf("%+v: CA %#x reported lost but reaches everyone it reached before", fl, g)
		}
		lost[g] = true
		maxLost = max(maxLost, ga[g])
	}
	mainComp := -1
	for g := range lostPartner {
		if lost[g] {
			continue
		}
		if mainComp >= 0 && comp[g] != mainComp {
			t.Fatalf("%+v: CAs that lost partners but are not reported lost sit in two parts", fl)
		}
		mainComp = comp[g]
		if ga[g] < maxLost {
			t.Fatalf("%+v: main part has %d CAs, a lost CA's part %d", fl, ga[g], maxLost)
		}
	}
	if fl.Critical && len(lost) == 0 {
		t.Fatalf("%+v: critical without lost CAs", fl)
	}
}

func TestFailuresMatchComponents(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var critical, nonCritical int
	for trial := 0; trial < 60; trial++ {
		f := fiRandom(t, r, 14, 0.1+0.4*r.Float64(), 3)
		seed := r.Uint64()
		for _, kind := range []FailureKind{LinkFailure, SwitchFailure} {
			avail := f.Count(fabric.Switch)
			if kind == LinkFailure {
				avail = len(f.Links()) - f.Count(fabric.CA)
			}
			n := min(avail, 6)
			spec := func(k int) FailureSpec {
				if kind == LinkFailure {
					return FailureSpec{Links: k, Seed: seed}
				}
				return FailureSpec{Switches: k, Seed: seed}
			}
			_, all := mustInject(t, f, spec(n))
			prev := f
			for k := 1; k <= n; k++ {
				out, fails := mustInject(t, f, spec(k))
				if !fiSame(fails, all[:k]) {
					t.Fatalf("trial %d: %d failures are no prefix of %d", trial, k, n)
				}
				fiCheckStep(t, f, prev, out, fails[k-1])
				if fails[k-1].Critical {
					critical++
				} else {
					nonCritical++
				}
				prev = out
			}
		}
	}
	if critical < 30 || nonCritical < 30 {
		t.Errorf("weak sample: %d critical, %d non-critical failures", critical, nonCritical)
	}
}

// fiUnplug returns a copy of f without cable l.
func fiUnplug(f *fabric.Fabric, l fabric.Link) *fabric.Fabric {
	g := f.Clone()
	g.Port(l.A).Peer, g.Port(l.B).Peer = fabric.NoPeer, fabric.NoPeer
	return g
}

func TestFailuresSkipCriticalExhaustsAlternatives(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	checked := 0
	for trial := 0; trial < 40; trial++ {
		f := fiRandom(t, r, 10, 0.2+0.5*r.Float64(), 2)
		want := fiCAGroups(f)
		avail := len(f.Links()) - f.Count(fabric.CA)
		seed := r.Uint64()
		// The largest count a fail-in-place run reaches with this seed.
		best := -1
		for m := avail; m >= 0; m-- {
			out, fails, err := InjectFailures(f, FailureSpec{Links: m, Seed: seed, SkipCritical: true})
			if errors.Is(err, ErrAllCritical) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range fails {
				if fl.Critical {
					t.Fatalf("trial %d: SkipCritical returned %+v", trial, fl)
				}
			}
			if got := fiCAGroups(out); !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: fail-in-place changed host connectivity", trial)
			}
			best = m
			// No alternative was left: every remaining switch-to-switch
			// cable would disconnect some hosts.
			for _, l := range out.Links() {
				if out.Nodes[l.A.Node].Kind != fabric.Switch || out.Nodes[l.B.Node].Kind != fabric.Switch {
					continue
				}
				if got := fiCAGroups(fiUnplug(out, l)); reflect.DeepEqual(got, want) {
					t.Fatalf("trial %d: stopped at %d failures, but cable %v is non-critical", trial, m, l)
				}
				checked++
			}
			break
		}
		if best < 0 {
			t.Fatalf("trial %d: even zero failures failed", trial)
		}
	}
	if checked < 50 {
		t.Errorf("only %d remaining cables checked", checked)
	}
}

// TestFailuresQuickPath checks the injector's quick test against the full
// computation: whatever it calls harmless changes no CA's reach.
func TestFailuresQuickPath(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	var harmless, full int
	for trial := 0; trial < 80; trial++ {
		f := fiRandom(t, r, 16, 0.05+0.4*r.Float64(), 2)
		inj, err := newInjector(f, trial%2 == 0)
		if err != nil {
			t.Fatal(err)
		}
		inj.shuffle(r)
		// Some failures first, critical ones included.
		if _, err := inj.draw(r, min(len(inj.linkPool), r.IntN(4)), min(len(inj.switchPool), r.IntN(3)), applyCritical); err != nil && !errors.Is(err, ErrFailureSpec) {
			t.Fatal(err)
		}
		var cands []cand
		for c := range inj.cables {
			if inj.cableLive(int32(c)) {
				cands = append(cands, cand{cable: int32(c), sw: fabric.NoNode})
			}
		}
		for _, s := range inj.switchPool {
			if !inj.nodeDead[s] {
				cands = append(cands, cand{cable: -1, sw: s})
			}
		}
		for _, x := range cands {
			inj.label(x, &inj.tmp)
			after := inj.reach(&inj.tmp)
			changed := !slices.Equal(after, inj.partners)
			if inj.harmless(x) {
				harmless++
				if changed {
					t.Fatalf("trial %d: %+v called harmless, but CA reach changes", trial, x)
				}
			} else {
				full++
			}
			critical, lost, _ := inj.evaluate(x)
			if critical != changed || critical == lost.IsEmpty() {
				t.Fatalf("trial %d: %+v: critical %v, reach changed %v, lost %v", trial, x, critical, changed, lost)
			}
		}
	}
	if harmless < 100 || full < 100 {
		t.Errorf("weak sample: %d harmless, %d full", harmless, full)
	}
}

func TestFailuresDeterministic(t *testing.T) {
	f := fiTwoLevel(t, 4, 8, 2)
	spec := FailureSpec{Links: 5, Switches: 3, Seed: 77}
	out1, fails1 := mustInject(t, f, spec)
	out2, fails2 := mustInject(t, f, spec)
	if !fiSame(fails1, fails2) || !reflect.DeepEqual(out1.Nodes, out2.Nodes) || !slices.Equal(out1.Header, out2.Header) {
		t.Fatal("same seed, different results")
	}
	if len(fails1) != 8 {
		t.Fatalf("%d failures, want 8", len(fails1))
	}
	var links, switches int
	for _, fl := range fails1 {
		if fl.Kind == LinkFailure {
			links++
		} else {
			switches++
		}
	}
	if links != 5 || switches != 3 || out1.Count(fabric.Switch) != 12-3 {
		t.Fatalf("%d links %d switches failed, %d switches left", links, switches, out1.Count(fabric.Switch))
	}
	differ := false
	for seed := uint64(0); seed < 5 && !differ; seed++ {
		spec.Seed = seed
		_, other := mustInject(t, f, spec)
		differ = !fiSame(other, fails1)
	}
	if !differ {
		t.Fatal("five other seeds all gave the same failures")
	}
	// The input fabric is not modified.
	if err := f.Validate(); err != nil || len(f.Links()) != 4*8+16 {
		t.Fatalf("input changed: %v, %d cables", err, len(f.Links()))
	}
}

func TestFailuresCounts(t *testing.T) {
	tp, err := Ring(10, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := tp.Fabric
	cases := []struct {
		spec        FailureSpec
		links, sws  int
		wantErr     error
		description string
	}{
		{FailureSpec{}, 0, 0, nil, "nothing"},
		{FailureSpec{Links: 3}, 3, 0, nil, "3 links"},
		{FailureSpec{LinkFraction: 0.25}, 3, 0, nil, "2.5 links round up"},
		{FailureSpec{LinkFraction: 0.24}, 2, 0, nil, "2.4 links round down"},
		{FailureSpec{LinkFraction: 1}, 10, 0, nil, "every link"},
		{FailureSpec{Links: 10}, 10, 0, nil, "every link by count"},
		{FailureSpec{SwitchFraction: 0.5}, 0, 5, nil, "half the switches"},
		{FailureSpec{Switches: 10}, 0, 10, nil, "every switch"},
		{FailureSpec{Links: 2, Switches: 2}, 2, 2, nil, "both kinds"},
		{FailureSpec{Links: 11}, 0, 0, ErrFailureSpec, "more links than cables"},
		{FailureSpec{Switches: 11}, 0, 0, ErrFailureSpec, "more switches than there are"},
		{FailureSpec{Links: -1}, 0, 0, ErrFailureSpec, "negative links"},
		{FailureSpec{Switches: -1}, 0, 0, ErrFailureSpec, "negative switches"},
		{FailureSpec{LinkFraction: -0.1}, 0, 0, ErrFailureSpec, "negative fraction"},
		{FailureSpec{LinkFraction: 1.01}, 0, 0, ErrFailureSpec, "fraction above 1"},
		{FailureSpec{SwitchFraction: math.NaN()}, 0, 0, ErrFailureSpec, "NaN fraction"},
		{FailureSpec{SwitchFraction: math.Inf(1)}, 0, 0, ErrFailureSpec, "infinite fraction"},
		{FailureSpec{Links: 1, LinkFraction: 0.5}, 0, 0, ErrFailureSpec, "count and fraction"},
	}
	for _, c := range cases {
		out, fails, err := InjectFailures(f, c.spec)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) || out != nil || fails != nil {
				t.Errorf("%s: err %v, want %v", c.description, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.description, err)
			continue
		}
		var links, sws int
		for _, fl := range fails {
			if fl.Kind == LinkFailure {
				links++
			} else {
				sws++
			}
		}
		if links != c.links || sws != c.sws || out.Count(fabric.Switch) != 10-c.sws || out.Count(fabric.CA) != 20 {
			t.Errorf("%s: %d links %d switches failed, want %d %d", c.description, links, sws, c.links, c.sws)
		}
		if err := out.Validate(); err != nil {
			t.Errorf("%s: result invalid: %v", c.description, err)
		}
	}
	// Switch failures take cables with them: with 9 of 10 cables and 5 of
	// 10 switches to fail, some orders run out of cables.
	var ran, ranOut int
	for seed := uint64(0); seed < 20; seed++ {
		_, fails, err := InjectFailures(f, FailureSpec{Links: 9, Switches: 5, Seed: seed})
		switch {
		case errors.Is(err, ErrFailureSpec):
			ranOut++
		case err != nil:
			t.Fatal(err)
		case len(fails) != 14:
			t.Fatalf("seed %d: %d failures, want 14", seed, len(fails))
		default:
			ran++
		}
	}
	if ranOut == 0 || ran == 0 {
		t.Errorf("%d seeds ran out of cables, %d did not; want some of each", ranOut, ran)
	}
	bad := f.Clone()
	bad.Nodes[0].Ports[1].Peer = fabric.NoPeer
	if _, _, err := InjectFailures(bad, FailureSpec{Links: 1}); !errors.Is(err, fabric.ErrAsymmetric) {
		t.Errorf("invalid input fabric: %v", err)
	}
}

func TestFailureYears(t *testing.T) {
	f := fiTwoLevel(t, 8, 16, 2) // 128 inter-switch cables, 24 switches, 32 hosts
	fabs, fails, err := FailureYears(f, 0.01, 0.01, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(fabs) != 8 || len(fails) != 8 {
		t.Fatalf("%d fabrics, %d failure lists, want 8", len(fabs), len(fails))
	}
	ys, err := FailInPlace(f, 0.01, 0.01, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	cables := f.Links()
	for y := 1; y <= 8; y++ {
		checkFailureYear(t, y, fails[y-1], ys[y-1].Repaired, fabs[y-1], cables)
		if y > 1 && !fiSame(fails[y-1][:len(fails[y-2])], fails[y-2]) {
			t.Fatalf("year %d does not extend year %d", y, y-1)
		}
	}
	fabs2, fails2, err := FailureYears(f, 0.01, 0.01, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	for y := range fabs {
		if !fiSame(fails[y], fails2[y]) || !reflect.DeepEqual(fabs[y].Nodes, fabs2[y].Nodes) {
			t.Fatalf("year %d differs between two runs with one seed", y+1)
		}
	}
	// Each year's fabric is its own.
	fabs[7].Nodes[0].Ports[1].Peer = fabric.NoPeer
	if err := fabs[6].Validate(); err != nil {
		t.Fatalf("years share memory: %v", err)
	}

}

// TestFailureYearsInvalid: negative, infinite or NaN rates, rates too
// high for the years, and no years are refused (ErrFailureSpec).
func TestFailureYearsInvalid(t *testing.T) {
	f := fiTwoLevel(t, 8, 16, 2)
	for _, c := range []struct {
		lr, sr float64
		years  int
	}{
		{0.01, 0.01, 0}, {-0.01, 0, 3}, {0, -1, 3}, {0.2, 0, 8}, {0, math.NaN(), 2}, {math.Inf(1), 0, 1},
	} {
		if _, _, err := FailureYears(f, c.lr, c.sr, c.years, 1); !errors.Is(err, ErrFailureSpec) {
			t.Errorf("FailureYears(%v, %v, %d): %v, want ErrFailureSpec", c.lr, c.sr, c.years, err)
		}
	}
}

// TestFailInPlaceTree: in a tree every failure is critical: each event is
// repaired and the fabric stays whole.
func TestFailInPlaceTree(t *testing.T) {
	tree := fiFabric(t, []int{1, 1, 1}, [][2]int{{0, 1}, {0, 2}})
	ys, err := FailInPlace(tree, 0.5, 0, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for y, yr := range ys {
		if len(yr.Failures) != 0 || len(yr.Repaired) != y+1 || len(yr.Fabric.Links()) != len(tree.Links()) {
			t.Errorf("tree year %d: %d applied, %d repaired, %d cables; want 0, %d, %d", y+1, len(yr.Failures), len(yr.Repaired), len(yr.Fabric.Links()), y+1, len(tree.Links()))
		}
	}
}

// checkFailureYear checks year y of FailureYears on fiTwoLevel(8, 16, 2)
// (cables): its failures fy, none critical and no leaf failed in place,
// with the critical ones FailInPlace repaired (repaired) as many events
// as the rates give; its fabric out valid, without the failed parts, and
// every host reaching all 32.
func checkFailureYear(t *testing.T, y int, fy, repaired []Failure, out *fabric.Fabric, cables []fabric.Link) {
	t.Helper()
	wantL := int(math.Round(float64(y) * 0.01 * 128))
	wantS := int(math.Round(float64(y) * 0.01 * 24))
	dead := map[fabric.Link]bool{}
	deadSw := map[fabric.NodeID]bool{}
	var nl, ns int
	for _, fl := range fy {
		if fl.Critical {
			t.Fatalf("year %d: critical failure %+v", y, fl)
		}
		if fl.Kind == LinkFailure {
			nl++
			dead[fl.Link] = true
		} else {
			ns++
			deadSw[fl.Switch] = true
			if fl.Switch >= 8 {
				t.Fatalf("year %d: leaf %d failed in place", y, fl.Switch)
			}
		}
	}
	// Events: the applied failures plus the critical ones repaired
	// (only leaves hold hosts, so only leaf failures are critical).
	rl, rs := 0, 0
	for _, fl := range repaired {
		if !fl.Critical {
			t.Fatalf("year %d: repaired failure %+v is not critical", y, fl)
		}
		if fl.Kind == LinkFailure {
			rl++
		} else {
			rs++
			if fl.Switch < 8 {
				t.Fatalf("year %d: spine %d repaired as critical", y, fl.Switch)
			}
		}
	}
	if nl+rl != wantL || ns+rs != wantS {
		t.Fatalf("year %d: %d+%d link and %d+%d switch events (applied+repaired), want %d %d", y, nl, rl, ns, rs, wantL, wantS)
	}
	live := 0
	for _, l := range cables {
		if !dead[l] && !deadSw[l.A.Node] && !deadSw[l.B.Node] {
			live++
		}
	}
	if err := out.Validate(); err != nil {
		t.Fatalf("year %d: %v", y, err)
	}
	if len(out.Links()) != live || out.Count(fabric.Switch) != 24-ns {
		t.Fatalf("year %d: %d cables %d switches, want %d %d", y, len(out.Links()), out.Count(fabric.Switch), live, 24-ns)
	}
	for g, n := range fiCAGroups(out) {
		if n != 32 {
			t.Fatalf("year %d: host %#x reaches %d hosts, want all 32", y, g, n)
		}
	}
}

func BenchmarkFailureYears(b *testing.B) {
	f := fiTwoLevel(b, 18, 36, 18) // 648 inter-switch cables, 648 hosts
	for b.Loop() {
		if _, _, err := FailureYears(f, 0.01, 0.01, 8, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFailInPlaceRepaired: every critical pick of a fail-in-place run is
// recorded as repaired, with the CAs it would have cut off, and is absent
// from the fabric's failures; the records grow year by year.
func TestFailInPlaceRepaired(t *testing.T) {
	f := fiTwoLevel(t, 8, 16, 2) // leaves 8..23 hold the hosts: failing one is critical
	ys, err := FailInPlace(f, 0.02, 0.04, 6, 11)
	if err != nil {
		t.Fatal(err)
	}
	prev := 0
	for y, yr := range ys {
		applied := map[fabric.NodeID]bool{}
		for _, fl := range yr.Failures {
			if fl.Kind == SwitchFailure {
				applied[fl.Switch] = true
			}
		}
		if len(yr.Repaired) < prev {
			t.Fatalf("year %d: %d repaired, fewer than the year before (%d)", y+1, len(yr.Repaired), prev)
		}
		prev = len(yr.Repaired)
		for _, fl := range yr.Repaired {
			if !fl.Critical || fl.LostCAs.IsEmpty() {
				t.Fatalf("year %d: repaired failure %+v is not critical or loses no CA", y+1, fl)
			}
			if fl.Kind == SwitchFailure {
				if fl.Switch < 8 {
					t.Fatalf("year %d: spine %d recorded as critical", y+1, fl.Switch)
				}
				if applied[fl.Switch] {
					t.Fatalf("year %d: repaired switch %d also applied", y+1, fl.Switch)
				}
				if n := int(fl.LostCAs.GetCardinality()); n != 2 {
					t.Fatalf("year %d: leaf %d would cut off %d CAs, want its 2", y+1, fl.Switch, n)
				}
			}
		}
	}
	if prev == 0 {
		t.Fatal("no critical failure drawn: with 4 % of switches a year over 6 years some leaf must be picked")
	}
	fabs, fails, err := FailureYears(f, 0.02, 0.04, 6, 11)
	if err != nil {
		t.Fatal(err)
	}
	for y := range ys {
		if len(fabs[y].Links()) != len(ys[y].Fabric.Links()) || !fiSame(fails[y], ys[y].Failures) {
			t.Fatalf("year %d: FailureYears and FailInPlace differ", y+1)
		}
	}
}
