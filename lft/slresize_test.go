package lft

import "testing"

// TestSLTableResize cuts and widens per-destination rows, per-source rows
// and pairs to a stride.
func TestSLTableResize(t *testing.T) {
	t.Run("cut", func(t *testing.T) {
		tb := SLTable{ByDest: []uint8{0, 1, 2, 3, 4}, BySrc: []uint8{0, 1, 2, 3, 4, 0, 5, 6, 7, 8},
			Pair: map[uint32]uint8{1<<16 | 2: 3, 1<<16 | 4: 1, 4<<16 | 1: 2}}
		tb.Resize(3, 2)
		want := SLTable{ByDest: []uint8{0, 1, 2}, BySrc: []uint8{0, 1, 2, 0, 5, 6}, Pair: map[uint32]uint8{1<<16 | 2: 3}}
		if !tb.equal(&want) {
			t.Fatalf("got %+v, want %+v", tb, want)
		}
	})
	t.Run("widen", func(t *testing.T) {
		tb := SLTable{ByDest: []uint8{0, 1}, BySrc: []uint8{0, 1, 0, 2}}
		tb.Resize(4, 2)
		want := SLTable{ByDest: []uint8{0, 1, 0, 0}, BySrc: []uint8{0, 1, 0, 0, 0, 2, 0, 0}}
		if !tb.equal(&want) {
			t.Fatalf("got %+v, want %+v", tb, want)
		}
	})
}
