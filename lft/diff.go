package lft

import (
	"fmt"
	"slices"
	"sort"

	"github.com/nuesm/nuesm/fabric"
)

// BlockSize is the number of LFT entries one SubnSet(LinearForwardingTable)
// MAD carries (IBA 14.2.5.10): a subnet manager rewrites a switch's table
// in blocks of 64 LIDs, each block landing atomically.
const BlockSize = 64

// Block returns the number of the 64-entry LFT block holding lid.
func Block(lid int) int { return lid / BlockSize }

// EntryChange is one LFT entry that differs: switch's out port for LID.
type EntryChange struct {
	LID      int
	Old, New uint8
}

// SwitchDelta lists the changed LFT entries of one switch.
type SwitchDelta struct {
	Switch  int32         // switch index in the fabric.Graph
	GUID    uint64        // node GUID
	Entries []EntryChange // by LID, ascending
	Blocks  []int         // changed 64-entry blocks (Block(lid)), ascending
}

// SLChange is one path SL that differs. Src is the source switch whose
// terminals send the path, or -1 when both routings choose SLs by
// destination only (then the change applies to every source). SLID is set
// for a per-pair exception (SLTable.Pair): the SL of the one path from
// that source LID.
type SLChange struct {
	DLID     int
	Src      int32
	SLID     int
	Old, New uint8
}

// SL2VLDelta is one switch whose SL-to-VL mapping differs (Switch = -1:
// the default mapping used by CA ports and switches without tables).
type SL2VLDelta struct {
	Switch  int32
	Entries int        // (input port, output port, SL) triples mapped differently (16 SLs for the default)
	Table   *PortSL2VL // the new routing's table of that switch; nil when it uses the default
}

// Delta is the difference between two routings of one fabric: what a
// subnet manager has to write to turn the old tables into the new ones.
// It is computed by Diff and turned back into the new routing by Apply.
// Slices are owned by the Delta; Tables alias the new routing's.
type Delta struct {
	Stride     int // LFT entries per switch covered (the larger of the two)
	Switches   []SwitchDelta
	SL         []SLChange // by (DLID, Src, SLID)
	SL2VL      []SL2VLDelta
	NewDefault [NumSLs]uint8 // the new default SL2VL map (valid when SL2VL lists switch -1)
	OldVLs     int
	NewVLs     int
	OldEngine  string
	NewEngine  string
}

// DeltaSummary counts what a Delta changes.
type DeltaSummary struct {
	Switches      int   `json:"switches_changed"`
	Entries       int   `json:"lft_entries_changed"`
	Blocks        int   `json:"lft_blocks_changed"`
	Dests         int   `json:"destinations_changed"` // LIDs with at least one changed LFT entry
	SLChanges     int   `json:"sl_changes"`
	SLDests       int   `json:"sl_destinations_changed"`
	SL2VLSwitches int   `json:"sl2vl_switches_changed"`
	SL2VLEntries  int   `json:"sl2vl_entries_changed"`
	DefaultSL2VL  bool  `json:"default_sl2vl_changed"`
	OldVLs        int   `json:"old_vls"`
	NewVLs        int   `json:"new_vls"`
	TotalEntries  int64 `json:"lft_entries_total"` // switches × stride
}

// Empty reports whether the two routings were equal (engine names aside).
func (d *Delta) Empty() bool {
	return len(d.Switches) == 0 && len(d.SL) == 0 && len(d.SL2VL) == 0 && d.OldVLs == d.NewVLs
}

// Summary counts the changes.
func (d *Delta) Summary() DeltaSummary {
	s := DeltaSummary{Switches: len(d.Switches), SLChanges: len(d.SL), OldVLs: d.OldVLs, NewVLs: d.NewVLs}
	dests := map[int]bool{}
	for _, sw := range d.Switches {
		s.Entries += len(sw.Entries)
		s.Blocks += len(sw.Blocks)
		for _, e := range sw.Entries {
			dests[e.LID] = true
		}
	}
	s.Dests = len(dests)
	last := -1
	for _, c := range d.SL {
		if c.DLID != last {
			s.SLDests++
			last = c.DLID
		}
	}
	for _, c := range d.SL2VL {
		if c.Switch < 0 {
			s.DefaultSL2VL = true
		} else {
			s.SL2VLSwitches++
		}
		s.SL2VLEntries += c.Entries
	}
	return s
}

