package flitsim

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Switching is the flow-control discipline of switch and CA output ports.
type Switching uint8

const (
	// VirtualCutThrough (InfiniBand's discipline) starts a packet on an
	// output VL only when the downstream buffer has room for the whole
	// packet; a started packet never waits for credits.
	VirtualCutThrough Switching = iota
	// Wormhole starts a packet as soon as the output VL is free; every
	// flit needs one credit, so a blocked packet may span several buffers.
	Wormhole
)

// Queueing is the organisation of one input VL buffer.
type Queueing uint8

const (
	// VOQ keeps one credit pool per input VL but lets any packet start
	// whose output port no earlier packet of the same buffer targets
	// (virtual output queues sharing the VL's buffer), which removes
	// head-of-line blocking between output ports.
	VOQ Queueing = iota
	// FIFO lets only the oldest packet of an input VL start.
	FIFO
)

// Allocator is the crossbar allocation scheme, used for both the VL (VC)
// allocation and the switch allocation stage.
type Allocator uint8

const (
	// RoundRobin is a separable input-first allocator with one iteration:
	// every input proposes one candidate (round-robin), every output
	// grants one proposal (round-robin for VC allocation, the VL
	// arbitration for switch allocation).
	RoundRobin Allocator = iota
	// ISLIP is an iterative separable allocator after McKeown's iSLIP:
	// inputs request every candidate, outputs grant one, inputs accept one
	// grant (round-robin), for Config.Iterations rounds; round-robin
	// pointers move only on grants accepted in the first round.
	ISLIP
)

// String returns "vct" or "wormhole".
func (s Switching) String() string {
	if s == Wormhole {
		return "wormhole"
	}
	return "vct"
}

// String returns "voq" or "fifo".
func (q Queueing) String() string {
	if q == FIFO {
		return "fifo"
	}
	return "voq"
}

// String returns "rr" or "islip".
func (a Allocator) String() string {
	if a == ISLIP {
		return "islip"
	}
	return "rr"
}

// ParseSwitching parses "vct" (or "cut-through") and "wormhole".
func ParseSwitching(s string) (Switching, error) {
	switch strings.ToLower(s) {
	case "vct", "cut-through", "virtual-cut-through":
		return VirtualCutThrough, nil
	case "wormhole", "wh":
		return Wormhole, nil
	}
	return 0, fmt.Errorf("flitsim: switching %q, expected vct or wormhole: %w", s, ErrConfig)
}

// ParseQueueing parses "voq" and "fifo".
func ParseQueueing(s string) (Queueing, error) {
	switch strings.ToLower(s) {
	case "voq":
		return VOQ, nil
	case "fifo":
		return FIFO, nil
	}
	return 0, fmt.Errorf("flitsim: queueing %q, expected voq or fifo: %w", s, ErrConfig)
}

// ParseAllocator parses "rr" (or "round-robin") and "islip".
func ParseAllocator(s string) (Allocator, error) {
	switch strings.ToLower(s) {
	case "rr", "round-robin", "roundrobin":
		return RoundRobin, nil
	case "islip":
		return ISLIP, nil
	}
	return 0, fmt.Errorf("flitsim: allocator %q, expected rr or islip: %w", s, ErrConfig)
}

// Config is the hardware model. Times are in cycles, sizes in flits; the
// zero value of every field means its default (see WithDefaults).
type Config struct {
	Switching Switching
	Queueing  Queueing
	Allocator Allocator
	// Iterations of the ISLIP allocator (default 2; RoundRobin uses 1).
	Iterations int

	// PacketFlits is the packet size (the MTU) in flits (default 8).
	PacketFlits int
	// FlitBytes is the flit size in bytes; it only converts results and
	// VL arbitration weights (default 256, so 8 flits = a 2 KiB MTU).
	FlitBytes int
	// BufferFlits is the depth of every input VL buffer, switch and CA
	// (default 4·PacketFlits). Virtual cut-through needs at least
	// PacketFlits.
	BufferFlits int
	// LinkLatency is the time of flight of a flit or a credit on a cable
	// (default 1, minimum 1).
	LinkLatency int
	// ChannelLatency, when set, gives every switch-to-switch channel
	// (fabric.Graph channel ids) its own time of flight, in cycles >= 1:
	// latency classes such as a Dragonfly's local and global cables
	// (GroupLatencies builds it). InjectLatency is that of the links
	// between nodes and switches (0: LinkLatency).
	ChannelLatency []int32
	InjectLatency  int
	// NsPerCycle converts cycles to nanoseconds in reports (0: cycles
	// only); NsPerCycle(FlitBytes, Gb/s) computes it from a link rate.
	NsPerCycle float64
	// PipelineDelay is the time a switch needs from receiving a flit to
	// being able to forward it (routing, allocation; default 0). It adds
	// latency but never blocks the next packet.
	PipelineDelay int
	// RouteStall is the time a packet spends in route computation and VC
	// allocation once it is a candidate of its input VC (the oldest
	// packet, or with VOQ the oldest to its output port, while the VC has
	// no packet in progress) before it may win an output VC (default 0).
	// Unlike PipelineDelay it blocks: the input VC starts nothing else
	// meanwhile, so a channel of one VC carries at most P/(P+RouteStall)
	// flits per cycle for packets of P flits, as in BookSim2's
	// input-queued router (routing_delay + vc_alloc_delay).
	RouteStall int
	// LinkBandwidth is the rate of every link in flits per cycle, in
	// (0, 1] (default 1). A switch output forwards at most one flit per
	// cycle and a switch input sends at most one flit per cycle.
	LinkBandwidth float64

	// VLs is the number of data VLs simulated (default: what the routing
	// uses). Runs whose traffic classes shift VLs need room here.
	VLs int
	// VCsPerVL gives every VL a pool of interchangeable virtual channels
	// (default 1): the routing's VL (SL2VL, or the VC policy's VC) names
	// the pool, and VC allocation grants a packet any free VC of it with
	// room, as BookSim2 allocates among the VCs of a routing class. Each
	// VC has its own BufferFlits; VLs × VCsPerVL is at most 32. Not with
	// VLArb (its tables are per VL).
	VCsPerVL int
	// VLArb is the InfiniBand VL arbitration of every output port; nil
	// means round-robin between VLs, flit by flit.
	VLArb *VLArbitration
}

