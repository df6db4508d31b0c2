package lft

import "bytes"

// SLTable gives the SL of every path. Most engines (Nue, MinHop, Up*/Down*)
// choose the SL by destination alone: ByDest[lid]. Engines whose SL
// depends on the source (DFSSSP, LASH, DOR's dateline classes) set BySrc:
// one row of Stride SLs per source switch, used for paths from that
// switch's terminals (and from the switch itself). Memory is
// O(switches × LIDs), never O(LIDs²). Pair holds rare per-LID-pair
// exceptions (e.g. SLs read back from an SM), keyed src<<16 | dst.
type SLTable struct {
	ByDest []uint8
	BySrc  []uint8 // nil, or NumSwitches × Stride
	Pair   map[uint32]uint8
}

// Of returns the SL of the path from source LID slid, attached to switch
// srcSwitch, to destination LID dlid.
func (t *SLTable) Of(srcSwitch int32, slid, dlid int) uint8 {
	if t.Pair != nil {
		if sl, ok := t.Pair[uint32(slid)<<16|uint32(dlid)]; ok {
			return sl
		}
	}
	stride := len(t.ByDest)
	if dlid < 0 || dlid >= stride {
		return 0
	}
	if t.BySrc != nil && srcSwitch >= 0 {
		return t.BySrc[int(srcSwitch)*stride+dlid]
	}
	return t.ByDest[dlid]
}

// PerDest reports whether the SL depends on the destination only.
func (t *SLTable) PerDest() bool { return t.BySrc == nil && len(t.Pair) == 0 }

// EnableBySrc switches the table to per-source-switch SLs, initialising
// every row from ByDest.
func (t *SLTable) EnableBySrc(numSwitches int) {
	if t.BySrc != nil {
		return
	}
	stride := len(t.ByDest)
	t.BySrc = make([]uint8, numSwitches*stride)
	for s := 0; s < numSwitches; s++ {
		copy(t.BySrc[s*stride:], t.ByDest)
	}
}

// SrcRow returns the SLs of paths from source switch s (BySrc must be set).
func (t *SLTable) SrcRow(s int32) []uint8 {
	stride := len(t.ByDest)
	return t.BySrc[int(s)*stride : (int(s)+1)*stride]
}

// Compact drops BySrc when every source row equals ByDest, so that
// per-destination routings are recognised as such.
func (t *SLTable) Compact() {
	if t.BySrc == nil {
		return
	}
	stride := len(t.ByDest)
	if stride == 0 {
		t.BySrc = nil
		return
	}
	for off := 0; off < len(t.BySrc); off += stride {
		if !bytes.Equal(t.BySrc[off:off+stride], t.ByDest) {
			return
		}
	}
	t.BySrc = nil
}

func (t *SLTable) equal(u *SLTable) bool {
	if !bytes.Equal(t.ByDest, u.ByDest) || !bytes.Equal(t.BySrc, u.BySrc) || len(t.Pair) != len(u.Pair) {
		return false
	}
	for k, v := range t.Pair {
		if w, ok := u.Pair[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (t *SLTable) clone() SLTable {
	c := SLTable{ByDest: append([]uint8(nil), t.ByDest...), BySrc: append([]uint8(nil), t.BySrc...)}
	if t.BySrc == nil {
		c.BySrc = nil
	}
	if t.Pair != nil {
		c.Pair = make(map[uint32]uint8, len(t.Pair))
		for k, v := range t.Pair {
			c.Pair[k] = v
		}
	}
	return c
}

// Resize gives t stride entries per row (LIDs 0..stride-1), for a
// per-source table numSwitches rows: entries beyond are dropped (with
// the pairs that name such a LID), new ones are SL 0. It binds an SL
// table read for a fabric with more or fewer LIDs to tables of stride
// entries per switch.
func (t *SLTable) Resize(stride, numSwitches int) {
	old := len(t.ByDest)
	for k := range t.Pair {
		if int(k>>16) >= stride || int(k&0xffff) >= stride {
			delete(t.Pair, k)
		}
	}
	if old == stride {
		return
	}
	by := make([]uint8, stride)
	copy(by, t.ByDest)
	if t.BySrc != nil {
		bs := make([]uint8, numSwitches*stride)
		for s := 0; s < numSwitches; s++ {
			copy(bs[s*stride:(s+1)*stride], t.BySrc[s*old:(s+1)*old])
		}
		t.BySrc = bs
	}
	t.ByDest = by
}
