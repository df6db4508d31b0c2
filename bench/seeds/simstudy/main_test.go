package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/flitsim"
)

func TestSaturation(t *testing.T) {
	off := []float64{0.1, 0.2, 0.3, 0.4, 0.5}
	acc := []float64{0.1, 0.2, 0.29, 0.33, 0.31}
	lat := []float64{10, 12, 30, 31, 500}
	sat, peak := saturation(off, acc, lat)
	if sat != 0.3 || peak != 0.33 {
		t.Errorf("saturation = %g, %g; want knee 0.3 (30 <= 3·10), peak 0.33", sat, peak)
	}
	// A point over 3× ends the knee even if a later one recovers.
	sat, _ = saturation([]float64{0.1, 0.2, 0.3}, []float64{0.1, 0.15, 0.3}, []float64{5, 16, 6})
	if sat != 0.1 {
		t.Errorf("knee %g, want 0.1", sat)
	}
	if got := loadRange(0.05, 0.2, 0.05); len(got) != 4 || got[2] != 0.15 {
		t.Errorf("loadRange = %v", got)
	}
}

// TestHopStats: DOR on a 4x4 torus is minimal, so the tables' mean hops
// equal the BFS mean (32/15) and the longest path is the diameter 4.
func TestHopStats(t *testing.T) {
	rt, err := route(context.Background(), "torus", map[string]string{"dims": "4x4", "hosts": "1"}, "dor", 2)
	if err != nil {
		t.Fatal(err)
	}
	n, err := flitsim.NewNetwork(rt.g, rt.r, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mean, most := hopStats(n)
	if math.Abs(mean-32.0/15) > 1e-9 || most != 4 || math.Abs(bfsHops(n)-mean) > 1e-9 {
		t.Errorf("hops mean %g max %d, BFS %g; want 32/15, 4", mean, most, bfsHops(n))
	}
}

// TestIOQuick runs the I/O study at its quick size: the report has the
// three parts, the plots and CSV exist, and each placement's analytic
// bound is the ejection limit of its busiest I/O node: 1/(h·load) with h
// the I/O share of the flits (20 % of the messages, 4 packets each: h =
// 0.5), which makes RQP (load 5) bound 0.4 and QP (4×4 has no k-resource QP
// code, so the greedy packing, load 7) 0.286.
func TestIOQuick(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"io", "-o", dir, "-quick", "-workers", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	for _, want := range []string{"| 4x4 | 20 % | rqp | 3 | 5 | 2 |", "| 4x4 | 20 % | qp-greedy | 2 | 7 |", "0.400 |", "0.286 |",
		"strict (limit 255)", "shared VLs, round-robin", "I/O-node failures"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"io.csv", "io-saturation.svg", "io-latency-4x4-20.svg", "io-priority-40.svg", "io-failures-20.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "io.csv"))
	if n := strings.Count(string(csv), "\n"); n != 1+3*3+6*3+2*3 {
		t.Errorf("io.csv has %d lines", n)
	}
}

// TestNovaRSIQuick: NovaCube's tables are shorter than the torus' and
// minimal; super-node-local traffic has a higher bound than uniform.
func TestNovaRSIQuick(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"novacube", "-o", dir, "-quick"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 4x4 torus | dor | 2 | 2.133 | 2.133 | 4 |", "| 4x4 novacube | pora | 1 | 1.667 | 1.667 | 2 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("novacube report lacks %q:\n%s", want, out.String())
		}
	}
	s := quickRSI()
	var md bytes.Buffer
	if err := runRSI(context.Background(), s, dir, &md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| DF | 15 |") {
		t.Errorf("rsi report:\n%s", md.String())
	}
	for _, f := range []string{"rsi.csv", "rsi-uniform-latency.svg", "rsi-grouplocal-throughput.svg", "novacube-4x4-latency.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	rt, err := route(context.Background(), "rsi", map[string]string{"layer1": "BR", "supernodes": "3"}, "dfsssp", 15)
	if err != nil {
		t.Fatal(err)
	}
	n, err := flitsim.NewNetwork(rt.g, rt.r, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bu, err1 := n.Bound(flitsim.Traffic{Pattern: flitsim.Uniform, Load: 1}, 1)
	bl, err2 := n.Bound(flitsim.Traffic{Pattern: flitsim.GroupLocal, Load: 1, Groups: rt.tp.Group}, 1)
	if err1 != nil || err2 != nil || !(bl.Saturation > bu.Saturation) {
		t.Errorf("BR-3 bounds: uniform %v (%v), local %v (%v); local traffic avoids the single global cables", bu, err1, bl, err2)
	}
	if err := run(context.Background(), []string{"nope", "-o", dir}, &out); err == nil {
		t.Error("unknown study accepted")
	}
}

// TestDragonflyQuick runs seed 002's Dragonfly study on p = 2 (9 groups,
// 72 hosts) with Table III's times: MIN under ADV+1 is held to the one
// global cable per group pair (1/(a·p) = 1/8 per host), the conditional
// rules equal MIN under UN at low load (nothing is paused) and every
// ordering of the paper holds at this size.
func TestDragonflyQuick(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"dragonfly", "-o", dir, "-quick", "-workers", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	for _, want := range []string{"40 ns", "5 cycles of pipeline", "1 cycle, global links 400 ns = 10 cycles",
		"| 0.2 | sat., 0.122 |", "| uniform | conditional | conditional+df-2vc | 0.1 |", "1/(a·p) = 0.1250 per host: holds"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, ": holds ("); n != 7 || strings.Contains(md, "does not hold") {
		t.Errorf("%d of 7 orderings hold:\n%s", n, md)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "dragonfly.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(csv), "\n"); n != 1+4*(2+3) {
		t.Errorf("dragonfly.csv has %d lines, want 21", n)
	}
	for _, f := range []string{"dragonfly-uniform-latency.svg", "dragonfly-nextgroup-latency.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
