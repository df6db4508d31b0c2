package flitsim

import "math/bits"

// arbiter is the compiled VL arbitration of every output port (switch
// outputs and CA injection ports): round-robin, or an InfiniBand table.
// It is shared; the per-port state lives in arbState.
//
// The InfiniBand tables are applied flit by flit (under virtual
// cut-through the caller offers only the VL of a packet in progress, so
// choices change at packet boundaries): the current entry of the
// chosen table keeps the link while its VL has a flit ready and weight
// left (weights in flits), then the next entry whose VL is ready takes
// over. High-priority flits sent while a low-priority VL is ready count
// towards the limit; at the limit the low table gets the link until one
// low-priority packet has sent its tail, then the count restarts.
type arbiter struct {
	table          bool
	high, low      []arbEntry
	hiMask, loMask uint32
	limit          int32 // high-priority flits before a low packet, -1 = none
}

type arbEntry struct {
	vl    uint8
	flits int32
}

// arbState is one output port's arbitration state.
type arbState struct {
	rr             uint8 // round-robin: next VL to favour
	hiIdx, loIdx   uint8 // current table entries
	hiLeft, loLeft int32 // weight left in the current entries
	hiSent         int32 // high flits sent while low waited
	lowTurn        bool  // the limit was hit: low until a low tail
}

// arbChoice says what pick chose, for commit.
type arbChoice struct {
	vl   uint8
	low  bool
	idx  uint8
	kept bool // the current entry continues
}

func newArbiter(cfg Config) *arbiter {
	a := cfg.VLArb
	if a == nil {
		return &arbiter{}
	}
	conv := func(es []VLWeight) ([]arbEntry, uint32) {
		var out []arbEntry
		var mask uint32
		for _, e := range es {
			if e.Weight == 0 {
				continue
			}
			f := (int32(e.Weight)*64 + int32(cfg.FlitBytes) - 1) / int32(cfg.FlitBytes)
			out = append(out, arbEntry{vl: e.VL, flits: max(f, 1)})
			mask |= 1 << e.VL
		}
		return out, mask
	}
	ar := &arbiter{table: true, limit: -1}
	ar.high, ar.hiMask = conv(a.High)
	ar.low, ar.loMask = conv(a.Low)
	if a.HighLimit != 255 {
		ar.limit = max(int32(a.HighLimit)*4096/int32(cfg.FlitBytes), int32(cfg.PacketFlits))
	}
	return ar
}

// arbHas reports whether a table gives vl some weight.
func arbHas(a *VLArbitration, vl uint8) bool {
	for _, es := range [][]VLWeight{a.High, a.Low} {
		for _, e := range es {
			if e.VL == vl && e.Weight > 0 {
				return true
			}
		}
	}
	return false
}

// pick chooses among the VLs in ready (a non-empty bit set) without
// changing st; ok is false when no ready VL has weight. Round-robin is
// small enough to be inlined in the allocation loop.
func (a *arbiter) pick(st *arbState, ready uint32) (c arbChoice, ok bool) {
	if a.table {
		return a.tablePick(st, ready)
	}
	return rrPick(st.rr, ready)
}

// rrPick is round-robin: the first ready VL at or after rr.
func rrPick(rr uint8, ready uint32) (c arbChoice, ok bool) {
	rot := bits.RotateLeft32(ready, -int(rr))
	c.vl = uint8((int(rr) + bits.TrailingZeros32(rot)) & 31)
	return c, rot != 0
}

// tablePick is pick with InfiniBand tables.
func (a *arbiter) tablePick(st *arbState, ready uint32) (c arbChoice, ok bool) {
	hi, lo := ready&a.hiMask, ready&a.loMask
	useLow := lo != 0 && (hi == 0 || st.lowTurn || (a.limit >= 0 && st.hiSent >= a.limit))
	if useLow {
		return tableEntry(a.low, st.loIdx, st.loLeft, lo, true)
	}
	if hi != 0 {
		return tableEntry(a.high, st.hiIdx, st.hiLeft, hi, false)
	}
	return c, false
}

func tableEntry(t []arbEntry, idx uint8, left int32, ready uint32, low bool) (arbChoice, bool) {
	if len(t) == 0 {
		return arbChoice{}, false
	}
	start := 0
	if left > 0 {
		// The current entry keeps the link while its VL is ready.
		if ready&(1<<t[idx].vl) != 0 {
			return arbChoice{vl: t[idx].vl, low: low, idx: idx, kept: true}, true
		}
		start = 1
	}
	for k := start; k < start+len(t); k++ {
		j := (int(idx) + k) % len(t)
		if ready&(1<<t[j].vl) != 0 {
			return arbChoice{vl: t[j].vl, low: low, idx: uint8(j)}, true
		}
	}
	return arbChoice{}, false
}

// commit records that the flit chosen by c was sent; tail says whether it
// ended its packet; ready is the set pick chose from.
func (a *arbiter) commit(st *arbState, c arbChoice, tail bool, ready uint32) {
	if !a.table {
		st.rr = c.vl + 1
		return
	}
	a.tableCommit(st, c, tail, ready)
}

// tableCommit is commit with InfiniBand tables.
func (a *arbiter) tableCommit(st *arbState, c arbChoice, tail bool, ready uint32) {
	if c.low {
		if c.kept {
			st.loLeft--
		} else {
			st.loIdx, st.loLeft = c.idx, a.low[c.idx].flits-1
		}
		if st.loLeft <= 0 {
			st.loIdx, st.loLeft = uint8((int(c.idx)+1)%len(a.low)), 0
		}
		if st.hiSent >= a.limit && a.limit >= 0 {
			st.lowTurn = true
		}
		if tail {
			st.lowTurn, st.hiSent = false, 0
		}
		return
	}
	if c.kept {
		st.hiLeft--
	} else {
		st.hiIdx, st.hiLeft = c.idx, a.high[c.idx].flits-1
	}
	if st.hiLeft <= 0 {
		st.hiIdx, st.hiLeft = uint8((int(c.idx)+1)%len(a.high)), 0
	}
	if ready&a.loMask != 0 {
		st.hiSent++
	} else {
		st.hiSent = 0
	}
}
