package lft

import (
	"bytes"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// NoPort marks an LFT entry without a route (OpenSM's 0xFF).
const NoPort uint8 = 0xFF

// MaxVLs is the largest number of data VLs InfiniBand offers (VL0–VL14).
const MaxVLs = 15

// NumSLs is the number of service levels.
const NumSLs = 16

// Routing is a complete routing of one fabric: forwarding tables, path SLs
// and SL2VL tables.
type Routing struct {
	Engine string // engine that produced it (informational)
	NumVLs int    // data VLs the routing needs (highest VL used + 1), 1..MaxVLs

	// Switches holds the node GUID of switch i (identifies tables across
	// fabric reloads and in OpenSM dumps).
	Switches []uint64
	// Stride is the number of LFT entries per switch (MaxLID+1).
	Stride int
	// lft is Switches × Stride entries: out port per destination LID;
	// 0 delivers to the switch itself, NoPort means "no route".
	lft []uint8

	SL    SLTable
	SL2VL SL2VL
}

// New returns a routing for g with every LFT entry NoPort, SL 0 for every
// path and the identity SL2VL mapping on every port, using one VL.
func New(g *fabric.Graph, engine string) *Routing {
	S := g.NumSwitches()
	stride := g.MaxLID() + 1
	r := &Routing{
		Engine:   engine,
		NumVLs:   1,
		Switches: make([]uint64, S),
		Stride:   stride,
		lft:      make([]uint8, S*stride),
		SL:       SLTable{ByDest: make([]uint8, stride)},
		SL2VL:    SL2VL{Default: IdentitySL2VL()},
	}
	for s, id := range g.Switches {
		r.Switches[s] = g.F.Nodes[id].GUID
	}
	fill(r.lft, NoPort)
	return r
}

// fill sets every byte of b to x, doubling copies (memmove) instead of a
// byte loop: the tables of large fabrics are megabytes.
func fill(b []uint8, x uint8) {
	if len(b) == 0 {
		return
	}
	b[0] = x
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// MaxLID returns the highest LID the tables cover.
func (r *Routing) MaxLID() int { return r.Stride - 1 }

// NumSwitches returns the number of switch tables.
func (r *Routing) NumSwitches() int { return len(r.Switches) }

// Port returns switch s's out port for lid (NoPort beyond the table).
func (r *Routing) Port(s int32, lid int) uint8 {
	if lid < 0 || lid >= r.Stride {
		return NoPort
	}
	return r.lft[int(s)*r.Stride+lid]
}

// SetPort sets switch s's out port for lid. Distinct (s, lid) entries may
// be set concurrently.
func (r *Routing) SetPort(s int32, lid int, port uint8) { r.lft[int(s)*r.Stride+lid] = port }

// SetBlock stores LFT block b of switch s (data[i] is the port of LID
// b*BlockSize+i, as a LinearForwardingTable SMP carries it); LID 0 and
// LIDs beyond MaxLID are not the routing's and are left out.
func (r *Routing) SetBlock(s int32, b int, data []byte) {
	for i, p := range data {
		if lid := b*BlockSize + i; lid >= 1 && lid <= r.MaxLID() {
			r.SetPort(s, lid, p)
		}
	}
}

// Row returns switch s's whole table, indexed by LID. The caller may modify
// it (it aliases the routing).
func (r *Routing) Row(s int32) []uint8 { return r.lft[int(s)*r.Stride : (int(s)+1)*r.Stride] }

// Entries counts the LFT entries that hold a route (port != NoPort).
func (r *Routing) Entries() int {
	n := 0
	for _, p := range r.lft {
		if p != NoPort {
			n++
		}
	}
	return n
}

// Equal reports whether two routings have identical tables, SLs, SL2VL
// mappings and VL counts (the engine name is ignored).
func Equal(a, b *Routing) bool {
	if a.NumVLs != b.NumVLs || a.Stride != b.Stride || len(a.Switches) != len(b.Switches) {
		return false
	}
	for i := range a.Switches {
		if a.Switches[i] != b.Switches[i] {
			return false
		}
	}
	return bytes.Equal(a.lft, b.lft) && a.SL.equal(&b.SL) && a.SL2VL.equal(&b.SL2VL)
}

// Clone returns a deep copy.
func (r *Routing) Clone() *Routing {
	c := *r
	c.Switches = append([]uint64(nil), r.Switches...)
	c.lft = append([]uint8(nil), r.lft...)
	c.SL = r.SL.clone()
	c.SL2VL = r.SL2VL.clone()
	return &c
}

// CheckShape reports whether r fits graph g: same switches in the same
// order and tables that cover every LID of g.
func (r *Routing) CheckShape(g *fabric.Graph) error {
	if len(r.Switches) != g.NumSwitches() {
		return fmt.Errorf("lft: routing has %d switch tables, fabric has %d switches", len(r.Switches), g.NumSwitches())
	}
	for s, id := range g.Switches {
		if r.Switches[s] != g.F.Nodes[id].GUID {
			return fmt.Errorf("lft: switch %d is 0x%016x in the routing, 0x%016x in the fabric", s, r.Switches[s], g.F.Nodes[id].GUID)
		}
	}
	if r.Stride < g.MaxLID()+1 {
		return fmt.Errorf("lft: tables cover LIDs up to %d, fabric uses up to %d", r.Stride-1, g.MaxLID())
	}
	if r.NumVLs < 1 || r.NumVLs > MaxVLs {
		return fmt.Errorf("lft: %d VLs, expected 1..%d", r.NumVLs, MaxVLs)
	}
	return nil
}

// MaxVL returns the highest VL any SL in use maps to on any port (the
// injection default and every per-switch table).
func (r *Routing) MaxVL() int {
	var used [NumSLs]bool
	for _, sl := range r.SL.ByDest {
		used[sl&0xF] = true
	}
	for _, sl := range r.SL.BySrc {
		used[sl&0xF] = true
	}
	for _, sl := range r.SL.Pair {
		used[sl&0xF] = true
	}
	m := 0
	for sl, u := range used {
		if !u {
			continue
		}
		m = max(m, int(r.SL2VL.Default[sl]))
		for _, t := range r.SL2VL.Switch {
			if t == nil {
				continue
			}
			for i := sl; i < len(t.VL); i += NumSLs {
				m = max(m, int(t.VL[i]))
			}
		}
	}
	return m
}
