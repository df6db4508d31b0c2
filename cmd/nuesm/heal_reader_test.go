package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/umad"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/sm/deploy"
)

// lftReader samples every switch's forwarding table with directed-route
// SubnGet(LinearForwardingTable) SMPs through nuesm's SMP agent (the
// co-process the deployer writes with, started with the simulator's
// environment as the deployer starts it): one batch per sample, every
// switch's blocks that hold a LID of the fabric, readerInFlight SMPs in
// flight at once.
//
// A sample is not a snapshot: each block is read at its own instant
// between the sample's start and end, so when switches change during a
// sample it holds each block as it was at some instant of that span,
// and a switch whose blocks change in between may be read half old,
// half new (dump_fts reads switch by switch and block by block in the
// same way). A block is written and read as a whole, so each block read
// is one the switch held. While each block changes at most once within
// a sample (a rollout step writes a block once), every block a sample
// read was still on the switches at the sample's end, so a sample that
// delivers every pair bounds the heal from above by its end; a sample
// that does not read some block as it was after the sample began, so it
// bounds the heal from below by its start. A mixed sample is verified
// like any other: it may show a fault no single instant held.
type lftReader struct {
	g       *fabric.Graph
	agent   *umad.Agent
	ops     []umad.Op
	refs    []blockAt
	timeout time.Duration
}

// readerInFlight bounds the reader's SMPs in flight: the simulator
// serves every client's MADs one at a time, so a reader that takes more
// of it delays the heals it measures (bench/failover/RESULTS.md).
const readerInFlight = 4

// blockAt is one 64-entry LFT block of a switch of the reader's fabric.
type blockAt struct {
	s     int32
	block int
}

// newLFTReader starts the SMP agent with env (the simulator's), finds the
// node it sends from, computes a directed route on g to every switch and
// checks that each leads to the switch g names (NodeInfo).
func newLFTReader(t *testing.T, env []string, g *fabric.Graph) *lftReader {
	t.Helper()
	rd := &lftReader{g: g, timeout: budget(t, 0.05),
		agent: &umad.Agent{Bin: os.Args[0], Env: append(append([]string(nil), env...), envRunMain+"=1"), Dir: t.TempDir(),
			Args: []string{"smp-agent", "--device", "/dev/infiniband/umad0", "--parallel", strconv.Itoa(readerInFlight)}}}
	t.Cleanup(rd.agent.Close)
	local, err := rd.nodeGUIDs([]string{"0"})
	if err != nil {
		t.Fatalf("the SMP agent's own node: %v", err)
	}
	paths, err := switchRoutes(g, local[0])
	if err != nil {
		t.Fatal(err)
	}
	guids, err := rd.nodeGUIDs(paths)
	if err != nil {
		t.Fatalf("NodeInfo of the switches over their directed routes: %v", err)
	}
	for s, guid := range guids {
		if want := g.F.Nodes[g.Switches[s]].GUID; guid != want {
			t.Fatalf("the directed route %s leads to node %#x, not to switch %s (%#x)", paths[s], guid, g.SwitchName(int32(s)), want)
		}
	}
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for _, b := range lidBlocks(g) {
			rd.ops = append(rd.ops, umad.GetOp(umad.AttrLinearForwardTable, uint32(b), paths[s]))
			rd.refs = append(rd.refs, blockAt{s: s, block: b})
		}
	}
	return rd
}

// nodeGUIDs returns the node GUID NodeInfo gives over each route.
func (rd *lftReader) nodeGUIDs(paths []string) ([]uint64, error) {
	ops := make([]umad.Op, len(paths))
	for i, p := range paths {
		ops[i] = umad.GetOp(umad.AttrNodeInfo, 0, p)
	}
	res, err := rd.agent.Call(context.Background(), ops, rd.timeout)
	if err != nil {
		return nil, err
	}
	guids := make([]uint64, len(res))
	for i := range res {
		ni, err := res[i].Bytes()
		if err != nil {
			return nil, fmt.Errorf("over %s: %w", paths[i], err)
		}
		guids[i] = umad.ParseNodeInfo(ni).NodeGUID
	}
	return guids, nil
}

// read takes one sample: every block of every switch in one batch.
func (rd *lftReader) read(ctx context.Context) (*lft.Routing, error) {
	res, err := rd.agent.Call(ctx, rd.ops, rd.timeout)
	if err != nil {
		return nil, err
	}
	r := lft.New(rd.g, "read")
	for i, ref := range rd.refs {
		data, err := res[i].Bytes()
		if err != nil {
			return nil, fmt.Errorf("switch %s block %d: %w", rd.g.SwitchName(ref.s), ref.block, err)
		}
		r.SetBlock(ref.s, ref.block, data[:])
	}
	return r, nil
}

// lidBlocks returns the LFT blocks that hold a LID some port of g answers.
func lidBlocks(g *fabric.Graph) []int {
	var blocks []int
	for b := 0; b <= g.MaxLID()/lft.BlockSize; b++ {
		for lid := max(1, b*lft.BlockSize); lid <= min(g.MaxLID(), (b+1)*lft.BlockSize-1); lid++ {
			if sw, term := g.Owner(lid); sw >= 0 || term >= 0 {
				blocks = append(blocks, b)
				break
			}
		}
	}
	return blocks
}

// switchRoutes returns the deployer's directed route (deploy.DRPaths)
// from the node local to every switch of g, by switch index.
func switchRoutes(g *fabric.Graph, local uint64) ([]string, error) {
	byGUID := deploy.DRPaths(g, local)
	if byGUID == nil {
		return nil, fmt.Errorf("the SMP agent sends from node %#x, which the fabric lacks", local)
	}
	paths := make([]string, g.NumSwitches())
	for s, id := range g.Switches {
		p, ok := byGUID[g.F.Nodes[id].GUID]
		if !ok {
			return nil, fmt.Errorf("switch %s is not reachable from node %#x", g.SwitchName(int32(s)), local)
		}
		paths[s] = p
	}
	return paths, nil
}
