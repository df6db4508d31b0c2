package flitsim

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestSweepWorkers: the rows of a sweep do not depend on the number of
// workers, come in point order, and equal single RunPoint calls; CSV
// bytes are equal too.
func TestSweepWorkers(t *testing.T) {
	nets := map[string]SweepNet{}
	for _, e := range []string{"dor", "nue"} {
		n := network(t, torus(t, 4, e), Config{})
		b, err := n.Bound(Traffic{Pattern: Uniform}, 1)
		if err != nil {
			t.Fatal(err)
		}
		nets[e] = SweepNet{Net: n, Bound: b}
	}
	points := SweepPoints([]string{"dor", "nue"}, []float64{0.2, 0.7}, []uint64{1, 2})
	if len(points) != 8 || points[5] != (Point{Index: 5, Engine: "nue", Load: 0.2, Seed: 2}) {
		t.Fatalf("points %v", points)
	}
	tr, opt := Traffic{Pattern: Uniform}, RunOptions{Warmup: 200, Measure: 2000}
	one, err := Sweep(context.Background(), nets, tr, opt, points, 1)
	if err != nil {
		t.Fatal(err)
	}
	three, err := Sweep(context.Background(), nets, tr, opt, points, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, three) {
		t.Error("1 and 3 workers give different rows")
	}
	var a, b bytes.Buffer
	if WriteCSV(&a, one) != nil || WriteCSV(&b, three) != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("CSV differs")
	}
	r, err := RunPoint(context.Background(), nets["nue"].Net, nets["nue"].Bound, tr, opt, points[6])
	if err != nil || !reflect.DeepEqual(r, one[6]) {
		t.Errorf("RunPoint differs from the sweep's row: %v", err)
	}
	for i, r := range one {
		if r.Index != i || r.Accepted <= 0 || r.Bound != nets[r.Engine].Bound.Saturation || len(r.Channels) != int(nets[r.Engine].Net.nChan) {
			t.Errorf("row %d: %+v", i, r.Point)
		}
	}
	if _, err := Sweep(context.Background(), nets, tr, opt, SweepPoints([]string{"updn"}, []float64{0.1}, []uint64{1}), 1); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown engine: %v", err)
	}
}

func TestMergeRows(t *testing.T) {
	rows := func(idx ...int) []Row {
		var out []Row
		for _, i := range idx {
			out = append(out, Row{Point: Point{Index: i}})
		}
		return out
	}
	got, err := MergeRows(rows(2, 0, 1), 3)
	if err != nil || got[0].Index != 0 || got[2].Index != 2 {
		t.Errorf("merge = %v, %v", got, err)
	}
	for _, c := range []struct {
		rows  []Row
		total int
		want  string
	}{
		{rows(0, 2), 3, "missing"},
		{rows(0, 1, 1, 2), 3, "twice"},
		{rows(0, 1, 2, 3), 3, "beyond"},
	} {
		if _, err := MergeRows(c.rows, c.total); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v of %d: err = %v, want %q", c.rows, c.total, err, c.want)
		}
	}
}
