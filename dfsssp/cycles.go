package dfsssp

import (
	"container/heap"
	"context"
	"errors"
	"slices"
)

// Vertex states of the cycle search (OpenSM's UNKNOWN, GRAY, BLACK).
const (
	unknown uint8 = iota
	gray
	black
)

// errCorrupt reports an internal inconsistency of the layering (a cycle
// walk that does not close); it is a bug, returned instead of a panic.
var errCorrupt = errors.New("dfsssp: internal error: cycle walk does not close")

// searcher is the resumable depth-first cycle search of OpenSM's
// search_cycle_in_channel_dep_graph over one layer. Vertex states persist
// across calls: a vertex that finished (black) cannot reach a cycle, and
// dependencies only disappear from the layer being searched, so it never
// has to be searched again. One searcher serves every layer in turn.
type searcher struct {
	b      *builder
	l      *layer
	status []uint8 // per channel
	pre    []int32 // per channel: vertex the search came from, -1 none
	pos    []int32 // per channel: position in the tree preorder
	order  []int32 // the layer's vertices in OpenSM's tree preorder
	cursor int     // order[:cursor] holds no unknown vertex outside resets
	resets posHeap // positions < cursor whose vertex became unknown again

	left, right, stack []int32 // preorder scratch
}

type posHeap []int32

