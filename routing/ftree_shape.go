package routing

import (
	"cmp"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// ftreeShape is a switch graph recognised as a fat tree.
//
// Recognition, from the graph alone: the leaves are the switches with CAs
// or routers attached (level 0); every other switch's level is its hop
// distance from the nearest leaf. The fabric is a fat tree when every
// switch has a level (reaches a leaf) and every cable joins adjacent
// levels; OpenSM's ftree rules "all CAs on one rank" and "up/down port
// groups" follow for our generators' trees (k-ary n-trees, XGFTs, Clos2,
// Clos3), and a few failed links keep the rules intact. Port-group
// symmetry is not demanded (OpenSM drops it too when given root GUIDs):
// the engine routes damaged trees as long as every switch still reaches
// every leaf of its component by an up*/down* route, and says which pair
// breaks otherwise.
type ftreeShape struct {
	level  []int32 // per switch; 0 for leaves
	top    int32   // highest level
	upOff  []int32 // per switch: its up channels are upCh[upOff[u]:upOff[u+1]], in port order
	upCh   []int32
	ud     upDown  // up = towards the higher level; order = by decreasing level
	leafAt []int32 // per switch: position of a leaf in the leaf order, -1 for other switches
	comp   []int32 // switch components (SwitchComponents)
}

// detectFatTree recognises a fat tree or explains, wrapping
// ErrNotApplicable, the first rule the fabric breaks. O(levels·(S+C)).
func detectFatTree(g *fabric.Graph) (*ftreeShape, error) {
	S := g.NumSwitches()
	if S == 0 {
		return nil, NotApplicable("ftree", "the fabric has no switches")
	}
	sh := &ftreeShape{level: make([]int32, S), leafAt: make([]int32, S), comp: g.SwitchComponents()}
	queue := make([]int32, 0, S)
	for s := int32(0); int(s) < S; s++ {
		sh.level[s] = -1
		sh.leafAt[s] = -1
		if g.TermOff[s+1] > g.TermOff[s] {
			sh.level[s] = 0
			queue = append(queue, s)
		}
	}
	if len(queue) == 0 {
		return nil, NotApplicable("ftree", "no switch has a CA attached, so the tree has no leaves")
	}
	leaves := append([]int32(nil), queue...)
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; sh.level[v] < 0 {
				sh.level[v] = sh.level[u] + 1
				sh.top = max(sh.top, sh.level[v])
				queue = append(queue, v)
			}
		}
	}
	for s := int32(0); int(s) < S; s++ {
		if sh.level[s] < 0 {
			return nil, NotApplicable("ftree", "switch %q is not connected to any switch with CAs (a leaf)", g.SwitchName(s))
		}
	}
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		a, b := g.Tail[c], g.Head[c]
		if sh.level[a] == sh.level[b] {
			return nil, NotApplicable("ftree", "switch %q has a cable within level %d (to %q); a fat tree cables adjacent levels only (level = hops from the nearest switch with CAs)",
				g.SwitchName(a), sh.level[a], g.SwitchName(b))
		}
	}
	sh.ud.up = make([]bool, g.NumChannels())
	sh.upOff = make([]int32, S+1)
	for u := int32(0); int(u) < S; u++ {
		n := int32(0)
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if sh.level[g.Head[c]] > sh.level[u] {
				sh.ud.up[c] = true
				sh.upCh = append(sh.upCh, c)
				n++
			}
		}
		sh.upOff[u+1] = sh.upOff[u] + n
	}
	sh.ud.order = make([]int32, S)
	for i := range sh.ud.order {
		sh.ud.order[i] = int32(i)
	}
	slices.SortStableFunc(sh.ud.order, func(a, b int32) int { return cmp.Compare(sh.level[b], sh.level[a]) })
	sh.orderLeaves(g, leaves)
	return sh, nil
}

// orderLeaves numbers the leaves as the paper's indexing needs: leaves of
// one sub-tree are consecutive, recursively. The sub-trees of level l are
// the components of the graph induced by levels 0..l; each is named by its
// lowest switch index, and leaves sort by their sub-tree at the highest
// level below the top, then the next lower level, …, then by switch index.
// On our generators (numbered from the leaves, sub-tree by sub-tree) this is
// the switch index order; on other numberings it restores the grouping.
func (sh *ftreeShape) orderLeaves(g *fabric.Graph, leaves []int32) {
	L := int(max(sh.top-1, 0)) // levels 1..top-1 define sub-trees
	labels := make([]int32, L*len(leaves))
	for l := int32(1); l < sh.top; l++ {
		label := g.ComponentsWithin(func(s int32) bool { return sh.level[s] <= l })
		for i, s := range leaves {
			labels[i*L+int(sh.top-1-l)] = label[s] // highest level first
		}
	}
	idx := make([]int, len(leaves))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := slices.Compare(labels[a*L:(a+1)*L], labels[b*L:(b+1)*L]); c != 0 {
			return c
		}
		return cmp.Compare(leaves[a], leaves[b])
	})
	for pos, i := range idx {
		sh.leafAt[leaves[i]] = int32(pos)
	}
}
