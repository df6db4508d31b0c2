package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// errReadAll makes the caller read every switch instead.
var errReadAll = errors.New("read every switch")

// readWritten reads back only the switches whose tables known does not
// give (the ones a step writes), each with ibroute over the directed
// route the last full read found, and takes every other switch's table
// from known: a subnet manager writes only the blocks that change, and
// OpenSM's file engine loads the unchanged rows as they were. It returns
// errReadAll when that does not pay (most switches written) or cannot
// be done (a switch without a known route, or a route that now leads to
// another switch: the fabric changed), and the caller reads every switch.
// It returns the number of switches read.
func readWritten(ctx context.Context, run *runner, g *fabric.Graph, known Known, paths map[uint64]string) (*lft.Routing, int, error) {
	if known == nil {
		return nil, 0, errReadAll
	}
	r := lft.New(g, "read")
	var sws []int32
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		guid := g.F.Nodes[g.Switches[s]].GUID
		for lid := 1; lid <= g.MaxLID(); lid++ {
			p, ok := known(guid, lid)
			if !ok {
				sws = append(sws, s)
				break
			}
			r.SetPort(s, lid, p)
		}
	}
	if 2*len(sws) > g.NumSwitches() {
		return nil, 0, errReadAll
	}
	for _, s := range sws {
		if _, ok := paths[g.F.Nodes[g.Switches[s]].GUID]; !ok {
			return nil, 0, errReadAll
		}
	}
	// A few at once: ibsim serves at most 10 clients.
	outs := make([][]byte, len(sws))
	errs := make([]error, len(sws))
	err := parallel.For(ctx, len(sws), 4, func(_, i int) error {
		outs[i], errs[i] = run.run(ctx, "ibroute", "-n", "-D", paths[g.F.Nodes[g.Switches[sws[i]]].GUID])
		return nil
	})
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errReadAll, err)
	}
	out := bytes.Join(outs, nil)
	got, err := lft.ReadLFTs(bytes.NewReader(out), "ibroute", g, lft.ReadOptions{SkipUnknownSwitches: true, AllowMissingSwitches: true, NoRemap: true, SkipLIDsBeyond: true})
	if err != nil {
		return nil, 0, err
	}
	want := map[uint64]bool{}
	for _, s := range sws {
		want[g.F.Nodes[g.Switches[s]].GUID] = true
	}
	var tops []blockTop
	for _, m := range switchGUID.FindAllSubmatch(out, -1) {
		guid, err := strconv.ParseUint(string(m[3]), 16, 64)
		if err != nil || !want[guid] {
			return nil, 0, fmt.Errorf("%w: a directed route led to switch %s, not to a switch the step wrote", errReadAll, m[3])
		}
		delete(want, guid)
		if hi, err := strconv.ParseUint(string(m[1]), 0, 16); err == nil && hi > 0 && hi%lft.BlockSize == 0 {
			tops = append(tops, blockTop{guid: guid, path: string(m[2]), lid: int(hi)})
		}
	}
	if len(want) > 0 {
		return nil, 0, fmt.Errorf("%w: %d written switches did not answer", errReadAll, len(want))
	}
	for _, s := range sws {
		copy(r.Row(s), got.Row(s))
	}
	if err := readTopLIDs(ctx, run, g, r, tops, known); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errReadAll, err)
	}
	return r, len(sws), nil
}

var initiatedFrom = regexp.MustCompile(`(?m)^#\s*Initiated from node ([0-9a-fA-F]+)`)

// localNode returns the node GUID ibnetdiscover names in its header as
// the node it ran from (the diags' node), 0 when the dump does not say.
func localNode(dump []byte) uint64 {
	m := initiatedFrom.FindSubmatch(dump)
	if m == nil {
		return 0
	}
	g, err := strconv.ParseUint(string(m[1]), 16, 64)
	if err != nil {
		return 0
	}
	return g
}

// DRPaths returns a shortest directed route ("0,p1,p2,…", the output
// ports from the local node) to every switch of g that the local node
// reaches through switches, by node GUID; nil when g lacks the local node.
func DRPaths(g *fabric.Graph, local uint64) map[uint64]string {
	f := g.F
	start, ok := f.NodeByGUID(local)
	if !ok {
		return nil
	}
	paths := map[fabric.NodeID]string{start: "0"}
	queue := []fabric.NodeID{start}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if id != start && f.Nodes[id].Kind != fabric.Switch {
			continue // only switches forward directed-route SMPs
		}
		for p := 1; p < len(f.Nodes[id].Ports); p++ {
			peer := f.Nodes[id].Ports[p].Peer
			if peer.Node < 0 || f.Nodes[peer.Node].Kind != fabric.Switch {
				continue
			}
			if _, seen := paths[peer.Node]; seen {
				continue
			}
			paths[peer.Node] = paths[id] + "," + strconv.Itoa(p)
			queue = append(queue, peer.Node)
		}
	}
	out := make(map[uint64]string, len(paths))
	for id, p := range paths {
		if f.Nodes[id].Kind == fabric.Switch {
			out[f.Nodes[id].GUID] = p
		}
	}
	return out
}