// ChangedDests returns the LIDs with at least one changed LFT entry,
// ascending.
func (d *Delta) ChangedDests() []int {
	seen := map[int]bool{}
	var out []int
	for _, sw := range d.Switches {
		for _, e := range sw.Entries {
			if !seen[e.LID] {
				seen[e.LID] = true
				out = append(out, e.LID)
			}
		}
	}
	sort.Ints(out)
	return out
}

// Diff compares two routings of g entry by entry: LFT entries (tables of
// different strides compare as if padded with NoPort), the SL of every
// path as SLTable.Of sees it, and the SL-to-VL mapping of every (switch,
// input port, output port, SL). Both routings must fit g (CheckShape).
// O(switches × LIDs + switches × ports² × 16).
func Diff(g *fabric.Graph, old, new *Routing) (*Delta, error) {
	for _, r := range []*Routing{old, new} {
		if err := r.CheckShape(g); err != nil {
			return nil, err
		}
	}
	d := &Delta{Stride: max(old.Stride, new.Stride), OldVLs: old.NumVLs, NewVLs: new.NumVLs,
		OldEngine: old.Engine, NewEngine: new.Engine, NewDefault: new.SL2VL.Default}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		var sd *SwitchDelta
		for lid := 0; lid < d.Stride; lid++ {
			a, b := old.Port(s, lid), new.Port(s, lid)
			if a == b {
				continue
			}
			if sd == nil {
				d.Switches = append(d.Switches, SwitchDelta{Switch: s, GUID: old.Switches[s]})
				sd = &d.Switches[len(d.Switches)-1]
			}
			sd.Entries = append(sd.Entries, EntryChange{LID: lid, Old: a, New: b})
			if n := len(sd.Blocks); n == 0 || sd.Blocks[n-1] != Block(lid) {
				sd.Blocks = append(sd.Blocks, Block(lid))
			}
		}
	}
	d.SL = diffSL(g, old, new, d.Stride)
	d.SL2VL = diffSL2VL(g, old, new)
	return d, nil
}

func diffSL(g *fabric.Graph, old, new *Routing, stride int) []SLChange {
	var out []SLChange
	perDest := old.SL.BySrc == nil && new.SL.BySrc == nil
	for dl := 0; dl < stride; dl++ {
		if perDest {
			a, b := slAt(old.SL.ByDest, dl), slAt(new.SL.ByDest, dl)
			if a != b {
				out = append(out, SLChange{DLID: dl, Src: -1, Old: a, New: b})
			}
			continue
		}
		for u := int32(0); int(u) < g.NumSwitches(); u++ {
			a, b := old.SL.Of(u, 0, dl), new.SL.Of(u, 0, dl)
			if a != b {
				out = append(out, SLChange{DLID: dl, Src: u, Old: a, New: b})
			}
		}
	}
	keys := map[uint32]bool{}
	for k := range old.SL.Pair {
		keys[k] = true
	}
	for k := range new.SL.Pair {
		keys[k] = true
	}
	for k := range keys {
		slid, dl := int(k>>16), int(k&0xFFFF)
		sw, _ := g.Owner(slid)
		a, b := old.SL.Of(sw, slid, dl), new.SL.Of(sw, slid, dl)
		_, inOld := old.SL.Pair[k]
		_, inNew := new.SL.Pair[k]
		// A pair only the new routing has must also be written when the
		// base SL under it changes, or Apply would expose the new base.
		if a != b || (inNew && !inOld && baseSL(&new.SL, sw, dl) != b) {
			out = append(out, SLChange{DLID: dl, Src: sw, SLID: slid, Old: a, New: b})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.DLID != b.DLID {
			return a.DLID < b.DLID
		}
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		return a.SLID < b.SLID
	})
	return out
}

// baseSL is t.Of without the per-pair exceptions.
func baseSL(t *SLTable, sw int32, dl int) uint8 {
	if dl < 0 || dl >= len(t.ByDest) {
		return 0
	}
	if t.BySrc != nil && sw >= 0 {
		return t.BySrc[int(sw)*len(t.ByDest)+dl]
	}
	return t.ByDest[dl]
}

func slAt(t []uint8, lid int) uint8 {
	if lid < len(t) {
		return t[lid]
	}
	return 0
}

