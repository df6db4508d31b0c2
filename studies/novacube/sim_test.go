package novacube

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/simtest"
	"github.com/nuesm/nuesm/studies/vcpolicy"
	"github.com/nuesm/nuesm/topo"
)

func novaFixture(t *testing.T, k, dims int) *simtest.Fixture {
	return simtest.Routed(t, "novacube-"+string(rune('0'+k))+string(rune('0'+dims)), func() (*topo.Topology, error) { return topo.NovaCube(k, dims, 1) }, "pora", 4)
}

// TestPORAMeanHops: PORA hops in the simulator follow the model: under
// light uniform load the mean switch hops of delivered packets is
// ExpectedAPL within 3 % (literal and per-hop minimal) on NovaCube 6×6 and
// 4×4×4; the minimal reading is the BFS average and shorter than the
// literal one.
func TestPORAMeanHops(t *testing.T) {
	vp, err := vcpolicy.Parse("hops:8")
	if err != nil {
		t.Fatal(err)
	}
	vc, err := vcpolicy.ForSim(vp)
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range [][2]int{{6, 2}, {4, 3}} {
		k, dims := sz[0], sz[1]
		f := novaFixture(t, k, dims)
		cube, err := NewCube(k, dims, true)
		if err != nil {
			t.Fatal(err)
		}
		base, err := flitsim.NewNetwork(f.G, f.R, flitsim.Config{})
		if err != nil {
			t.Fatal(err)
		}
		hops := map[Variant]float64{}
		for _, v := range []Variant{Literal, Minimal} {
			p, err := NewPolicy(f.G, cube, v)
			if err != nil {
				t.Fatal(err)
			}
			n, err := base.WithRouting(p, vc)
			if err != nil {
				t.Fatal(err)
			}
			r, err := n.Run(context.Background(), flitsim.Traffic{Pattern: flitsim.Uniform, Load: 0.1}, flitsim.RunOptions{Seed: 1, Warmup: 500, Measure: 20000})
			if err != nil {
				t.Fatal(err)
			}
			want := ExpectedAPL(cube, v)
			hops[v] = r.MeanHops
			t.Logf("%dx%d %s: simulated mean hops %.3f, ExpectedAPL %.3f, overflow %d", k, dims, v, r.MeanHops, want, r.VCOverflow)
			if d := r.MeanHops/want - 1; d > 0.03 || d < -0.03 {
				t.Errorf("%d-ary %d-cube %s: mean hops %.3f, ExpectedAPL %.3f", k, dims, v, r.MeanHops, want)
			}
		}
		if hops[Minimal] >= hops[Literal] {
			t.Errorf("minimal PORA %.3f hops not shorter than literal %.3f", hops[Minimal], hops[Literal])
		}
	}
}

// TestPolicyErrors: a cube of another size, the Tables reading (not per
// hop) and no cube are errors wrapping flitsim.ErrConfig; so is a named
// PORA policy on a fabric the generator did not make.
func TestPolicyErrors(t *testing.T) {
	f := novaFixture(t, 6, 2)
	small, _ := NewCube(4, 2, true)
	big, _ := NewCube(6, 2, true)
	for i, c := range []struct {
		c *Cube
		v Variant
	}{{small, Literal}, {big, Tables}, {nil, Minimal}} {
		if _, err := NewPolicy(f.G, c.c, c.v); !errors.Is(err, flitsim.ErrConfig) {
			t.Errorf("case %d: err = %v, want flitsim.ErrConfig", i, err)
		}
	}
	n, err := flitsim.NewNetwork(f.G, f.R, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	env := flitsim.PolicyEnv{Kind: "torus", Coords: f.Topo.Coords, MinimalName: "shortest"}
	if _, err := (flitsim.PolicySpec{Spec: "pora-literal"}).Apply(n, env); !errors.Is(err, flitsim.ErrConfig) {
		t.Errorf("pora-literal on a torus: err = %v, want flitsim.ErrConfig", err)
	}
	env.Kind = "novacube"
	if m, err := (flitsim.PolicySpec{Spec: "pora-minimal"}).Apply(n, env); err != nil || m.PolicyName() != "pora(minimal)" {
		t.Errorf("pora-minimal: %v, policy %q", err, m.PolicyName())
	}
}
