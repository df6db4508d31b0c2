package flitsim

// Event kinds (bit flags).
const (
	evHead   uint8 = 1 << iota // the flit is its packet's first
	evTail                     // the flit is its packet's last
	evCredit                   // a credit, not a flit
)

// event is a flit or a credit arriving at the end of a link.
type event struct {
	link int32
	pkt  int32 // packet of a flit
	vl   uint8
	kind uint8
}

// wheel is a timing wheel: one bucket per cycle modulo a power of two
// larger than the longest delay. Buckets keep their capacity, so after a
// warm-up pushing allocates nothing. Within a bucket, events keep their
// insertion order, which makes runs deterministic.
type wheel struct {
	b    [][]event
	mask int64
}

func newWheel(maxDelay int) wheel {
	n := 1
	for n <= maxDelay {
		n <<= 1
	}
	return wheel{b: make([][]event, n), mask: int64(n - 1)}
}

// push schedules ev for cycle t (now < t <= now+maxDelay).
func (w *wheel) push(t int64, ev event) {
	i := t & w.mask
	w.b[i] = append(w.b[i], ev)
}

// bucket returns the events of cycle t; the caller processes them and
// then calls clear(t). Events pushed meanwhile go to later buckets.
func (w *wheel) bucket(t int64) []event { return w.b[t&w.mask] }

// clear empties the bucket of cycle t.
func (w *wheel) clear(t int64) {
	i := t & w.mask
	w.b[i] = w.b[i][:0]
}

// empty reports whether no event is scheduled from cycle t on. It looks
// at the buckets from t's, so it stops soon when an event is near; the run
// asks only when no switch or source is active.
func (w *wheel) empty(t int64) bool {
	for i := int64(0); i <= w.mask; i++ {
		if len(w.b[(t+i)&w.mask]) > 0 {
			return false
		}
	}
	return true
}

// arrivals is a min-heap of (time, source) for message generation, ordered
// by time then source so that ties break deterministically.
type arrivals struct {
	t   []int64
	src []int32
}

func (h *arrivals) len() int { return len(h.t) }

func (h *arrivals) less(i, j int) bool {
	return h.t[i] < h.t[j] || (h.t[i] == h.t[j] && h.src[i] < h.src[j])
}

func (h *arrivals) swap(i, j int) {
	h.t[i], h.t[j] = h.t[j], h.t[i]
	h.src[i], h.src[j] = h.src[j], h.src[i]
}

func (h *arrivals) push(t int64, src int32) {
	h.t = append(h.t, t)
	h.src = append(h.src, src)
	for i := len(h.t) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

// top returns the earliest entry; the heap must not be empty.
func (h *arrivals) top() (int64, int32) { return h.t[0], h.src[0] }

// replaceTop sets the earliest entry's time to t and restores the heap.
func (h *arrivals) replaceTop(t int64) {
	h.t[0] = t
	h.down(0)
}

// pop removes the earliest entry.
func (h *arrivals) pop() {
	n := len(h.t) - 1
	h.swap(0, n)
	h.t, h.src = h.t[:n], h.src[:n]
	h.down(0)
}

func (h *arrivals) down(i int) {
	n := len(h.t)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}
