package flitsim

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/lft"
)

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{PacketFlits: 8, BufferFlits: 4},        // VCT needs a whole packet
		{LinkBandwidth: 1.5},                    // above one flit per cycle
		{LinkBandwidth: -1},                     // negative
		{LinkLatency: -2},                       // negative
		{PipelineDelay: -1},                     // negative
		{VLs: 16},                               // beyond VL14
		{Allocator: ISLIP, Iterations: 40},      // too many rounds
		{VLArb: &VLArbitration{HighLimit: 300}}, // limit range
		{VLArb: &VLArbitration{High: []VLWeight{{VL: 15, Weight: 1}}}}, // VL15
	}
	for _, c := range bad {
		if err := c.WithDefaults().Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", c, err)
		}
	}
	if err := (Config{}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if err := (Config{Switching: Wormhole, PacketFlits: 8, BufferFlits: 1}).WithDefaults().Validate(); err != nil {
		t.Errorf("wormhole with 1-flit buffers: %v", err)
	}
}

func TestParse(t *testing.T) {
	for _, s := range Patterns() {
		p, err := ParsePattern(s)
		if err != nil || p.String() != s {
			t.Errorf("ParsePattern(%q) = %v, %v", s, p, err)
		}
	}
	if p, _ := ParsePattern("all-to-all"); p != Shift {
		t.Error("all-to-all is not the shift exchange")
	}
	if _, err := ParsePattern("tornado"); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown pattern: %v", err)
	}
	if a, _ := ParseArrival("poisson"); a != Exponential {
		t.Error("poisson is not exponential")
	}
	if s, _ := ParseSwitching("wormhole"); s != Wormhole {
		t.Error("wormhole")
	}
	if q, _ := ParseQueueing("fifo"); q != FIFO {
		t.Error("fifo")
	}
	if a, _ := ParseAllocator("islip"); a != ISLIP {
		t.Error("islip")
	}
	ws, err := ParseVLWeights("0:4, 1:64")
	if err != nil || len(ws) != 2 || ws[1] != (VLWeight{VL: 1, Weight: 64}) {
		t.Errorf("ParseVLWeights = %v, %v", ws, err)
	}
	if _, err := ParseVLWeights("0:300"); err == nil {
		t.Error("weight 300 accepted")
	}
}

// TestUnroutable: a routing that drops one LFT entry, or that uses more
// VLs than simulated, is refused up front.
func TestUnroutable(t *testing.T) {
	f := torus(t, 4, "dor")
	r := f.r.Clone()
	dst := f.g.Terms[5]
	src := f.g.Terms[0].Switch
	r.SetPort(src, int(dst.LID), lft.NoPort)
	if _, err := NewNetwork(f.g, r, Config{}); !errors.Is(err, ErrUnroutable) {
		t.Errorf("hole in the LFT: err = %v", err)
	}
	// A loop: send the destination back and forth between two switches.
	r = f.r.Clone()
	a := f.g.Terms[0].Switch
	c := f.g.Off[a]
	b := f.g.Head[c]
	r.SetPort(a, int(dst.LID), f.g.OutPort[c])
	r.SetPort(b, int(dst.LID), f.g.InPort[c])
	if _, err := NewNetwork(f.g, r, Config{}); !errors.Is(err, ErrUnroutable) {
		t.Errorf("forwarding loop: err = %v", err)
	}
	if _, err := NewNetwork(f.g, f.r, Config{VLs: 1}); !errors.Is(err, ErrUnroutable) {
		t.Errorf("DOR with one VL: err = %v", err)
	}
	if _, err := NewNetwork(f.g, f.r, Config{VLArb: &VLArbitration{High: []VLWeight{{VL: 0, Weight: 1}}}}); !errors.Is(err, ErrConfig) {
		t.Errorf("VL 1 missing from the arbitration: err = %v", err)
	}
}

func TestTrafficValidate(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	bad := []Traffic{
		{Pattern: Uniform, Load: 0},
		{Pattern: Uniform, Load: 1.2},
		{Pattern: HotSpot, Load: 0.5, HotNode: 99},
		{Pattern: NextGroup, Load: 0.5},
		{Pattern: IO, Load: 0.5, IONode: []int32{1}},
		{Pattern: Uniform, Load: 0.5, Classes: []Class{{VLOffset: 1}}}, // VL 2 of 2
		{Pattern: Transpose, Load: 0.5, Messages: -1},
	}
	for _, tr := range bad {
		if _, err := n.Run(context.Background(), tr, RunOptions{}); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", tr, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := n.Run(ctx, Traffic{Pattern: Uniform, Load: 0.5}, RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}