// VLArbitration is an InfiniBand VL arbitration table (IBA 1.3 vol. 1,
// §7.6.9): a high- and a low-priority list of (VL, weight) entries and the
// limit of high priority.
type VLArbitration struct {
	High []VLWeight
	Low  []VLWeight
	// HighLimit is the amount of high-priority data, in units of 4 KiB,
	// that may be sent while a low-priority packet waits before one
	// low-priority packet gets through; 255 means no limit and 0 lets one
	// high-priority packet through at a time.
	HighLimit int
}

// VLWeight is one arbitration table entry: VL may send Weight units of 64
// bytes (rounded up to whole flits, at least one) before the next entry
// gets its turn. Entries with weight 0 are skipped.
type VLWeight struct {
	VL     uint8
	Weight uint8
}

// ParseVLWeights parses an OpenSM-style list "0:4,1:64".
func ParseVLWeights(s string) ([]VLWeight, error) {
	var out []VLWeight
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var vl, w int
		if _, err := fmt.Sscanf(f, "%d:%d", &vl, &w); err != nil || vl < 0 || vl >= lft.MaxVLs || w < 0 || w > 255 {
			return nil, fmt.Errorf("flitsim: VL arbitration entry %q, expected VL:weight with VL 0..14 and weight 0..255: %w", f, ErrConfig)
		}
		out = append(out, VLWeight{VL: uint8(vl), Weight: uint8(w)})
	}
	return out, nil
}

// WithDefaults returns c with zero fields replaced by their defaults.
func (c Config) WithDefaults() Config {
	if c.Iterations == 0 {
		c.Iterations = 2
	}
	if c.Allocator == RoundRobin {
		c.Iterations = 1
	}
	if c.PacketFlits == 0 {
		c.PacketFlits = 8
	}
	if c.FlitBytes == 0 {
		c.FlitBytes = 256
	}
	if c.BufferFlits == 0 {
		c.BufferFlits = 4 * c.PacketFlits
	}
	if c.LinkLatency == 0 {
		c.LinkLatency = 1
	}
	if c.InjectLatency == 0 {
		c.InjectLatency = c.LinkLatency
	}
	if c.VCsPerVL == 0 {
		c.VCsPerVL = 1
	}
	if c.LinkBandwidth == 0 {
		c.LinkBandwidth = 1
	}
	return c
}

