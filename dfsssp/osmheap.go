package dfsssp

// osmHeap is an indexed four-ary min-heap with exactly the tie behaviour of
// OpenSM's complib cl_heap, so that Dijkstra extracts equal distances in
// the order OpenSM does: an element moves up past a parent only with a
// strictly smaller key; moving down, it takes the last of the smallest
// children and moves only while its key is strictly larger; the root is
// extracted by moving the last element to the root and sifting it down.
// Elements are vertex ids 0..n−1. Not safe for concurrent use.
type osmHeap struct {
	key  []int64 // by slot
	vert []int32 // by slot
	pos  []int32 // by vertex: its slot
	size int
}

const arity = 4

func newOSMHeap(n int) *osmHeap {
	return &osmHeap{key: make([]int64, n), vert: make([]int32, n), pos: make([]int32, n)}
}

func (h *osmHeap) put(i int, k int64, v int32) {
	h.key[i], h.vert[i] = k, v
	h.pos[v] = int32(i)
}

func (h *osmHeap) up(i int) {
	k, v := h.key[i], h.vert[i]
	for i > 0 {
		p := (i - 1) / arity
		if k >= h.key[p] {
			break
		}
		h.put(i, h.key[p], h.vert[p])
		i = p
	}
	h.put(i, k, v)
}

func (h *osmHeap) down(i int) {
	k, v := h.key[i], h.vert[i]
	key := h.key[:h.size]
	for {
		first := i*arity + 1
		if first >= len(key) {
			break
		}
		var m int
		if first+arity <= len(key) {
			// The last smallest of four children, as a tournament:
			// each pair keeps its later child on a tie, and so does
			// the final.
			c := key[first : first+arity : first+arity]
			a, ka := first, c[0]
			if c[1] <= ka {
				a, ka = first+1, c[1]
			}
			b, kb := first+2, c[2]
			if c[3] <= kb {
				b, kb = first+3, c[3]
			}
			m = a
			if kb <= ka {
				m = b
			}
		} else {
			m = first
			for c := first + 1; c < len(key); c++ {
				if key[c] <= key[m] {
					m = c
				}
			}
		}
		if k <= key[m] {
			break
		}
		h.put(i, key[m], h.vert[m])
		i = m
	}
	h.put(i, k, v)
}

// insert appends vertex v with key k.
func (h *osmHeap) insert(v int32, k int64) {
	h.put(h.size, k, v)
	h.size++
	h.up(h.size - 1)
}

// setKey changes v's key, sifting up when it shrinks and down when it grows.
func (h *osmHeap) setKey(v int32, k int64) {
	i := int(h.pos[v])
	old := h.key[i]
	h.key[i] = k
	switch {
	case k < old:
		h.up(i)
	case k > old:
		h.down(i)
	}
}

// extract removes and returns the root, or -1 when empty.
func (h *osmHeap) extract() int32 {
	if h.size == 0 {
		return -1
	}
	v := h.vert[0]
	h.size--
	if h.size > 0 {
		h.put(0, h.key[h.size], h.vert[h.size])
		h.down(0)
	}
	return v
}
