package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func TestRingShortcut(t *testing.T) {
	tp, err := Ring(5, 1, []int{2, 4})
	if err != nil {
		t.Fatal(err)
	}
	f := tp.Fabric
	if got := f.Count(fabric.Switch); got != 5 {
		t.Fatalf("switches = %d, want 5", got)
	}
	if got := f.Count(fabric.CA); got != 5 {
		t.Fatalf("CAs = %d, want 5", got)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	if g.NumChannels() != 12 {
		t.Fatalf("channels = %d, want 12 (6 cables)", g.NumChannels())
	}
	st := g.Hops()
	if !st.Connected || st.Diameter != 2 {
		t.Fatalf("hops = %+v, want connected diameter 2", st)
	}
	for c := int32(0); c < int32(g.NumChannels()); c++ {
		r := g.Rev[c]
		if g.Rev[r] != c || g.Head[r] != g.Tail[c] || g.Tail[r] != g.Head[c] {
			t.Fatalf("channel %d: reverse %d inconsistent", c, r)
		}
	}
	if _, err := Ring(5, 1, []int{0, 1}); err == nil {
		t.Fatal("shortcut between neighbours accepted")
	}
}

func TestGenerateUnknownParam(t *testing.T) {
	if _, err := Generate("ring", map[string]string{"bogus": "1"}); err == nil {
		t.Fatal("unknown parameter accepted")
	}
	if _, err := Generate("ring", map[string]string{"switches": "x"}); err == nil {
		t.Fatal("bad integer accepted")
	}
	tp, err := Generate("ring", map[string]string{"switches": "7"})
	if err != nil || tp.Fabric.Count(fabric.Switch) != 7 {
		t.Fatalf("Generate ring: %v", err)
	}
}