// Validate rejects values out of range (after defaults are applied).
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("flitsim: %s: %w", fmt.Sprintf(format, args...), ErrConfig)
	}
	switch {
	case c.Switching > Wormhole:
		return bad("unknown switching %d", c.Switching)
	case c.Queueing > FIFO:
		return bad("unknown queueing %d", c.Queueing)
	case c.Allocator > ISLIP:
		return bad("unknown allocator %d", c.Allocator)
	case c.Iterations < 1 || c.Iterations > 16:
		return bad("%d allocator iterations, expected 1..16", c.Iterations)
	case c.PacketFlits < 1 || c.PacketFlits > 1<<14:
		return bad("packet of %d flits, expected 1..16384", c.PacketFlits)
	case c.FlitBytes < 1:
		return bad("flit of %d bytes, expected >= 1", c.FlitBytes)
	case c.BufferFlits < 1 || c.BufferFlits > 1<<16:
		return bad("buffer of %d flits, expected 1..65536", c.BufferFlits)
	case c.Switching == VirtualCutThrough && c.BufferFlits < c.PacketFlits:
		return bad("virtual cut-through needs buffers of at least one packet (%d flits), got %d", c.PacketFlits, c.BufferFlits)
	case c.LinkLatency < 1 || c.LinkLatency > 1<<16:
		return bad("link latency %d, expected 1..65536 cycles", c.LinkLatency)
	case c.InjectLatency < 0 || c.InjectLatency > 1<<16:
		return bad("injection link latency %d, expected 1..65536 cycles", c.InjectLatency)
	case c.NsPerCycle < 0:
		return bad("%g ns per cycle, expected >= 0", c.NsPerCycle)
	case c.PipelineDelay < 0 || c.PipelineDelay > 1<<16:
		return bad("pipeline delay %d, expected 0..65536 cycles", c.PipelineDelay)
	case c.RouteStall < 0 || c.RouteStall > 1<<16:
		return bad("route stall %d, expected 0..65536 cycles", c.RouteStall)
	case !(c.LinkBandwidth > 0 && c.LinkBandwidth <= 1):
		return bad("link bandwidth %g flits/cycle, expected (0, 1]", c.LinkBandwidth)
	case c.VLs < 0 || c.VLs > lft.MaxVLs:
		return bad("%d VLs, expected 1..%d", c.VLs, lft.MaxVLs)
	case c.VCsPerVL < 1 || c.VCsPerVL > 16:
		return bad("%d VCs per VL, expected 1..16", c.VCsPerVL)
	case c.VCsPerVL > 1 && c.VLArb != nil:
		return bad("VC pools (%d VCs per VL) with VL arbitration tables: the tables are per VL", c.VCsPerVL)
	}
	if a := c.VLArb; a != nil {
		if a.HighLimit < 0 || a.HighLimit > 255 {
			return bad("VL arbitration high limit %d, expected 0..255", a.HighLimit)
		}
		for _, e := range append(append([]VLWeight(nil), a.High...), a.Low...) {
			if int(e.VL) >= lft.MaxVLs {
				return bad("VL arbitration entry for VL %d, expected 0..%d", e.VL, lft.MaxVLs-1)
			}
		}
	}
	return nil
}

// gap returns the fixed-point time (1/1024 cycles) a link needs per flit.
func (c Config) gap() int64 {
	g := int64(1024/c.LinkBandwidth + 0.5)
	return max(g, 1024)
}

// maxLatency returns the longest time of flight of any link.
func (c Config) maxLatency() int {
	m := max(c.LinkLatency, c.InjectLatency)
	for _, l := range c.ChannelLatency {
		m = max(m, int(l))
	}
	return m
}

// NsPerCycle returns the duration of one cycle in nanoseconds when a link
// carries one flit of flitBytes per cycle at gbps gigabits per second.
func NsPerCycle(flitBytes int, gbps float64) float64 {
	return float64(flitBytes) * 8 / gbps
}

// ParseCycles reads a time as cycles ("3") or nanoseconds ("40ns"),
// converted at nsPerCycle and rounded to the nearest cycle, at least 1.
func ParseCycles(s string, nsPerCycle float64) (int, error) {
	t := strings.TrimSpace(s)
	if ns, ok := strings.CutSuffix(t, "ns"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(ns), 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("flitsim: time %q, expected CYCLES or NANOSECONDSns: %w", s, ErrConfig)
		}
		if nsPerCycle <= 0 {
			return 0, fmt.Errorf("flitsim: time %q in ns needs a link rate (ns per cycle): %w", s, ErrConfig)
		}
		return max(1, int(math.Round(v/nsPerCycle))), nil
	}
	v, err := strconv.Atoi(t)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("flitsim: time %q, expected CYCLES or NANOSECONDSns: %w", s, ErrConfig)
	}
	return v, nil
}

// GroupLatencies returns Config.ChannelLatency for a fabric with switch
// groups: local cycles for channels inside a group, global between
// groups (seed 002 Table III: 40 ns and 400 ns on a Dragonfly).
func GroupLatencies(g *fabric.Graph, groups []int, local, global int) ([]int32, error) {
	if len(groups) != g.NumSwitches() {
		return nil, fmt.Errorf("flitsim: %d group entries for %d switches: %w", len(groups), g.NumSwitches(), ErrConfig)
	}
	if local < 1 || global < 1 {
		return nil, fmt.Errorf("flitsim: link latencies %d and %d, expected >= 1 cycle: %w", local, global, ErrConfig)
	}
	out := make([]int32, g.NumChannels())
	for c := range out {
		out[c] = int32(local)
		if groups[g.Tail[c]] != groups[g.Head[c]] {
			out[c] = int32(global)
		}
	}
	return out, nil
}
