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

// TestSetBlock: a block read from a switch lands on its LIDs; LID 0 and
// LIDs beyond MaxLID are not the routing's.
func TestSetBlock(t *testing.T) {
	g := fixture(t)
	r := New(g, "read")
	data := make([]byte, BlockSize)
	for i := range data {
		data[i] = uint8(i%3 + 1)
	}
	r.SetBlock(0, 0, data)
	for lid := 1; lid <= r.MaxLID(); lid++ {
		if got, want := r.Port(0, lid), uint8(lid%3+1); got != want {
			t.Fatalf("LID %d: port %d, want %d", lid, got, want)
		}
	}
	if r.MaxLID() >= BlockSize {
		t.Fatalf("fixture has %d LIDs; the test wants them in block 0", r.MaxLID())
	}
	r.SetBlock(0, 1, data) // LIDs 64..127: none is the fixture's
	if r.Port(0, 1) != 2 {
		t.Error("a block beyond MaxLID changed block 0")
	}
}
