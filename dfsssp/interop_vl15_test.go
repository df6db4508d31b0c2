package dfsssp

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestOpenSMLayersVL15 compares OpenSM's dfsssp with ours at 15 VLs on the
// fabrics NUESM_VL15_FABRICS names (torus:DIMS:HOSTS, comma-separated) and
// prints one Markdown row each. ibsim hard-codes VLCap = VL0–7 in its port
// templates, so this needs an ibsim whose ports offer 15 VLs first in
// $PATH; bench/seeds/001-dfsssp/run.sh makes one and sets the variable.
// Skipped without it (the 8-VL comparison is TestOpenSMSameLayers).
func TestOpenSMLayersVL15(t *testing.T) {
	spec := os.Getenv("NUESM_VL15_FABRICS")
	if spec == "" {
		t.Skip("NUESM_VL15_FABRICS unset: run bench/seeds/001-dfsssp/run.sh")
	}
	for _, f := range strings.Split(spec, ",") {
		t.Run(f, func(t *testing.T) {
			tp, err := parseFixture(f)
			g := compile(t, tp, err)
			osm := runOpenSM(t, g, "dfsssp")
			needed, avail := openSMNeeded(t, osm)
			if avail != 15 {
				t.Fatalf("OpenSM sees %d VLs: the ibsim in $PATH is not the 15-VL one", avail)
			}
			want := lanes(osm.Log(), "Paths per VL (before balancing)")
			_, st, _ := RouteDFSSSP(context.Background(), g, routing.Options{MaxVLs: avail})
			ours := make([]int64, avail)
			copy(ours, st.LayerPairs)
			if st.Needed != needed || !slices.Equal(ours, want) {
				t.Errorf("%s: OpenSM needs %d, pairs per layer %v; we need %d, %v", f, needed, want, st.Needed, ours)
			}
			fmt.Printf("| %s | %d | %s | %s | %v |\n", f, len(g.Terms), vlText(needed), vlText(st.Needed), slices.Equal(ours, want))
		})
	}
}

// vlText prints a layer count, "> 15" past the limit.
func vlText(n int) string {
	if n > 15 {
		return "> 15"
	}
	return fmt.Sprint(n)
}

// parseFixture reads torus:DIMS:HOSTS.
func parseFixture(s string) (*topo.Topology, error) {
	var dims string
	var hosts int
	if _, err := fmt.Sscanf(strings.ReplaceAll(s, ":", " "), "torus %s %d", &dims, &hosts); err != nil {
		return nil, fmt.Errorf("fabric %q, expected torus:DIMS:HOSTS", s)
	}
	var k []int
	for _, x := range strings.Split(dims, "x") {
		var v int
		if _, err := fmt.Sscan(x, &v); err != nil {
			return nil, fmt.Errorf("fabric %q: dims %q", s, dims)
		}
		k = append(k, v)
	}
	return topo.Torus(k, hosts, false)
}
