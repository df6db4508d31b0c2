package nue

import (
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestLargeTorusApplicability: the largest torus, 8×8×8, whole and
// with 1, 3 and 5 % of its cables failed, routed with every k in 1..8.
func TestLargeTorusApplicability(t *testing.T) {
	if testing.Short() {
		t.Skip("large fabric")
	}
	tp, err := topo.Torus([]int{8, 8, 8}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []float64{0, 0.01, 0.03, 0.05} {
		f := tp.Fabric
		if frac > 0 {
			n := int(frac * float64(len(tp.Fabric.Links())))
			if f, _, err = topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: n, Seed: 3}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := fabric.Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 8; k++ {
			verify(t, fmt.Sprintf("torus8x8x8 fail %.0f%%", frac*100), g, k, nil)
		}
	}
}
