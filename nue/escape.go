package nue

import "github.com/nuesm/nuesm/fabric"

// escapeTree computes, for every switch in a component with a root, the
// channel towards its parent in a shortest-path spanning tree from the
// root under the weights w (Dijkstra; ties by switch index); roots and
// switches of rootless components get -1. "Built with the current channel
// weights so layers differ" (Algorithm 4.1, line 6).
func escapeTree(g *fabric.Graph, roots []int32, comp []int32, w []int64, nh *nodeHeap) []int32 {
	S := g.NumSwitches()
	parent := make([]int32, S)
	dist := nh.key
	done := make([]bool, S)
	for i := range parent {
		parent[i] = -1
	}
	nh.reset()
	for v := int32(0); int(v) < S; v++ {
		if r := roots[comp[v]]; r == v {
			nh.push(v, 0)
		}
	}
	for {
		u, ok := nh.pop()
		if !ok {
			break
		}
		done[u] = true
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			v := g.Head[c]
			if done[v] {
				continue
			}
			up := g.Rev[c] // v -> u, towards the root
			nd := dist[u] + w[up]
			if nh.pos[v] < 0 || nd < dist[v] {
				parent[v] = up
				nh.push(v, nd)
			}
		}
	}
	return parent
}

// markEscape puts the turns of the escape paths into the layer's used
// turns: every turn up the tree (child → v → parent) that packets from a
// source switch can take, and for the tree paths from the root down to the
// switches of the given destinations the turns down those paths and the
// turns from any other child onto them. The set is acyclic (a closed walk
// in a tree must turn back over the same cable, which is no turn) and
// contains every turn of the tree routes from the sources towards those
// destinations (up to the first switch on the destination's root path,
// then down), so falling back to them never adds a dependency. It returns
// the number of turns it put into use.
func markEscape(g *fabric.Graph, ut *usedTurns, parent []int32, ds []dest, src []bool) int {
	S := g.NumSwitches()
	up := upSwitches(g, parent, src)
	childOff, child := treeChildren(g, parent)
	n := 0
	mustUse := func(a, b int32) {
		if !ut.isUsed(ut.ti.id(a, b)) {
			n++
		}
		if !ut.use(a, b, tEscape) {
			panic("nue: escape turns form a cycle (bug)")
		}
	}
	// up -> up
	for v := int32(0); int(v) < S; v++ {
		if parent[v] < 0 {
			continue
		}
		for _, x := range child[childOff[v]:childOff[v+1]] {
			if up[x] {
				mustUse(parent[x], parent[v])
			}
		}
	}
	// down paths to the destination switches
	onPath := make([]bool, S)
	for _, d := range ds {
		for v := d.sw; !onPath[v]; {
			onPath[v] = true
			if parent[v] < 0 {
				break
			}
			v = g.Head[parent[v]]
		}
	}
	for u := int32(0); int(u) < S; u++ {
		if !onPath[u] {
			continue
		}
		kids := child[childOff[u]:childOff[u+1]]
		for _, c2 := range kids {
			if !onPath[c2] {
				continue
			}
			down := g.Rev[parent[c2]] // u -> c2
			if parent[u] >= 0 {
				mustUse(g.Rev[parent[u]], down) // down -> down
			}
			for _, c1 := range kids {
				if c1 != c2 && up[c1] {
					mustUse(parent[c1], down) // up -> down
				}
			}
		}
	}
	return n
}

// upSwitches marks the switches whose packets can travel up the tree: the
// sources (switches with terminals) and their ancestors.
func upSwitches(g *fabric.Graph, parent []int32, src []bool) []bool {
	S := g.NumSwitches()
	up := make([]bool, S)
	for v := int32(0); int(v) < S; v++ {
		for x := v; src[v] && !up[x]; {
			up[x] = true
			if parent[x] < 0 {
				break
			}
			x = g.Head[parent[x]]
		}
	}
	return up
}

// treeChildren lists each switch's children in the tree given by parent
// pointers (CSR: the children of v are child[childOff[v]:childOff[v+1]],
// in switch order).
func treeChildren(g *fabric.Graph, parent []int32) (childOff, child []int32) {
	S := g.NumSwitches()
	childOff = make([]int32, S+1)
	for v := 0; v < S; v++ {
		if p := parent[v]; p >= 0 {
			childOff[g.Head[p]+1]++
		}
	}
	for v := 0; v < S; v++ {
		childOff[v+1] += childOff[v]
	}
	child = make([]int32, childOff[S])
	fill := append([]int32(nil), childOff[:S]...)
	for v := int32(0); int(v) < S; v++ {
		if p := parent[v]; p >= 0 {
			u := g.Head[p]
			child[fill[u]] = v
			fill[u]++
		}
	}
	return childOff, child
}

// escapeRoutes sets via to the tree routes towards switch w: ancestors of
// w go down towards it, every other switch of w's component goes up.
func escapeRoutes(g *fabric.Graph, parent []int32, comp []int32, w int32, via []int32) {
	for v := range via {
		via[v] = -1
		if comp[v] == comp[w] {
			via[v] = parent[v]
		}
	}
	for x := w; parent[x] >= 0; {
		p := g.Head[parent[x]]
		via[p] = g.Rev[parent[x]]
		x = p
	}
	via[w] = -1
}

// useEscapeRoutes puts the turns of the tree routes from every source
// switch towards w (via, as set by escapeRoutes) into the used turns as
// tUsed, checking each for cycles. On a cycle it takes back what it added
// and reports false.
func useEscapeRoutes(g *fabric.Graph, ut *usedTurns, via []int32, src []bool, w int32, added []int32) ([]int32, bool) {
	added = added[:0]
	for v := int32(0); int(v) < len(via); v++ {
		if !src[v] || via[v] < 0 {
			continue
		}
		for x := v; x != w; {
			c := via[x]
			n := g.Head[c]
			if n == w {
				break
			}
			t := ut.ti.id(c, via[n])
			if !ut.isUsed(t) {
				if !ut.use(c, via[n], tWet) {
					for _, a := range added {
						ut.release(a)
					}
					return added[:0], false
				}
				added = append(added, t)
			}
			x = n
		}
	}
	return added, true
}

// sourceLevels returns every switch's hop distance from the nearest
// switch with terminals (0 for those; -1 where none is reachable).
func sourceLevels(g *fabric.Graph, src []bool) []int32 {
	S := g.NumSwitches()
	lv := make([]int32, S)
	q := make([]int32, 0, S)
	for v := int32(0); int(v) < S; v++ {
		lv[v] = -1
		if src[v] {
			lv[v] = 0
			q = append(q, v)
		}
	}
	for h := 0; h < len(q); h++ {
		u := q[h]
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; lv[v] < 0 {
				lv[v] = lv[u] + 1
				q = append(q, v)
			}
		}
	}
	return lv
}
