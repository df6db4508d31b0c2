package fabric_test

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		k        fabric.NodeKind
		s        string
		prefix   byte
		endpoint bool
	}{
		{fabric.Switch, "Switch", 'S', false},
		{fabric.CA, "Ca", 'H', true},
		{fabric.Router, "Rt", 'R', true},
		{0, "NodeKind(0)", '?', false},
	} {
		if c.k.String() != c.s || c.k.Prefix() != c.prefix || c.k.IsEndpoint() != c.endpoint {
			t.Errorf("%d: %q %c %v", c.k, c.k.String(), c.k.Prefix(), c.k.IsEndpoint())
		}
	}
	if got := fabric.NodeIDString(fabric.Switch, 0x2c90000000001); got != "S-0002c90000000001" {
		t.Errorf("NodeIDString = %q", got)
	}
}

func TestWidthsAndSpeeds(t *testing.T) {
	lanes := []int{0, 1, 2, 4, 8, 12}
	for w := fabric.WidthUnknown; w <= fabric.Width12x; w++ {
		got, ok := fabric.ParseWidth(w.String())
		if !ok || got != w || w.Lanes() != lanes[w] {
			t.Errorf("width %d: %q parses to %v %v, lanes %d", w, w.String(), got, ok, w.Lanes())
		}
	}
	if w := fabric.Width(9); w.String() != "Width(9)" || w.Lanes() != 0 {
		t.Errorf("bad width: %q %d", w.String(), w.Lanes())
	}
	if _, ok := fabric.ParseWidth("3x"); ok {
		t.Error(`ParseWidth("3x") succeeded`)
	}
	prev := -1.0
	for s := fabric.SpeedUnknown; s <= fabric.XDR; s++ {
		got, ok := fabric.ParseSpeed(s.String())
		if !ok || got != s || s.LaneGbps() <= prev {
			t.Errorf("speed %d: %q parses to %v %v, %v Gb/s", s, s.String(), got, ok, s.LaneGbps())
		}
		prev = s.LaneGbps()
	}
	if s := fabric.Speed(42); s.String() != "Speed(42)" || s.LaneGbps() != 0 {
		t.Errorf("bad speed: %q %v", s.String(), s.LaneGbps())
	}
	if _, ok := fabric.ParseSpeed("edr"); ok {
		t.Error(`ParseSpeed("edr") succeeded`)
	}
}

func TestNodeLID(t *testing.T) {
	f := graphFabric(t, true)
	for _, c := range []struct {
		id   fabric.NodeID
		want uint16
	}{{gS0, 2}, {gS2, 4}, {gH0, 8}, {gH2, 12}, {gC1, 21}} {
		if got := f.Nodes[c.id].LID(); got != c.want {
			t.Errorf("node %d: LID %d, want %d", c.id, got, c.want)
		}
	}
	// A CA's first cabled port counts.
	f.Nodes[gH2].Ports[1].Peer = fabric.NoPeer
	if got := f.Nodes[gH2].LID(); got != 13 {
		t.Errorf("h2 with port 1 uncabled: LID %d, want 13", got)
	}
	f.Nodes[gH2].Ports[2].Peer = fabric.NoPeer
	if got := f.Nodes[gH2].LID(); got != 0 {
		t.Errorf("uncabled h2: LID %d, want 0", got)
	}
}
