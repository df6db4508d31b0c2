package cdg

import "slices"

// counts is a State's CDG: per dependency bit (turn*V + VL, laid out for
// the base fabric) the destinations whose paths have it, the bits with a
// count (live), and the dependencies per VL.
type counts struct {
	V     int64
	cnt   []uint16 // a destination counts once, and LIDs fit 16 bits
	live  []uint64
	perVL []int
}

func (k *counts) clone() *counts {
	return &counts{V: k.V, cnt: slices.Clone(k.cnt), live: slices.Clone(k.live), perVL: slices.Clone(k.perVL)}
}

// dec takes one destination off dependency b.
func (k *counts) dec(b int64) {
	if k.cnt[b]--; k.cnt[b] == 0 {
		k.live[b>>6] &^= 1 << (b & 63)
		k.perVL[b%k.V]--
	}
}

// inc adds one destination to dependency b and reports whether b is new
// to the CDG.
func (k *counts) inc(b int64) bool {
	k.cnt[b]++
	if k.cnt[b] != 1 {
		return false
	}
	k.live[b>>6] |= 1 << (b & 63)
	k.perVL[b%k.V]++
	return true
}

// vls returns the VLs of the dependencies of base turn t, one bit each.
func (k *counts) vls(t int64) uint64 {
	from := t * k.V
	w, off := from>>6, uint(from&63)
	x := k.live[w] >> off
	if off+uint(k.V) > 64 {
		x |= k.live[w+1] << (64 - off)
	}
	return x & (1<<uint(k.V) - 1)
}
