package vcpolicy

import (
	"errors"
	"testing"
)

// TestPresetsRoundTrip: every preset validates and its String form parses
// back to the same rules.
func TestPresetsRoundTrip(t *testing.T) {
	for _, p := range append(Presets(), HopsPolicy(3)) {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if q.VCs != p.VCs || q.Local != p.Local || q.Global != p.Global || q.Clamp != p.Clamp {
			t.Fatalf("%s: %v parsed back as %v", p.Name, p, q)
		}
	}
}

// TestRSIPaperRule: the hop rules of seed 000 Fig. 5 by hand: a local hop
// takes the VC of the hops already made in its super node, a global hop
// that of the global hops already made; a third local hop overflows.
func TestRSIPaperRule(t *testing.T) {
	p, err := Parse("rsi-paper")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		h    Hop
		want int
		over bool
	}{
		{Hop{HopsInGroup: 0}, 0, false},
		{Hop{HopsInGroup: 1, Hops: 1}, 1, false},
		{Hop{Global: true, GlobalHops: 0, HopsInGroup: 2}, 0, false},
		{Hop{Global: true, GlobalHops: 1}, 1, false},
		{Hop{HopsInGroup: 2}, 1, true},
	}
	for _, c := range cases {
		v, err := p.VC(c.h)
		if v != c.want || errors.Is(err, ErrOverflow) != c.over {
			t.Fatalf("%+v: VC %d err %v; want %d overflow %v", c.h, v, err, c.want, c.over)
		}
	}
	if v, err := HopsPolicy(2).VC(Hop{Hops: 5}); v != 1 || err != nil {
		t.Fatalf("clamped: %d %v", v, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"nope", "hops:x", "hops:0", "vcs=2,local=foo,global=zero", "vcs=2,local=zero", "vcs=2,local=hops+5,global=zero", "vcs=99,local=zero,global=zero", "vcs=2,bogus=1,local=zero,global=zero"} {
		if _, err := Parse(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
}
