package routing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// TestDORNoDatelineCycle is the known answer: DOR without the dateline on
// a 4×4 torus closes a dependency cycle, and it is one ring of one
// dimension (four channels, same dimension and direction, same row).
func TestDORNoDatelineCycle(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	g := dlGraph(t, tp, err)
	e, err := Lookup("dor-nodateline")
	if err != nil {
		t.Fatal(err)
	}
	if e.DeadlockFree() {
		t.Fatal("dor-nodateline claims deadlock freedom")
	}
	r, err := e.Route(context.Background(), g, Options{MaxVLs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumVLs != 1 {
		t.Fatalf("NumVLs %d, want 1", r.NumVLs)
	}
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 1})
	var ce *cdg.CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a cycle", err)
	}
	t.Logf("verifier report:\n%s", rep)
	if rep.Delivered != rep.Pairs || len(ce.Channels) != 4 || !strings.Contains(rep.String(), "cycle of 4 channels") {
		t.Fatalf("want every pair delivered and a 4-channel cycle:\n%s", rep)
	}
	if !strings.Contains(err.Error(), "torus (") {
		t.Fatalf("error does not name the channels: %v", err)
	}
	var dim, dir = -1, -1
	for i, c := range ce.Channels {
		next := ce.Channels[(i+1)%len(ce.Channels)]
		if g.Head[c] != g.Tail[next] || ce.VLs[i] != 0 {
			t.Fatalf("cycle is not a path on VL0: %s", ce.Long())
		}
		a, _ := parseCoords(g.SwitchName(g.Tail[c]))
		b, _ := parseCoords(g.SwitchName(g.Head[c]))
		d, sign := -1, 0
		for j := range a {
			if a[j] != b[j] {
				d, sign = j, int(b[j]-a[j]+4)%4
			}
		}
		if i == 0 {
			dim, dir = d, sign
		}
		if d != dim || sign != dir {
			t.Fatalf("cycle leaves dimension %d direction: %s", dim, ce.Long())
		}
	}
	// The same paths with the dateline pass.
	r2, err := DOR{}.Route(context.Background(), g, Options{MaxVLs: 2})
	if err != nil {
		t.Fatal(err)
	}
	dlVerify(t, g, r2, false)
	// Same LFTs, only SLs and SL2VL differ.
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		if string(r.Row(s)) != string(r2.Row(s)) {
			t.Fatalf("switch %d: LFT differs with and without dateline", s)
		}
	}
}

