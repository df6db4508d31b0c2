package flitsim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLists(t *testing.T) {
	if l, err := ParseList("0.1:0.5:0.1"); err != nil || len(l) != 5 || l[2] != 0.3 {
		t.Errorf("ParseList range = %v, %v", l, err)
	}
	if l, err := ParseList("0.2, 0.5"); err != nil || len(l) != 2 || l[1] != 0.5 {
		t.Errorf("ParseList list = %v, %v", l, err)
	}
	for _, bad := range []string{"", "1:0:1", "0:1:0", "x"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q) accepted", bad)
		}
	}
	if _, err := ParseLoads("0.5,1.5"); err == nil {
		t.Error("load 1.5 accepted")
	}
	if s, err := ParseSeeds("1:3"); err != nil || len(s) != 3 || s[2] != 3 {
		t.Errorf("ParseSeeds = %v, %v", s, err)
	}
	if _, err := ParseSeeds("1.5"); err == nil {
		t.Error("seed 1.5 accepted")
	}
	known := func(n string) error {
		if n == "nosuch" {
			return errors.New("unknown")
		}
		return nil
	}
	es, err := ParseEngineSpecs("nue/4, dor", 8, known)
	if err != nil || len(es) != 2 || es[0] != (EngineSpec{Label: "nue/4", Name: "nue", VLs: 4}) || es[1].VLs != 8 {
		t.Errorf("ParseEngineSpecs = %v, %v", es, err)
	}
	es, err = ParseEngineSpecs("nue:share=switch/4,best:of=(nue:share=switch)+dor", 8, known)
	if err != nil || len(es) != 2 || es[0] != (EngineSpec{Label: "nue:share=switch/4", Name: "nue:share=switch", VLs: 4}) ||
		es[1].Name != "best:of=(nue:share=switch)+dor" || es[1].VLs != 8 {
		t.Errorf("ParseEngineSpecs with parameters = %v, %v", es, err)
	}
	for _, bad := range []string{"nosuch", "nue/99", "dor,dor", "", "nue:share=switch/x"} {
		if _, err := ParseEngineSpecs(bad, 8, known); err == nil {
			t.Errorf("ParseEngineSpecs(%q) accepted", bad)
		}
	}
}

// TestPlanSweep: labels carry the policy unless the LFT is the only one;
// the shift exchange has one load.
func TestPlanSweep(t *testing.T) {
	es := []EngineSpec{{Label: "a", Name: "a"}, {Label: "b/2", Name: "b", VLs: 2}}
	pl := PlanSweep(es, []PolicySpec{{Spec: "lft"}}, Uniform, []float64{0.1, 0.2}, []uint64{1})
	if len(pl.Points) != 4 || pl.Points[3].Engine != "b/2" || pl.Nets[0].Label != "a" {
		t.Errorf("plan %+v", pl)
	}
	pl = PlanSweep(es, []PolicySpec{{Spec: "lft"}, {Spec: "min+hops:2"}}, Shift, []float64{0.1, 0.2}, []uint64{1, 2})
	if len(pl.Points) != 8 || pl.Nets[1].Label != "a@min+hops:2" || pl.Points[0].Load != 0 {
		t.Errorf("plan %+v", pl)
	}
}

// TestSummarizeSweeps: a cell per engine and fabric: best throughput, knee,
// why an engine was not simulated, deadlocks counted.
func TestSummarizeSweeps(t *testing.T) {
	rows := []Row{
		{Point: Point{Engine: "nue", Load: 0.5}, Pattern: "uniform", Offered: 0.5, Accepted: 0.5, Bound: 1},
		{Point: Point{Engine: "nue", Load: 0.9}, Pattern: "uniform", Offered: 0.9, Accepted: 0.7, Bound: 1},
		{Point: Point{Engine: "dor"}, Pattern: "uniform", Error: "dor: needed 4 VLs"},
		{Point: Point{Engine: "updn", Load: 0.5}, Pattern: "uniform", Deadlock: "deadlock"},
	}
	ts := Summarize([]SweepDoc{{Fabric: "dir/torus.topo", Rows: rows}})
	if len(ts) != 1 || len(ts[0].Engines) != 3 || ts[0].Fabrics[0] != "torus" {
		t.Fatalf("tables %+v", ts)
	}
	var b bytes.Buffer
	ts[0].WriteMarkdown(&b)
	for _, want := range []string{"| nue | 0.700 (1.000) |", "| dor | — needs 4 VLs |", "| updn | — deadlock |", "| nue | 0.50 (1.000) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if v := ts[0].Values(); v[0][0] != 0.7 || v[1][0] == v[1][0] {
		t.Errorf("values %v", v)
	}
}

// TestSlurmArray: the script runs the sweep's arguments, quoted, with the
// task's point and the points directory.
func TestSlurmArray(t *testing.T) {
	dir := t.TempDir()
	path, err := SlurmArray{Dir: dir, Bin: "/bin/flitsim", Args: []string{"sweep", "--label=it's"}, Points: 3, Time: "1:00"}.Write()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-2", "#SBATCH --time=1:00", `'--label=it'\''s'`, "--out '" + filepath.Join(dir, "points") + "'"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
}

func TestIONodesEvery(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	io, err := n.IONodesEvery(4)
	if err != nil || io[0] != -1 || io[3] != 0 || io[5] != 4 {
		t.Errorf("IONodesEvery = %v, %v", io, err)
	}
	if _, err := n.IONodesEvery(1); !errors.Is(err, ErrConfig) {
		t.Errorf("every 1: %v", err)
	}
}
