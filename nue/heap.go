package nue

import "math/bits"

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

// radixHeap is a monotone priority queue of switches (a radix heap: Ahuja,
// Mehlhorn, Orlin, Tarjan, JACM 37, 1990) for the per-destination searches,
// whose keys never fall below the last minimum. An entry packs (distance,
// switch) into one uint64, so it pops in the same (key, switch) order as
// nodeHeap; a lower key for a queued switch adds an entry and the old one
// goes stale. Pushing and popping move words between 65 buckets instead of
// sifting through a tree. Usable only while every key shifted by the
// switch bits fits in 63 bits (see radixFits).
type radixHeap struct {
	shift uint
	mask  uint64
	last  uint64
	bk    [65][]uint64
	ne    uint64  // bit b-1: bucket b (1..64) holds entries
	top   int     // highest bucket that may be non-empty
	key   []int64 // by switch: the key of its live entry
	in    []bool  // by switch: has a live entry
	live  int
}

func newRadixHeap(n int) *radixHeap {
	shift := uint(bits.Len(uint(max(n-1, 1))))
	return &radixHeap{shift: shift, mask: 1<<shift - 1, key: make([]int64, n), in: make([]bool, n)}
}

// radixFits reports whether keys up to maxKey fit the packing for n
// switches.
func radixFits(n int, maxKey uint64) bool {
	shift := uint(bits.Len(uint(max(n-1, 1))))
	return maxKey < 1<<(63-shift)
}

func (rh *radixHeap) bucket(e uint64) int { return bits.Len64(e ^ rh.last) }

// push queues v with key k, or lowers its key.
func (rh *radixHeap) push(v int32, k int64) {
	if rh.in[v] {
		if rh.key[v] == k {
			return
		}
	} else {
		rh.in[v] = true
		rh.live++
	}
	rh.key[v] = k
	e := uint64(k)<<rh.shift | uint64(v)
	if e < rh.last {
		// Below the last minimum: only after the queue ran empty (a
		// backtracking step restarts the search); rebuild around e.
		rh.rebase(e)
	}
	rh.add(e)
}

// add puts entry e into its bucket.
func (rh *radixHeap) add(e uint64) {
	b := rh.bucket(e)
	rh.bk[b] = append(rh.bk[b], e)
	rh.top = max(rh.top, b)
	if b > 0 {
		rh.ne |= 1 << (b - 1)
	}
}

// rebase moves every live entry to the buckets relative to a new, lower
// last minimum.
func (rh *radixHeap) rebase(e uint64) {
	var keep []uint64
	for b := 0; b <= rh.top; b++ {
		for _, x := range rh.bk[b] {
			if rh.fresh(x) {
				keep = append(keep, x)
			}
		}
		rh.bk[b] = rh.bk[b][:0]
	}
	rh.last, rh.top, rh.ne = e, 0, 0
	for _, x := range keep {
		rh.add(x)
	}
}

// fresh reports whether entry e is its switch's live entry.
func (rh *radixHeap) fresh(e uint64) bool {
	v := e & rh.mask
	return rh.in[v] && uint64(rh.key[v]) == e>>rh.shift
}

// pop removes and returns the switch of least (key, index); ok is false
// when none is queued.
func (rh *radixHeap) pop() (int32, bool) {
	for rh.live > 0 {
		if len(rh.bk[0]) == 0 {
			// The lowest non-empty bucket: live > 0, so there is one.
			i := bits.TrailingZeros64(rh.ne) + 1
			// Drop the stale entries and find the least; then spread
			// the rest over the buckets below i.
			bi, n, m := rh.bk[i], 0, ^uint64(0)
			for _, x := range bi {
				if rh.fresh(x) {
					bi[n] = x
					n++
					m = min(m, x)
				}
			}
			rh.bk[i] = bi[:0]
			rh.ne &^= 1 << (i - 1)
			if n == 0 {
				continue
			}
			rh.last = m
			for _, x := range bi[:n] {
				rh.add(x)
			}
		}
		n := len(rh.bk[0]) - 1
		e := rh.bk[0][n]
		rh.bk[0] = rh.bk[0][:n]
		if !rh.fresh(e) {
			continue
		}
		v := int32(e & rh.mask)
		rh.in[v] = false
		rh.live--
		return v, true
	}
	rh.reset()
	return -1, false
}

// reset empties the queue.
func (rh *radixHeap) reset() {
	for b := 0; b <= rh.top; b++ {
		for _, x := range rh.bk[b] {
			rh.in[x&rh.mask] = false
		}
		rh.bk[b] = rh.bk[b][:0]
	}
	rh.last, rh.top, rh.live, rh.ne = 0, 0, 0, 0
}