// TestDORVLLimit: a torus needs 2 VLs, so MaxVLs = 1 gives a VLError;
// meshes, rings of 3 and dor-nodateline fit in one.
func TestDORVLLimit(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	g := dlGraph(t, tp, err)
	_, err = DOR{}.Route(context.Background(), g, Options{MaxVLs: 1})
	var ve *VLError
	if !errors.As(err, &ve) || !errors.Is(err, ErrNeedVLs) || ve.Needed != 2 || ve.Limit != 1 || ve.Engine != "dor" {
		t.Fatalf("err = %v, want VLError{dor, 2, 1}", err)
	}
	if err.Error() != "dor: needed 2 VLs, limit is 1" {
		t.Fatalf("message %q", err)
	}
	if _, err := (DOR{NoDateline: true}).Route(context.Background(), g, Options{MaxVLs: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []dlShape{{[]int{4, 4}, true, 1}, {[]int{3, 3, 3}, false, 1}} {
		tp, err := topo.Torus(c.dims, 1, c.mesh)
		g := dlGraph(t, tp, err)
		r, err := DOR{}.Route(context.Background(), g, Options{MaxVLs: 1})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		dlVerify(t, g, r, false)
	}
}

// TestDORToriSweep proves the dateline scheme with the verifier on every
// 2-D torus with sides 2..9 and every 3-D torus with sides 2..5.
func TestDORToriSweep(t *testing.T) {
	var shapes [][]int
	for a := 2; a <= 9; a++ {
		for b := 2; b <= 9; b++ {
			shapes = append(shapes, []int{a, b})
		}
	}
	for a := 2; a <= 5; a++ {
		for b := 2; b <= 5; b++ {
			for c := 2; c <= 5; c++ {
				shapes = append(shapes, []int{a, b, c})
			}
		}
	}
	for _, dims := range shapes {
		tp, err := topo.Torus(dims, 1, false)
		g := dlGraph(t, tp, err)
		r, err := DOR{}.Route(context.Background(), g, Options{Workers: 2})
		if err != nil {
			t.Fatalf("%v: %v", dims, err)
		}
		want := 1
		for _, k := range dims {
			if k >= 4 {
				want = 2
			}
		}
		if r.NumVLs != want {
			t.Fatalf("%v: NumVLs %d, want %d", dims, r.NumVLs, want)
		}
		dlVerify(t, g, r, true)
		dlCheckMinimal(t, g, r, false)
	}
}

// TestDORParallelCables: a doubled cable between grid neighbours is
// accepted; the lowest port carries the traffic.
func TestDORParallelCables(t *testing.T) {
	tp, err := topo.Torus([]int{6}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	g0 := dlFabricGraph(t, tp.Fabric)
	f := dlAddCable(t, tp.Fabric, g0.Switches[1], g0.Switches[2])
	g := dlFabricGraph(t, f)
	r, err := DOR{}.Route(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dlVerify(t, g, r, true)
	dlCheckMinimal(t, g, r, false)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if r.Port(1, lid) == 4 {
			t.Fatalf("LID %d uses the extra cable (port 4)", lid)
		}
	}
}

// dlVLs follows the path from the first CA of switch u to the first CA of
// switch d and returns the SL and the VL of every switch-to-switch hop.
func dlVLs(tb testing.TB, g *fabric.Graph, r *lft.Routing, u, d int32) (uint8, []uint8) {
	tb.Helper()
	src, dst := g.Terms[g.TermsOf(u)[0]], g.Terms[g.TermsOf(d)[0]]
	sl := r.SL.Of(u, int(src.LID), int(dst.LID))
	var vls []uint8
	in := src.SwitchPort
	for x := u; x != d; {
		p := r.Port(x, int(dst.LID))
		c := g.ChannelAt(x, p)
		vls = append(vls, r.SL2VL.VL(x, in, p, sl))
		in, x = g.InPort[c], g.Head[c]
	}
	return sl, vls
}

// TestDORDatelineVLs is a known answer for the VL sequence: VL0 until the
// packet crosses the dateline of the dimension it travels in, VL1 after,
// and VL0 again at the start of each dimension.
func TestDORDatelineVLs(t *testing.T) {
	tp, err := topo.Torus([]int{8}, 1, false)
	g := dlGraph(t, tp, err)
	r, err := DOR{}.Route(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ring := []struct {
		u, d int32
		sl   uint8
		vls  string
	}{
		{6, 1, 1, "[0 0 1]"},   // + across 7->0
		{1, 6, 1, "[0 0 1]"},   // − across 0->7
		{2, 5, 0, "[0 0 0]"},   // + inside the ring
		{0, 4, 0, "[0 0 0 0]"}, // tie, destination coordinate sum even: +
		{1, 5, 1, "[0 0 1 1]"}, // tie, odd: − across 0->7
		{5, 1, 0, "[0 0 0 0]"}, // tie, odd: − inside the ring (5 4 3 2 1)
		{6, 2, 1, "[0 0 1 1]"}, // tie, even: + across 7->0
	}
	for _, c := range ring {
		sl, vls := dlVLs(t, g, r, c.u, c.d)
		if sl != c.sl || fmt.Sprint(vls) != c.vls {
			t.Errorf("ring8 %d->%d: SL %d VLs %v, want SL %d VLs %s", c.u, c.d, sl, vls, c.sl, c.vls)
		}
	}
	tp, err = topo.Torus([]int{4, 4}, 1, false)
	g = dlGraph(t, tp, err)
	r, err = DOR{}.Route(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// (3,3) -> (1,1): ties in both dimensions, coordinate sum even: "+"
	// twice, crossing both datelines.
	sl, vls := dlVLs(t, g, r, 15, 5)
	if sl != 3 || fmt.Sprint(vls) != "[0 1 0 1]" {
		t.Errorf("4x4 (3,3)->(1,1): SL %d VLs %v, want SL 3 VLs [0 1 0 1]", sl, vls)
	}
	rep := dlVerify(t, g, r, false)
	if rep.CrossVL == 0 {
		t.Errorf("no dependency changes VL:\n%s", rep)
	}
}
