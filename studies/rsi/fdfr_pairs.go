package rsi

// pairs classifies every ordered pair of distinct live nodes.
func (s *fdfr) pairs() PairState {
	g := s.t.G
	n := g.NumSwitches()
	var ps PairState
	reach := make([]bool, n)
	queue := make([]int32, 0, n)
	// memo per destination: 0 unknown, 1 lost, 2 unsafe, 3 safe
	memo := make([]uint8, n)
	for d := int32(0); int(d) < n; d++ {
		if s.deadNode[d] {
			continue
		}
		// Physical reachability toward d over live channels (reverse BFS).
		clear(reach)
		reach[d] = true
		queue = append(queue[:0], d)
		for h := 0; h < len(queue); h++ {
			v := queue[h]
			for c := g.Off[v]; c < g.Off[v+1]; c++ {
				in := g.Rev[c] // u -> v
				if u := g.Tail[in]; s.live(in) && !reach[u] {
					reach[u] = true
					queue = append(queue, u)
				}
			}
		}
		clear(memo)
		for x := int32(0); int(x) < n; x++ {
			if x == d || s.deadNode[x] {
				continue
			}
			ps.Pairs++
			if !reach[x] {
				ps.Disconnected++
				continue
			}
			switch s.route(x, d, memo) {
			case 1:
				ps.Lost++
				if s.valid[x][s.entryIndex(x, d)] != 0 {
					ps.LostSilent++
				}
				if len(ps.Examples) < s.opt.Examples {
					ps.Examples = append(ps.Examples, [2]int32{x, d})
				}
			case 2:
				ps.Unsafe++
			default:
				ps.Safe++
			}
		}
	}
	return ps
}

// route returns 1 (no valid table path from x to d), 2 (some valid choice
// dead-ends) or 3 (every valid choice delivers). The valid choices are
// minimal ports, so the recursion follows a DAG.
func (s *fdfr) route(x, d int32, memo []uint8) uint8 {
	if x == d {
		return 3
	}
	if memo[x] != 0 {
		return memo[x]
	}
	i := s.entryIndex(x, d)
	e, v := s.entries[x][i], s.valid[x][i]
	some, all := false, v != 0
	for b, c := range e {
		if v&(1<<uint(b)) == 0 {
			continue
		}
		r := uint8(1)
		if s.live(c) {
			r = s.route(s.t.G.Head[c], d, memo)
		}
		some = some || r >= 2
		all = all && r == 3
	}
	res := uint8(1)
	switch {
	case some && all:
		res = 3
	case some:
		res = 2
	}
	memo[x] = res
	return res
}

// entryIndex returns the index of the entry x uses for destination d.
func (s *fdfr) entryIndex(x, d int32) int {
	t := s.t
	if t.Group[x] != t.Group[d] {
		return len(t.Members[t.Group[x]]) + t.Group[d]
	}
	return t.Index[d]
}
