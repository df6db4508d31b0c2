package routing_test

import (
	"context"
	"errors"
	"testing"

	_ "github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/fabric"
	_ "github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

func bestOf(t *testing.T, params map[string]string) routing.Engine {
	t.Helper()
	e, err := routing.Lookup("best")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.(routing.Configurable).Configure(params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBestPicksByMeasure: "best" returns the verified routing of least
// max channel load (or least average hops), whichever engine made it, and
// says which one did.
func TestBestPicksByMeasure(t *testing.T) {
	tor, err := topo.Torus([]int{4, 4, 4}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		tp     *topo.Topology
		params map[string]string
	}{
		{"torus4x4x4", tor, nil},
		{"torus4x4x4 hops", tor, map[string]string{"by": "hops"}},
		{"fattree4-3", ft, map[string]string{"of": "dor+dfsssp+nue"}},
	} {
		g, err := fabric.Compile(c.tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		opt := routing.Options{MaxVLs: 8}
		e := bestOf(t, c.params)
		r, err := e.Route(context.Background(), g, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := routing.Verify(g, r, e, opt); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := routing.Measure(g, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		// No engine of the list does better by the criterion.
		of := []string{"nue", "dor", "dfsssp"}
		for _, name := range of {
			other, err := routing.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			or, err := other.Route(context.Background(), g, opt)
			if err != nil {
				continue // not applicable, or more VLs than allowed
			}
			if _, err := routing.Verify(g, or, other, opt); err != nil {
				continue
			}
			m, err := routing.Measure(g, or, 0)
			if err != nil {
				t.Fatal(err)
			}
			better := m.MaxEFI < got.MaxEFI
			if c.params["by"] == "hops" {
				better = m.AvgHops < got.AvgHops
			}
			if better {
				t.Errorf("%s: best took %s (max EFI %d, hops %.3f), %s does better (%d, %.3f)", c.name, r.Engine, got.MaxEFI, got.AvgHops, name, m.MaxEFI, m.AvgHops)
			}
		}
		t.Logf("%s: %s, max EFI %d, avg hops %.3f", c.name, r.Engine, got.MaxEFI, got.AvgHops)
	}
}

// TestBestErrors: unknown engines and criteria are refused when
// configured; a list none of whose engines verifies is an error naming
// each one's reason.
func TestBestErrors(t *testing.T) {
	e, _ := routing.Lookup("best")
	c := e.(routing.Configurable)
	for _, p := range []map[string]string{{"of": "nue+nosuch"}, {"by": "speed"}, {"of": "best+nue"}, {"bogus": "1"}} {
		if _, err := c.Configure(p); err == nil {
			t.Errorf("Configure(%v) accepted", p)
		}
	}
	tor, err := topo.Torus([]int{4, 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tor.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bestOf(t, map[string]string{"of": "minhop"}).Route(context.Background(), g, routing.Options{MaxVLs: 8})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("minhop on a torus (cyclic CDG) accepted: %v", err)
	}
	t.Log(err)
}
