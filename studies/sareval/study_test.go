package sareval

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/topo"
)

func graph(t *testing.T, tp *topo.Topology, err error) *fabric.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRun: every mix has an outcome per engine in order, metrics never
// below the bound, an engine that cannot route the fabric is reported
// with its reason, and the outputs are deterministic.
func TestRun(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	g := graph(t, tp, err)
	cfg := Config{Engines: []string{"sar-nue", "nue", "dor", "ftree"}, Allocs: []sar.Alloc{sar.AllocLinear, sar.AllocScatter}, Seeds: []uint64{1, 2, 3}}
	var outs [2]string
	for i := range outs {
		res, err := Run(context.Background(), g, "torus4x4", cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Mixes) != 6 || res.Hosts != 32 || res.Switches != 16 {
			t.Fatalf("%d mixes, %d hosts, %d switches", len(res.Mixes), res.Hosts, res.Switches)
		}
		for _, mr := range res.Mixes {
			if len(mr.Outcome) != 4 {
				t.Fatalf("%d outcomes", len(mr.Outcome))
			}
			for i, o := range mr.Outcome {
				if o.Engine != cfg.Engines[i] {
					t.Fatalf("outcome %d is %s", i, o.Engine)
				}
				if o.Engine == "ftree" {
					if o.Metrics != nil || !strings.Contains(o.Err, "not applicable") {
						t.Fatalf("ftree on a torus: %+v", o)
					}
					continue
				}
				if o.Metrics == nil {
					t.Fatalf("%s: %s", o.Engine, o.Err)
				}
				if o.Metrics.EffectiveEFI < mr.Bound || len(o.Metrics.Jobs) != len(mr.Jobs) {
					t.Fatalf("%s seed %d: effective EFI %d below the bound %d", o.Engine, mr.Seed, o.Metrics.EffectiveEFI, mr.Bound)
				}
			}
		}
		var b bytes.Buffer
		if err := res.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(b.String(), "\n"); n != 1+6*4 {
			t.Fatalf("%d CSV lines", n)
		}
		if err := res.WriteJobsCSV(&b); err != nil {
			t.Fatal(err)
		}
		outs[i] = b.String() // route times aside, the report is these figures
		b.Reset()
		if err := res.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"#### linear placement, 3 seeds", "| ftree | n/a: ", "sar-nue is at most the best other engine on"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		}
	}
	if outs[0] != outs[1] {
		t.Fatal("two runs differ")
	}
}

// TestSummarize: the gain and counts of a hand-made result.
func TestSummarize(t *testing.T) {
	m := func(e int64) *sar.Metrics { return &sar.Metrics{EffectiveEFI: e, MaxJobEFI: e} }
	r := &Result{Config: Config{Engines: []string{"a", "b", "c"}}, Mixes: []MixResult{
		{Alloc: "tree", Bound: 5, Outcome: []Outcome{{"a", m(6), ""}, {"b", m(12), ""}, {"c", m(6), ""}}},
		{Alloc: "tree", Bound: 5, Outcome: []Outcome{{"a", m(10), ""}, {"b", m(8), ""}, {"c", nil, "failed"}}},
	}}
	s := r.Summarize("tree")
	if s.Mixes != 2 || s.BestOther != 1 || s.Compared != 2 {
		t.Fatalf("%+v", s)
	}
	b := s.Engines[1]
	if b.RefMixes != 2 || b.RefNotWorse != 1 || b.RefGain != (0.5-0.25)/2 || b.RefMin != -0.25 || b.RefMax != 0.5 {
		t.Fatalf("b: %+v", b)
	}
	if c := s.Engines[2]; c.Mixes != 1 || c.RefMixes != 1 || c.RefGain != 0 || c.EffectiveEFI != 6 {
		t.Fatalf("c: %+v", c)
	}
	if a := s.Engines[0]; a.BoundGain != (1.0/6+0.5)/2 {
		t.Fatalf("bound gain %v", a.BoundGain)
	}
}

// TestRunVLs: the study's VL limit reaches every engine: at one VL, DOR
// on a torus with datelines reports the two VLs it needs, while Nue and
// sar-nue route within the one VL, and the report names the limit.
func TestRunVLs(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	g := graph(t, tp, err)
	cfg := Config{Engines: []string{"sar-nue", "nue", "dor"}, Allocs: []sar.Alloc{sar.AllocScatter}, Seeds: []uint64{1}, VLs: 1}
	res, err := Run(context.Background(), g, "torus4x4", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Mixes {
		for _, o := range mr.Outcome {
			if o.Engine == "dor" {
				if o.Metrics != nil || !strings.Contains(o.Err, "needed 2 VLs, limit is 1") {
					t.Fatalf("dor within 1 VL: %+v", o)
				}
				continue
			}
			if o.Metrics == nil || o.Metrics.EffectiveEFI < mr.Bound {
				t.Fatalf("%s within 1 VL: %+v (bound %d)", o.Engine, o, mr.Bound)
			}
		}
	}
	var b bytes.Buffer
	if err := res.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "16 switches, 1 VLs)") {
		t.Fatalf("report does not name the VL limit:\n%s", b.String())
	}
	cfg.VLs = 2
	if res, err = Run(context.Background(), g, "torus4x4", cfg, nil); err != nil {
		t.Fatal(err)
	}
	if o := res.Mixes[0].Outcome[2]; o.Metrics == nil {
		t.Fatalf("dor within 2 VLs: %s", o.Err)
	}
}
