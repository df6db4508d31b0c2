package fip

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

func torus(t *testing.T) *fabric.Fabric {
	t.Helper()
	tp, err := topo.Torus([]int{3, 3}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	return tp.Fabric
}

// small is a study that runs in about a second: a 3×3 torus losing 10 %
// of its 18 cables a year for 3 years (no switch failures: every switch
// holds hosts, so each would be critical and repaired).
func small(seeds ...uint64) Config {
	return Config{
		Engines: []string{"nue", "dfsssp", "updn", "dor", "minhop"}, VLs: 4, Years: 3,
		LinkRate: 0.1, Seeds: seeds, Patterns: []string{"shift", "uniform"},
		Cycles: Cycles{Warmup: 300, Measure: 1500},
	}
}

func TestStudy(t *testing.T) {
	f := torus(t)
	cfg := small(7, 3)
	pts, err := Study(context.Background(), f, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.WithDefaults()
	if want := 2 * 4 * 5 * 2; len(pts) != want {
		t.Fatalf("%d points, want %d (2 seeds × 4 years × 5 engines × 2 patterns)", len(pts), want)
	}
	i := 0
	for _, seed := range []uint64{3, 7} { // sorted
		for y := 0; y <= 3; y++ {
			for _, e := range cfg.Engines {
				for _, pat := range cfg.Patterns {
					p := pts[i]
					i++
					if p.Seed != seed || p.Year != y || p.Engine != e || p.Pattern != pat {
						t.Fatalf("point %d is %d/%d/%s/%s, want %d/%d/%s/%s", i-1, p.Seed, p.Year, p.Engine, p.Pattern, seed, y, e, pat)
					}
					// round(y·0.1·18) cable events, no switch: the study
					// follows the fail-in-place schedule (critical events
					// are repaired, the rest stay failed).
					if want := int(math.Round(float64(y) * 0.1 * 18)); p.LinkFailures+p.Repaired != want || p.SwitchFailures != 0 {
						t.Fatalf("%+v: %d links failed + %d repaired, %d switches, want %d events, 0", p, p.LinkFailures, p.Repaired, p.SwitchFailures, want)
					}
					checkPoint(t, p)
					// Failures add up, so the bounds never rise.
					if y > 0 {
						prev := pts[i-1-len(cfg.Engines)*len(cfg.Patterns)].Fabric
						if p.Fabric.Concurrent > prev.Concurrent || p.Fabric.Mean > prev.Mean {
							t.Fatalf("%+v: bound %+v above the year before's %+v", p, p.Fabric, prev)
						}
					}
				}
			}
		}
	}
}

func checkPoint(t *testing.T, p Point) {
	t.Helper()
	// Every point carries its fabric's bound, refused or not.
	if fb := p.Fabric; !(fb.Concurrent > 0 && fb.ConcurrentLow > 0 && fb.ConcurrentLow <= fb.Concurrent && fb.Mean >= fb.ConcurrentLow) || fb.check() != nil {
		t.Fatalf("%+v: fabric bound %+v", p, fb)
	}
	switch p.Engine {
	case "nue", "dfsssp", "updn":
		// Deadlock-free on any connected fabric within 4 VLs here.
		if p.Error != "" || !p.Acyclic || p.Deadlock {
			t.Fatalf("%+v: want routed, acyclic, no deadlock", p)
		}
	case "dor":
		// DOR routes the intact torus only: a torus with missing cables
		// is no torus any more.
		if (p.Year == 0) != (p.Error == "") {
			t.Fatalf("%+v: DOR should route year 0 only", p)
		}
	case "minhop":
		if p.Error != "" {
			t.Fatalf("%+v: MinHop routes everything", p)
		}
	}
	if p.Error != "" {
		if p.Throughput != 0 || p.Bound != 0 {
			t.Fatalf("%+v: refused point with measurements", p)
		}
		return
	}
	if p.Deadlock {
		if p.Acyclic {
			t.Fatalf("%+v: deadlock on an acyclic routing", p)
		}
		return
	}
	if !(p.Throughput > 0 && p.Throughput <= 1) || !(p.Bound > 0) {
		t.Fatalf("%+v: throughput %g, bound %g, want (0, 1] and > 0", p, p.Throughput, p.Bound)
	}
	// Two independent computations: the routing's own paths are one
	// fractional flow, so their bound cannot beat the best flow's.
	if p.Bound > p.Fabric.Concurrent*(1+1e-9) {
		t.Fatalf("%+v: the paths' bound %g is above the fabric's %g", p, p.Bound, p.Fabric.Concurrent)
	}
	if p.Pattern == "shift" {
		if p.Completion <= 0 {
			t.Fatalf("%+v: shift without completion time", p)
		}
		// A finite exchange cannot beat the busiest link, nor the best
		// routing.
		if p.Throughput > p.Bound*1.0001 || p.Throughput > p.Limit(1)*(1+1e-9) {
			t.Fatalf("%+v: shift throughput %g above the bound %g or the limit %g", p, p.Throughput, p.Bound, p.Limit(1))
		}
	}
}

// TestStudyDeterministic: workers change nothing.
func TestStudyDeterministic(t *testing.T) {
	f := torus(t)
	a := small(5)
	a.Engines, a.Workers = []string{"nue", "updn"}, 1
	b := a
	b.Workers = 4
	pa, err := Study(context.Background(), f, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Study(context.Background(), f, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pa, pb) {
		t.Fatal("1 and 4 workers give different points")
	}
}

// TestMergeEqualsOneRun: SLURM array parts (one seed each) merged give
// the CSV of one run over all seeds, byte for byte.
func TestMergeEqualsOneRun(t *testing.T) {
	f := torus(t)
	run := func(seeds ...uint64) *Results {
		cfg := small(seeds...)
		cfg.Engines = []string{"nue", "minhop"}
		pts, err := Study(context.Background(), f, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.WithDefaults()
		cfg.Workers = 0 // not part of the results (json:"-")
		return &Results{Fabric: "torus 3x3", Config: cfg, Points: pts}
	}
	csvOf := func(r *Results) string {
		var b bytes.Buffer
		if err := r.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	whole := run(2, 9)
	// Through JSON, as the array tasks hand their parts over.
	var parts []*Results
	for _, s := range []uint64{9, 2} {
		var b bytes.Buffer
		if err := run(s).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		r, err := ReadJSON(&b, "part")
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	merged, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if csvOf(merged) != csvOf(whole) {
		t.Fatalf("merged CSV differs from one run:\n%s\nvs\n%s", csvOf(merged), csvOf(whole))
	}
	if !reflect.DeepEqual(merged.Config, whole.Config) {
		t.Fatalf("merged config %+v, want %+v", merged.Config, whole.Config)
	}
	if _, err := Merge([]*Results{parts[0], parts[0]}); err == nil || !strings.Contains(err.Error(), "more than one part") {
		t.Fatalf("merging a seed twice: %v", err)
	}
	other := *parts[1]
	other.Config.VLs = 2
	if _, err := Merge([]*Results{parts[0], &other}); err == nil || !strings.Contains(err.Error(), "another study") {
		t.Fatalf("merging different studies: %v", err)
	}
}

func TestSummary(t *testing.T) {
	r := &Results{Config: Config{Years: 1, Seeds: []uint64{1, 2}, Engines: []string{"a", "b"}, Patterns: []string{"uniform"}}}
	add := func(seed uint64, year int, e string, thr float64, errMsg string, dl bool) {
		r.Points = append(r.Points, Point{Seed: seed, Year: year, Engine: e, Pattern: "uniform", Throughput: thr,
			Error: errMsg, Deadlock: dl, LinkFailures: 2 * year * int(seed)})
	}
	add(1, 0, "a", 0.8, "", false)
	add(1, 0, "b", 0.6, "", false)
	add(2, 0, "a", 0.6, "", false)
	add(2, 0, "b", 0.4, "", false)
	add(1, 1, "a", 0.5, "", false)
	add(1, 1, "b", 0, "", true)
	add(2, 1, "a", 0, "needed 9 VLs", false)
	add(2, 1, "b", 0.2, "", false)
	s := r.Summarize()
	check := func(e string, y int, want Cell, str string) {
		t.Helper()
		c := s.Cells[e+"/uniform"][y]
		if math.Abs(c.Throughput-want.Throughput) > 1e-12 || c.Routed != want.Routed || c.Deadlocks != want.Deadlocks || c.Refused != want.Refused || c.String() != str {
			t.Fatalf("%s year %d: %+v %q, want %+v %q", e, y, c, c.String(), want, str)
		}
	}
	check("a", 0, Cell{Throughput: 0.7, Routed: 2}, "0.700")
	check("b", 0, Cell{Throughput: 0.5, Routed: 2}, "0.500")
	check("a", 1, Cell{Throughput: 0.5, Routed: 1, Refused: 1}, "0.500*")
	check("b", 1, Cell{Throughput: 0.1, Routed: 2, Deadlocks: 1}, "0.100!")
	if s.Links[0] != 0 || s.Links[1] != 3 { // (2 + 4) / 2 seeds
		t.Fatalf("links failed per year %v, want [0 3]", s.Links)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"links failed", "0.700", "0.100!", "-80.0 %", "-28.6 %"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestConfigErrors(t *testing.T) {
	f := torus(t)
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Engines = []string{"nosuch"} }, "unknown engine"},
		{func(c *Config) { c.Engines = []string{"nue:share=nosuch"} }, "share"},
		{func(c *Config) { c.Patterns = []string{"nosuch"} }, "nosuch"},
		{func(c *Config) { c.Seeds = []uint64{4, 4} }, "given twice"},
		{func(c *Config) { c.VLs = 16 }, "expected 1..15"},
		{func(c *Config) { c.Load = 1.5 }, "offered load"},
		{func(c *Config) { c.LinkRate = 0.5 }, "rate"},
	} {
		cfg := small(1)
		c.mod(&cfg)
		if _, err := Study(context.Background(), f, cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want error containing %q, got %v", c.want, err)
		}
	}
}

// TestSummaryBounds: the bound row, the split of the change into what the
// bound explains and what the routing does, and the shares, on hand-made
// points.
func TestSummaryBounds(t *testing.T) {
	r := &Results{Config: Config{Years: 1, Seeds: []uint64{1}, Engines: []string{"a", "b"}, Patterns: []string{"shift"}, Load: 1}}
	add := func(year int, e string, thr, conc float64) {
		r.Points = append(r.Points, Point{Seed: 1, Year: year, Engine: e, Pattern: "shift", Throughput: thr, Bound: conc,
			Fabric: FabricBound{Concurrent: conc, ConcurrentLow: conc, Cut: 1, Mean: 1}})
	}
	add(0, "a", 0.9, 1)
	add(0, "b", 0.5, 1)
	add(1, "a", 0.4, 0.5)
	add(1, "b", 0.49, 0.5)
	s := r.Summarize()
	if got := s.Limits["shift"]; got[0] != 1 || got[1] != 0.5 {
		t.Fatalf("limits %v, want [1 0.5]", got)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b, 1); err != nil {
		t.Fatal(err)
	}
	// a: −55.6 % = −50.0 % (the bound halves) − 5.6 % (90 % → 80 % of it);
	// b: −2.0 % = −50.0 % + 48.0 % (50 % → 98 %, at the bound).
	for _, line := range []string{
		"bound: any routing  1.000  0.500  -50.0 %",
		"a  0.900  0.400  -55.6 %   -50.0 %      -5.6 %",
		"b  0.500  0.490   -2.0 %   -50.0 %     +48.0 %",
		"a  90   80",
		"b  50  98=",
	} {
		if !strings.Contains(b.String(), line) {
			t.Fatalf("summary lacks %q:\n%s", line, b.String())
		}
	}
}

// TestEngineSpec: an engine with parameters is one engine of the study,
// kept under its spec.
func TestEngineSpec(t *testing.T) {
	cfg := small(1)
	cfg.Engines, cfg.Years, cfg.Patterns = []string{"nue:share=switchlid"}, 1, []string{"shift"}
	pts, err := Study(context.Background(), torus(t), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.Engine != "nue:share=switchlid" || p.Error != "" || p.Throughput <= 0 {
			t.Fatalf("%+v: want a measured point of nue:share=switchlid", p)
		}
	}
	cfg.Engines = []string{"nue,updn"}
	if err := cfg.WithDefaults().validate(); err == nil || !strings.Contains(err.Error(), "chain") {
		t.Fatalf("a chain as one engine: %v, want an error", err)
	}
}
