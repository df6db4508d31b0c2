package flitsim

import "fmt"

// IONodesBySwitch turns an I/O assignment given per switch (a placement's
// roles, where a torus node is a switch and its nodes) into
// Traffic.IONode for the IO pattern.
//
// serve[s] is the switch whose nodes serve the nodes of switch s: s itself
// for an I/O switch, -1 for a switch whose nodes do not take part (a
// failed I/O node: its router still forwards, its nodes are idle). The
// nodes of I/O and idle switches get -1 (they do not send); the h-th node
// of a compute switch (in terminal order: by node GUID) sends its I/O
// messages to node h mod m of its serving switch, which has m nodes, so
// one node per switch gives the one-to-one mapping of a placement.
func (n *Network) IONodesBySwitch(serve []int) ([]int32, error) {
	S := n.g.NumSwitches()
	if len(serve) != S {
		return nil, fmt.Errorf("flitsim: I/O assignment of %d switches, the fabric has %d: %w", len(serve), S, ErrConfig)
	}
	nodesOf := make([][]int32, S)
	for i, s := range n.nodeSw {
		nodesOf[s] = append(nodesOf[s], int32(i))
	}
	out := make([]int32, len(n.nodeSw))
	for s, t := range serve {
		switch {
		case t < -1 || t >= S:
			return nil, fmt.Errorf("flitsim: switch %d is served by switch %d, expected -1..%d: %w", s, t, S-1, ErrConfig)
		case t >= 0 && t != s && serve[t] != t:
			return nil, fmt.Errorf("flitsim: switch %d is served by switch %d, which is no I/O switch: %w", s, t, ErrConfig)
		case t >= 0 && t != s && len(nodesOf[s]) > 0 && len(nodesOf[t]) == 0:
			return nil, fmt.Errorf("flitsim: switch %d is served by switch %d, which has no nodes: %w", s, t, ErrConfig)
		}
		for h, i := range nodesOf[s] {
			out[i] = -1
			if t >= 0 && t != s {
				out[i] = nodesOf[t][h%len(nodesOf[t])]
			}
		}
	}
	return out, nil
}

// IONodesEvery is Traffic.IONode for the IO pattern with an I/O node
// every k nodes (k >= 2): node i with i mod k = 0 serves the k−1 nodes
// after it.
func (n *Network) IONodesEvery(k int) ([]int32, error) {
	if k < 2 {
		return nil, fmt.Errorf("flitsim: an I/O node every %d nodes, expected >= 2: %w", k, ErrConfig)
	}
	out := make([]int32, n.NumNodes())
	for i := range out {
		out[i] = int32(i - i%k)
		if i%k == 0 {
			out[i] = -1
		}
	}
	return out, nil
}
