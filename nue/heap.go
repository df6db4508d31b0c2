package nue

// nodeHeap is an indexed binary min-heap of switches keyed by int64
// distance, with decrease-key. Ties break by switch index so the order of
// extraction is fully determined by the keys.
type nodeHeap struct {
	key []int64 // by switch
	pos []int32 // by switch: index in h, -1 when absent
	h   []int32
}

func newNodeHeap(n int) *nodeHeap {
	nh := &nodeHeap{key: make([]int64, n), pos: make([]int32, n), h: make([]int32, 0, n)}
	for i := range nh.pos {
		nh.pos[i] = -1
	}
	return nh
}

func (nh *nodeHeap) lessAt(i, j int) bool {
	a, b := nh.h[i], nh.h[j]
	if nh.key[a] != nh.key[b] {
		return nh.key[a] < nh.key[b]
	}
	return a < b
}

func (nh *nodeHeap) swap(i, j int) {
	nh.h[i], nh.h[j] = nh.h[j], nh.h[i]
	nh.pos[nh.h[i]] = int32(i)
	nh.pos[nh.h[j]] = int32(j)
}

func (nh *nodeHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !nh.lessAt(i, p) {
			break
		}
		nh.swap(i, p)
		i = p
	}
}

func (nh *nodeHeap) down(i int) {
	n := len(nh.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && nh.lessAt(r, l) {
			m = r
		}
		if !nh.lessAt(m, i) {
			return
		}
		nh.swap(i, m)
		i = m
	}
}

// push inserts v with key k, or lowers its key if present.
func (nh *nodeHeap) push(v int32, k int64) {
	nh.key[v] = k
	if p := nh.pos[v]; p >= 0 {
		nh.up(int(p))
		return
	}
	nh.h = append(nh.h, v)
	nh.pos[v] = int32(len(nh.h) - 1)
	nh.up(len(nh.h) - 1)
}

// pop removes and returns the minimum; ok is false when empty.
func (nh *nodeHeap) pop() (int32, bool) {
	if len(nh.h) == 0 {
		return -1, false
	}
	v := nh.h[0]
	last := len(nh.h) - 1
	nh.swap(0, last)
	nh.h = nh.h[:last]
	nh.pos[v] = -1
	if last > 0 {
		nh.down(0)
	}
	return v, true
}

// reset empties the heap.
func (nh *nodeHeap) reset() {
	for _, v := range nh.h {
		nh.pos[v] = -1
	}
	nh.h = nh.h[:0]
}
