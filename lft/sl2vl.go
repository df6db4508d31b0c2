package lft

import "bytes"

// SL2VL maps a packet's SL to the VL it uses on each hop. Default applies to
// every port without its own table (CA ports always use Default). A switch
// with a table of its own (Switch[s] != nil) maps by (input port, output
// port, SL), so the VL may change along a path, as the dateline scheme of
// DOR / Torus-2QoS needs.
type SL2VL struct {
	Default [NumSLs]uint8
	Switch  []*PortSL2VL // nil, or one entry per switch (nil entries use Default)
}

// PortSL2VL is one switch's SL2VL tables for every (input, output) port
// pair: VL[((in*(NPorts+1))+out)*NumSLs + sl]. Input port 0 stands for
// packets the switch itself injects.
type PortSL2VL struct {
	NPorts int
	VL     []uint8
}

// IdentitySL2VL maps SL i to VL i for SLs below MaxVLs and SL 15 to VL 0
// (VL15 is reserved for subnet management).
func IdentitySL2VL() [NumSLs]uint8 {
	var m [NumSLs]uint8
	for i := 0; i < MaxVLs; i++ {
		m[i] = uint8(i)
	}
	return m
}

// NewPortSL2VL returns a table for a switch with nports ports, every entry
// taken from def.
func NewPortSL2VL(nports int, def [NumSLs]uint8) *PortSL2VL {
	t := &PortSL2VL{NPorts: nports, VL: make([]uint8, (nports+1)*(nports+1)*NumSLs)}
	for i := 0; i < len(t.VL); i += NumSLs {
		copy(t.VL[i:i+NumSLs], def[:])
	}
	return t
}

// Set maps sl from input port in to output port out onto vl.
func (t *PortSL2VL) Set(in, out, sl, vl uint8) {
	t.VL[((int(in)*(t.NPorts+1))+int(out))*NumSLs+int(sl)] = vl
}

// Get returns the VL of sl from input port in to output port out.
func (t *PortSL2VL) Get(in, out, sl uint8) uint8 {
	return t.VL[((int(in)*(t.NPorts+1))+int(out))*NumSLs+int(sl)]
}

// VL returns the VL a packet with SL sl uses leaving switch s through port
// out after arriving on port in.
func (m *SL2VL) VL(s int32, in, out, sl uint8) uint8 {
	if m.Switch != nil && m.Switch[s] != nil {
		t := m.Switch[s]
		if int(in) <= t.NPorts && int(out) <= t.NPorts {
			return t.Get(in, out, sl)
		}
	}
	return m.Default[sl&0xF]
}

// InjectVL returns the VL a CA uses to send a packet with SL sl.
func (m *SL2VL) InjectVL(sl uint8) uint8 { return m.Default[sl&0xF] }

// Uniform reports whether every port uses Default.
func (m *SL2VL) Uniform() bool {
	for _, t := range m.Switch {
		if t != nil {
			return false
		}
	}
	return true
}

func (m *SL2VL) equal(o *SL2VL) bool {
	if m.Default != o.Default {
		return false
	}
	n := max(len(m.Switch), len(o.Switch))
	for s := 0; s < n; s++ {
		var a, b *PortSL2VL
		if s < len(m.Switch) {
			a = m.Switch[s]
		}
		if s < len(o.Switch) {
			b = o.Switch[s]
		}
		if (a == nil) != (b == nil) {
			return false
		}
		if a != nil && (a.NPorts != b.NPorts || !bytes.Equal(a.VL, b.VL)) {
			return false
		}
	}
	return true
}

func (m *SL2VL) clone() SL2VL {
	c := SL2VL{Default: m.Default}
	if m.Switch != nil {
		c.Switch = make([]*PortSL2VL, len(m.Switch))
		for i, t := range m.Switch {
			if t != nil {
				c.Switch[i] = &PortSL2VL{NPorts: t.NPorts, VL: append([]uint8(nil), t.VL...)}
			}
		}
	}
	return c
}
