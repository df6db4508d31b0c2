package rsi

import (
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestSweepNodesHR pins what each FR rule leaves broken after every
// single-node failure of the 8-super-node HR. Under the literal rule a
// node forwards FR only when an entry regains port A as its only valid
// port while no entry stays invalid; a hypercube node two hops from the
// recovered node holds two minimal ports toward it, and the first FR
// leaves it not yet whole, the second whole but no longer "only", so FR
// stops there and the nodes 3–4 hops away (and their partners' T2
// entries) stay invalid: every failure leaves 5–15 entries invalid.
// The healed rule restores every table; on BR (every node within 2 hops
// inside its super node) both rules do.
func TestSweepNodesHR(t *testing.T) {
	hr := build(t, topo.RSIConfig{Layer1: "hypercube-16", SuperNodes: 8, LinksPerPair: 1})
	lit, err := Sweep(hr, NodeFailures(hr), Options{Rule: FRLiteral})
	if err != nil {
		t.Fatal(err)
	}
	if lit.Failures != 128 || lit.Broken != 128 || lit.Invalid != 1200 || lit.InvalidMin != 5 || lit.InvalidMax != 15 ||
		lit.Lost != 14080 || lit.LostMax != 181 || lit.Silent != 4480 || lit.SilentMax != 64 {
		t.Errorf("HR literal: %+v", lit)
	}
	healed, err := Sweep(hr, NodeFailures(hr), Options{Rule: FRHealed})
	if err != nil {
		t.Fatal(err)
	}
	if healed.Broken != 0 || healed.LostAfterFD != lit.LostAfterFD {
		t.Errorf("HR healed: %+v (literal lost %d while down)", healed, lit.LostAfterFD)
	}
	br := build(t, topo.RSIConfig{Layer1: "butterfly-4x4", SuperNodes: 8, LinksPerPair: 1})
	for _, r := range []FRRule{FRLiteral, FRHealed} {
		s, err := Sweep(br, NodeFailures(br), Options{Rule: r})
		if err != nil {
			t.Fatal(err)
		}
		if s.Failures != 128 || s.Broken != 0 || s.LostAfterFD != 26880 {
			t.Errorf("BR %s: %+v", r, s)
		}
	}
}