func (h posHeap) Len() int           { return len(h) }
func (h posHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h posHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *posHeap) Push(x any)        { *h = append(*h, x.(int32)) }
func (h *posHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newSearcher(b *builder) *searcher {
	C := b.g.NumChannels()
	s := &searcher{b: b, status: make([]uint8, C), pre: make([]int32, C), pos: make([]int32, C),
		left: make([]int32, C), right: make([]int32, C)}
	return s
}

// begin prepares the search of layer l: every vertex unknown, and the
// restart order. OpenSM keeps a layer's vertices in an unbalanced binary
// search tree keyed by channelID, built in creation order, and restarts
// the search at the first unknown vertex of its preorder. That tree is the
// Cartesian tree of the vertices by (key, creation order), built here in
// O(n log n) with a stack instead of n insertions.
func (s *searcher) begin(l *layer) {
	s.l = l
	b := s.b
	s.order = append(s.order[:0], l.nodes...)
	slices.SortFunc(s.order, func(x, y int32) int {
		if kx, ky := b.key[x], b.key[y]; kx != ky {
			if kx < ky {
				return -1
			}
			return 1
		}
		return int(x - y)
	})
	st := s.stack[:0]
	for _, x := range s.order {
		s.status[x] = unknown
		s.pre[x] = -1
		s.left[x], s.right[x] = -1, -1
		last := int32(-1)
		for len(st) > 0 && l.created[st[len(st)-1]] > l.created[x] {
			last = st[len(st)-1]
			st = st[:len(st)-1]
		}
		s.left[x] = last
		if len(st) > 0 {
			s.right[st[len(st)-1]] = x
		}
		st = append(st, x)
	}
	n := len(s.order)
	s.order = s.order[:0]
	if n > 0 {
		st = append(st[:0], st[0])
		for len(st) > 0 {
			x := st[len(st)-1]
			st = st[:len(st)-1]
			s.pos[x] = int32(len(s.order))
			s.order = append(s.order, x)
			if s.right[x] >= 0 {
				st = append(st, s.right[x])
			}
			if s.left[x] >= 0 {
				st = append(st, s.left[x])
			}
		}
	}
	s.stack = st
	s.cursor = 0
	s.resets = s.resets[:0]
}

// root returns the first vertex of the layer's tree, or -1 for an empty
// layer.
func (s *searcher) root() int32 {
	if len(s.order) == 0 {
		return -1
	}
	return s.order[0]
}

// next returns the first unknown vertex in tree preorder, or -1.
func (s *searcher) next() int32 {
	for len(s.resets) > 0 {
		x := s.order[s.resets[0]]
		if s.status[x] == unknown {
			return x
		}
		heap.Pop(&s.resets)
	}
	for ; s.cursor < len(s.order); s.cursor++ {
		if x := s.order[s.cursor]; s.status[x] == unknown {
			return x
		}
	}
	return -1
}

// forget makes vertex x unknown again (it was on a broken cycle).
func (s *searcher) forget(x int32) {
	s.status[x] = unknown
	if int(s.pos[x]) < s.cursor {
		heap.Push(&s.resets, s.pos[x])
	}
}

// head returns the channel turn t leads to.
func (s *searcher) head(t, c1 int32) int32 {
	g := s.b.g
	return g.Off[g.Head[c1]] + t - s.b.tbase[c1]
}

// search continues the depth-first search at vertex cur and returns the
// vertex that closes a cycle (a gray successor), or -1 when every vertex
// has finished. At each step it rescans the vertex's dependency list from
// the start and takes the first successor that is unknown (descend) or
// gray (cycle), skipping black ones.
func (s *searcher) search(cur int32) int32 {
	l, tb := s.l, s.b.tbase
	for cur >= 0 {
		s.status[cur] = gray
		nxt := int32(-1)
		for _, t := range l.adj[tb[cur] : tb[cur]+l.adjLen[cur]] {
			c2 := s.head(t, cur)
			if st := s.status[c2]; st == gray {
				return c2
			} else if st == unknown {
				nxt = c2
				break
			}
		}
		if nxt >= 0 {
			s.pre[nxt] = cur
			cur = nxt
			continue
		}
		s.status[cur] = black
		if p := s.pre[cur]; p >= 0 {
			s.pre[cur] = -1
			cur = p
		} else {
			cur = s.next()
		}
	}
	return -1
}

// weakest walks the cycle closed at w along each vertex's first gray
// successor, making the cycle's vertices unknown, and returns the turn
// with the smallest count (the first one on ties, starting with w's
// outgoing turn) and the channel it leaves (OpenSM's
// get_weakest_link_in_cycle).
func (s *searcher) weakest(w int32) (t, c1 int32, err error) {
	l, tb := s.l, s.b.tbase
	firstGray := func(x int32) (int32, int32) {
		for _, t := range l.adj[tb[x] : tb[x]+l.adjLen[x]] {
			if c2 := s.head(t, x); s.status[c2] == gray {
				return t, c2
			}
		}
		return -1, -1
	}
	t, cur := firstGray(w)
	c1 = w
	if t < 0 {
		return -1, -1, errCorrupt
	}
	for steps := 0; ; steps++ {
		if steps > len(s.order) {
			return -1, -1, errCorrupt
		}
		s.forget(cur)
		u, nxt := firstGray(cur)
		if u < 0 {
			return -1, -1, errCorrupt
		}
		if l.count[u] < l.count[t] {
			t, c1 = u, cur
		}
		cur = nxt
		if cur == w {
			s.forget(w)
			break
		}
	}
	return t, c1, nil
}

// layering assigns every path to a layer (Domke et al. 2011; OpenSM's
// dfsssp_remove_deadlocks): layers 0..limit−2 are searched and their
// cycles broken by moving paths up; the last layer is only checked. It
// returns the VLs needed — the highest layer that had a cycle plus two,
// limit+1 when the last layer still has one — and statistics. ctx is
// checked between broken cycles.
func (b *builder) layering(ctx context.Context, limit int, st *Stats) (int, error) {
	C, T := b.g.NumChannels(), len(b.tdOff)-1
	s := newSearcher(b)
	layers := [2]*layer{b.l0, newLayer(C, T)}
	needed := 1
	var cand []uint64
	iter := 0
	for L := 0; L < limit; L++ {
		cur := layers[L%2]
		if len(cur.nodes) == 0 {
			break
		}
		s.begin(cur)
		if L == limit-1 {
			if s.search(s.root()) >= 0 {
				needed = limit + 1
			}
			break
		}
		nxt := layers[(L+1)%2]
		nxt.reset()
		broken := 0
		for start := s.root(); start >= 0; {
			w := s.search(start)
			if w < 0 {
				break
			}
			if iter++; iter&255 == 0 {
				if err := ctx.Err(); err != nil {
					return 0, err
				}
			}
			needed = L + 2
			t, c1, err := s.weakest(w)
			if err != nil {
				return 0, err
			}
			cur.unlink(t, c1, b.tbase)
			broken++
			if cur.count[t] > 0 {
				cand = b.pathsOn(t, c1, uint8(L), cand[:0])
				for _, x := range cand {
					b.move(int(uint32(x)), cur, nxt)
				}
				st.MovedPaths += int64(len(cand))
			}
			start = w
		}
		st.CyclesBroken = append(st.CyclesBroken, broken)
	}
	return needed, nil
}