func diffSL2VL(g *fabric.Graph, old, new *Routing) []SL2VLDelta {
	var out []SL2VLDelta
	if n := countDiff(old.SL2VL.Default[:], new.SL2VL.Default[:]); n > 0 {
		out = append(out, SL2VLDelta{Switch: -1, Entries: n})
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		ta, tb := switchTable(&old.SL2VL, s), switchTable(&new.SL2VL, s)
		if ta == nil && tb == nil && old.SL2VL.Default == new.SL2VL.Default {
			continue
		}
		np := g.F.Nodes[g.Switches[s]].NumPorts()
		n := 0
		for in := 0; in <= np; in++ {
			for o := 0; o <= np; o++ {
				for sl := uint8(0); sl < NumSLs; sl++ {
					if old.SL2VL.VL(s, uint8(in), uint8(o), sl) != new.SL2VL.VL(s, uint8(in), uint8(o), sl) {
						n++
					}
				}
			}
		}
		if n > 0 {
			out = append(out, SL2VLDelta{Switch: s, Entries: n, Table: tb})
		}
	}
	return out
}

func switchTable(m *SL2VL, s int32) *PortSL2VL {
	if m.Switch == nil || int(s) >= len(m.Switch) {
		return nil
	}
	return m.Switch[s]
}

func countDiff(a, b []uint8) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// Apply turns r, a copy of the old routing of the Diff, into the new one:
// LFT entries, SLs (per destination, per source switch, per pair),
// SL2VL tables and the VL count. The result equals the new routing entry
// for entry and as SLTable.Of and SL2VL.VL see it; an SL table that only
// the new routing keeps per source is converted to per-source rows. It
// fails, leaving r partly updated, when r's tables are narrower than the
// Delta or an entry does not hold the old value the Delta expects.
func (d *Delta) Apply(r *Routing) error {
	if r.Stride < d.Stride {
		grow(r, d.Stride)
	}
	for _, sw := range d.Switches {
		if int(sw.Switch) >= len(r.Switches) {
			return fmt.Errorf("lft: apply: switch %d beyond the routing's %d switches", sw.Switch, len(r.Switches))
		}
		for _, e := range sw.Entries {
			if got := r.Port(sw.Switch, e.LID); got != e.Old {
				return fmt.Errorf("lft: apply: switch %d LID %d holds port %d, the diff expects %d", sw.Switch, e.LID, got, e.Old)
			}
			r.SetPort(sw.Switch, e.LID, e.New)
		}
	}
	for _, c := range d.SL {
		ApplySL(&r.SL, len(r.Switches), c)
	}
	for _, c := range d.SL2VL {
		ApplySL2VL(&r.SL2VL, len(r.Switches), c, d.NewDefault)
	}
	r.NumVLs = d.NewVLs
	return nil
}

// ApplySL sets the SL that c changes in t (a table of numSwitches
// switches), switching t to per-source rows when c names a source switch.
func ApplySL(t *SLTable, numSwitches int, c SLChange) {
	switch {
	case c.SLID != 0:
		if t.Pair == nil {
			t.Pair = map[uint32]uint8{}
		}
		t.Pair[uint32(c.SLID)<<16|uint32(c.DLID)] = c.New
	case c.Src < 0:
		t.ByDest[c.DLID] = c.New
		if t.BySrc != nil {
			for s := 0; s < numSwitches; s++ {
				t.SrcRow(int32(s))[c.DLID] = c.New
			}
		}
	default:
		t.EnableBySrc(numSwitches)
		t.SrcRow(c.Src)[c.DLID] = c.New
	}
}

// ApplySL2VL installs c's table (or the default map def for switch -1) in m.
func ApplySL2VL(m *SL2VL, numSwitches int, c SL2VLDelta, def [NumSLs]uint8) {
	if c.Switch < 0 {
		m.Default = def
		return
	}
	if m.Switch == nil {
		if c.Table == nil {
			return
		}
		m.Switch = make([]*PortSL2VL, numSwitches)
	}
	if c.Table == nil {
		m.Switch[c.Switch] = nil
		return
	}
	m.Switch[c.Switch] = &PortSL2VL{NPorts: c.Table.NPorts, VL: slices.Clone(c.Table.VL)}
}

// grow widens r's tables to stride entries per switch (new entries
// NoPort, SL 0).
func grow(r *Routing, stride int) {
	S := len(r.Switches)
	lft := make([]uint8, S*stride)
	for i := range lft {
		lft[i] = NoPort
	}
	for s := 0; s < S; s++ {
		copy(lft[s*stride:], r.lft[s*r.Stride:(s+1)*r.Stride])
	}
	by := make([]uint8, stride)
	copy(by, r.SL.ByDest)
	if r.SL.BySrc != nil {
		bs := make([]uint8, S*stride)
		for s := 0; s < S; s++ {
			copy(bs[s*stride:], r.SL.BySrc[s*r.Stride:(s+1)*r.Stride])
		}
		r.SL.BySrc = bs
	}
	r.lft, r.Stride, r.SL.ByDest = lft, stride, by
}
