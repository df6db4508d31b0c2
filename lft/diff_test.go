package lft

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// sameSemantics reports how a and b differ as forwarding, SL and SL2VL
// functions ("" when they agree everywhere).
func sameSemantics(g *fabric.Graph, a, b *Routing) string {
	var why []string
	stride := max(a.Stride, b.Stride)
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for lid := 0; lid < stride; lid++ {
			if a.Port(s, lid) != b.Port(s, lid) {
				why = append(why, "LFT of switch "+itoa(int(s))+" LID "+itoa(lid))
				break
			}
		}
		for dl := 0; dl < stride; dl++ {
			if a.SL.Of(s, 0, dl) != b.SL.Of(s, 0, dl) {
				why = append(why, "SL from switch "+itoa(int(s))+" to "+itoa(dl))
				break
			}
		}
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		for in := 0; in <= np; in++ {
			for o := 0; o <= np; o++ {
				for sl := uint8(0); sl < NumSLs; sl++ {
					if a.SL2VL.VL(s, uint8(in), uint8(o), sl) != b.SL2VL.VL(s, uint8(in), uint8(o), sl) {
						why = append(why, "SL2VL of switch "+itoa(int(s)))
						in, o = np+1, np+1
						break
					}
				}
			}
		}
	}
	for _, m := range []map[uint32]uint8{a.SL.Pair, b.SL.Pair} {
		for k := range m {
			slid, dl := int(k>>16), int(k&0xFFFF)
			sw, _ := g.Owner(slid)
			if a.SL.Of(sw, slid, dl) != b.SL.Of(sw, slid, dl) {
				why = append(why, "pair SL "+itoa(slid)+"->"+itoa(dl))
			}
		}
	}
	if a.SL2VL.Default != b.SL2VL.Default {
		why = append(why, "default SL2VL")
	}
	if a.NumVLs != b.NumVLs {
		why = append(why, "VL count")
	}
	return strings.Join(why, "; ")
}

// TestDiffApplyRandom is the quick check of STYLE.md: Diff then Apply
// equals the full rewrite, on random routings with every SL and SL2VL
// variant, and the Delta lists exactly the entries a plain comparison finds.
func TestDiffApplyRandom(t *testing.T) {
	g := ringGraph(t, 6, 2, []int{0, 3}, 1)
	variants := []randomOpts{{}, {bySrc: true}, {pairs: 5}, {sl2vl: true}, {bySrc: true, pairs: 3, sl2vl: true}}
	for seed := uint64(1); seed <= 40; seed++ {
		oa, ob := variants[seed%5], variants[(seed/5)%5]
		old, new := randomRouting(g, seed, oa), randomRouting(g, seed*7919, ob)
		if seed%3 == 0 { // mostly-equal tables: change a few entries only
			new = old.Clone()
			new.SetPort(1, 3, 2)
			new.SL.ByDest[4] ^= 1
		}
		d, err := Diff(g, old, new)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for s := int32(0); int(s) < g.NumSwitches(); s++ {
			for lid := 0; lid < old.Stride; lid++ {
				if old.Port(s, lid) != new.Port(s, lid) {
					want++
				}
			}
		}
		if got := d.Summary().Entries; got != want {
			t.Fatalf("seed %d: %d changed entries in the delta, %d by comparison", seed, got, want)
		}
		r := old.Clone()
		if err := d.Apply(r); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if why := sameSemantics(g, r, new); why != "" {
			t.Fatalf("seed %d (%+v -> %+v): applied delta differs from the new routing: %s", seed, oa, ob, why)
		}
		// Applying twice fails: the entries no longer hold the old values.
		if len(d.Switches) > 0 {
			if err := d.Apply(r); err == nil {
				t.Fatalf("seed %d: applying a delta twice succeeded", seed)
			}
		}
	}
}

func TestDiffEqualAndBlocks(t *testing.T) {
	g := ringGraph(t, 5, 1, nil, 0)
	old := randomRouting(g, 3, randomOpts{})
	d, err := Diff(g, old, old.Clone())
	if err != nil || !d.Empty() {
		t.Fatalf("diff of equal routings: %v, %+v", err, d.Summary())
	}
	new := old.Clone()
	new.SetPort(2, 1, 1)
	new.SetPort(2, 2, 1)
	new.SetPort(4, 3, 2)
	if new.Port(2, 1) == old.Port(2, 1) || new.Port(4, 3) == old.Port(4, 3) {
		new.SetPort(2, 1, 2)
		new.SetPort(4, 3, 1)
	}
	d, err = Diff(g, old, new)
	if err != nil {
		t.Fatal(err)
	}
	for _, sw := range d.Switches {
		if len(sw.Blocks) != 1 || sw.Blocks[0] != 0 {
			t.Fatalf("switch %d: blocks %v, want [0]", sw.Switch, sw.Blocks)
		}
	}
	if Block(63) != 0 || Block(64) != 1 || Block(0xBFFF) != 767 {
		t.Fatal("Block numbering")
	}
	rep := d.Report(g, -1)
	var buf bytes.Buffer
	if err := rep.WriteText(&buf, 10); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LFT entries", "blocks", "LID"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, buf.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
}

func TestDiffShapeMismatch(t *testing.T) {
	g := ringGraph(t, 5, 1, nil, 0)
	h := ringGraph(t, 6, 1, nil, 0)
	if _, err := Diff(g, New(g, "a"), New(h, "b")); err == nil {
		t.Fatal("diff across fabrics succeeded")
	}
}
