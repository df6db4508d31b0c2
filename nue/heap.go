package nue

// nodeHeap is an indexed binary min-heap of switches keyed by int64
// distance, with decrease-key. Ties break by switch index so the order of
// extraction is fully determined by the keys.
type nodeHeap struct {
	key []int64 // by switch
	pos []int32 // by switch: index in h, -1 when absent
	h   []heapEntry
}

// heapEntry keeps the key next to the switch: comparisons need no lookup.
type heapEntry struct {
	k int64
	v int32
}

func (a heapEntry) less(b heapEntry) bool {
	return a.k < b.k || (a.k == b.k && a.v < b.v)
}

func newNodeHeap(n int) *nodeHeap {
	nh := &nodeHeap{key: make([]int64, n), pos: make([]int32, n), h: make([]heapEntry, 0, n)}
	for i := range nh.pos {
		nh.pos[i] = -1
	}
	return nh
}

// up moves e from the hole at i towards the root and stores it.
func (nh *nodeHeap) up(i int, e heapEntry) {
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(nh.h[p]) {
			break
		}
		nh.h[i] = nh.h[p]
		nh.pos[nh.h[i].v] = int32(i)
		i = p
	}
	nh.h[i] = e
	nh.pos[e.v] = int32(i)
}

// push inserts v with key k, or lowers its key if present.
func (nh *nodeHeap) push(v int32, k int64) {
	nh.key[v] = k
	e := heapEntry{k, v}
	if p := nh.pos[v]; p >= 0 {
		nh.up(int(p), e)
		return
	}
	nh.h = append(nh.h, e)
	nh.up(len(nh.h)-1, e)
}

// pop removes and returns the minimum; ok is false when empty. The hole
// at the root sinks to a leaf along the smaller children and the last
// entry rises from there (fewer comparisons than sifting it down).
func (nh *nodeHeap) pop() (int32, bool) {
	if len(nh.h) == 0 {
		return -1, false
	}
	h := nh.h
	v := h[0].v
	nh.pos[v] = -1
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	nh.h = h
	if n == 0 {
		return v, true
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		// Branch-free choice of the smaller child: which one it is
		// is unpredictable.
		m := l
		if r := l + 1; r < n {
			a, b := h[r], h[l]
			m += b2i(a.k < b.k) | b2i(a.k == b.k)&b2i(a.v < b.v)
		}
		h[i] = h[m]
		nh.pos[h[i].v] = int32(i)
		i = m
	}
	nh.up(i, last)
	return v, true
}

// reset empties the heap.
func (nh *nodeHeap) reset() {
	for _, e := range nh.h {
		nh.pos[e.v] = -1
	}
	nh.h = nh.h[:0]
}
