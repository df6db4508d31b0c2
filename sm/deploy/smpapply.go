package deploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/umad"
	"github.com/nuesm/nuesm/lft"
)

// Apply modes (Config.Apply).
const (
	ApplySIGHUP = "sighup" // OpenSM's heavy sweep loads the staged file
	ApplySMP    = "smp"    // the deployer writes the changed LFT blocks itself
)

// ErrSMPAgent marks a step the SMP agent could not carry out (it did not
// start, died twice, or a switch did not answer).
var ErrSMPAgent = errors.New("SMP writes failed")

// blockRef is one 64-entry LFT block of a switch.
type blockRef struct {
	s     int32
	block int
	path  string
}

// applySMP writes the LFT blocks in which next differs from cur with
// SubnSet(LinearForwardingTable) over directed routes and returns the
// tables read back: the Sets' answers (what the switches then hold) for
// the written blocks, Gets for blocks no earlier read gives. The staged
// LFT file holds cur or next, so a heavy sweep of OpenSM writes one of
// the two states of the step's proven transition. With stage nil the
// file already holds next and the writes wait for a sweep in progress to
// end (it may have loaded an older file); otherwise the file holds cur
// (writesBeforeStage), the writes go out at once and stage syncs next
// meanwhile (written closes when the writes are answered). A sweep in
// progress or started meanwhile makes the written blocks be read again
// after it and written again where it reverted them.
func (d *Deployer) applySMP(ctx context.Context, g *fabric.Graph, cur, next *lft.Routing, stage func(written <-chan struct{}) error) (*lft.Routing, error) {
	t0 := time.Now()
	deadline := t0.Add(d.cfg.StepTimeout)
	if stage == nil {
		if err := d.waitSweepEnd(ctx, deadline); err != nil {
			return nil, err
		}
	}
	if w := time.Since(t0); w > time.Millisecond {
		d.log.Debug("waited for OpenSM's heavy sweep to end", "seconds", w.Seconds())
	}
	paths := d.routesOn(g)
	if paths == nil {
		// No route known yet (no dump header, no earlier read): one full
		// read finds them.
		if _, _, err := d.read(ctx, g, nil); err != nil {
			return nil, fmt.Errorf("reading the switches for their directed routes: %w", err)
		}
		if paths = d.routesOn(g); paths == nil {
			return nil, fmt.Errorf("%w: no directed route to the switches is known", ErrSMPAgent)
		}
	}
	writes, gets, got, err := d.smpPlan(g, cur, next, paths)
	if err != nil {
		return nil, err
	}
	mark := d.sweeps.mark()
	open := false
	if stage != nil {
		staged, written := make(chan error, 1), make(chan struct{})
		go func() { staged <- stage(written) }()
		err := d.smpWrite(ctx, g, got, next, writes, gets)
		close(written)
		if serr := <-staged; serr != nil {
			return nil, serr
		}
		if err != nil {
			return nil, err
		}
		d.markSynced()
		// A sweep in progress may still write cur's blocks.
		open = d.sweeps.inside
	} else if err := d.smpWrite(ctx, g, got, next, writes, gets); err != nil {
		return nil, err
	}
	for round := 0; open || d.sweeps.since(d.osm, mark); round++ {
		open = false
		if round == 3 {
			return nil, fmt.Errorf("%w: OpenSM swept the fabric during each of 3 rounds of writes", ErrStepTimeout)
		}
		tw := time.Now()
		if err := d.waitSweepEnd(ctx, deadline); err != nil {
			return nil, err
		}
		d.log.Debug("written; waited for OpenSM's heavy sweep to end", "seconds", time.Since(tw).Seconds(), "writes_seconds", tw.Sub(t0).Seconds())
		mark = d.sweeps.mark()
		reverted, err := d.smpReadAgain(ctx, g, got, next, writes)
		if err != nil {
			return nil, err
		}
		if len(reverted) == 0 {
			break
		}
		d.log.Info("an OpenSM sweep reverted written LFT blocks; writing them again", "blocks", len(reverted))
		if err := d.smpWrite(ctx, g, got, next, reverted, nil); err != nil {
			return nil, err
		}
	}
	d.met.smpBlocks.Add(float64(len(writes)))
	d.smpPending = true
	d.lastG, d.lastRead = g, got.Clone()
	d.readStaged(d.osm.logOffset(), d.pidOrZero())
	return got, nil
}

// smpPlan lists the blocks to write (next differs from cur) and the
// blocks to get (an entry neither written nor known from the last read),
// and returns the known entries as the start of the read-back state.
func (d *Deployer) smpPlan(g *fabric.Graph, cur, next *lft.Routing, paths map[uint64]string) (writes, gets []blockRef, got *lft.Routing, err error) {
	var known Known
	if d.lastRead != nil {
		known = KnownUnchanged(d.lastG, d.lastRead, g, next)
	}
	got = lft.New(g, "read")
	maxLID := g.MaxLID()
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		guid := g.F.Nodes[g.Switches[s]].GUID
		for b := 0; b <= maxLID/lft.BlockSize; b++ {
			lo, hi := max(1, b*lft.BlockSize), min(maxLID, b*lft.BlockSize+lft.BlockSize-1)
			write, get := false, false
			for lid := lo; lid <= hi; lid++ {
				if cur.Port(s, lid) != next.Port(s, lid) {
					write = true
					break
				}
				if known == nil {
					get = true
					continue
				}
				p, ok := known(guid, lid)
				get = get || !ok
				got.SetPort(s, lid, p)
			}
			if !write && !get {
				continue
			}
			path, ok := paths[guid]
			if !ok {
				return nil, nil, nil, fmt.Errorf("%w: no directed route to switch %s", ErrSMPAgent, g.SwitchName(s))
			}
			ref := blockRef{s: s, block: b, path: path}
			if write {
				writes = append(writes, ref)
			} else {
				gets = append(gets, ref)
			}
		}
	}
	return writes, gets, got, nil
}

// blockOf returns block b of switch s of r as an LFT block: entries the
// routing does not define (LID 0, LIDs beyond MaxLID) hold no port, as
// OpenSM writes them.
func blockOf(r *lft.Routing, s int32, b int) [umad.DataSize]byte {
	var data [umad.DataSize]byte
	for i := range data {
		lid := b*lft.BlockSize + i
		data[i] = lft.NoPort
		if lid >= 1 && lid <= r.MaxLID() {
			data[i] = r.Port(s, lid)
		}
	}
	return data
}

// smpWrite sends the Sets of writes and the Gets of gets in one batch and
// stores the answers in got. A Set whose answer differs from the block
// written (in the routing's LIDs) fails the step.
func (d *Deployer) smpWrite(ctx context.Context, g *fabric.Graph, got, next *lft.Routing, writes, gets []blockRef) error {
	ops := make([]umad.Op, 0, len(writes)+len(gets))
	for _, w := range writes {
		ops = append(ops, umad.SetOp(umad.AttrLinearForwardTable, uint32(w.block), w.path, blockOf(next, w.s, w.block)))
	}
	for _, r := range gets {
		ops = append(ops, umad.GetOp(umad.AttrLinearForwardTable, uint32(r.block), r.path))
	}
	res, err := d.smpCall(ctx, ops)
	if err != nil {
		return err
	}
	refs := append(append([]blockRef(nil), writes...), gets...)
	for i, ref := range refs {
		data, err := res[i].Bytes()
		if err != nil {
			return fmt.Errorf("%w: switch %s block %d: %w", ErrSMPAgent, g.SwitchName(ref.s), ref.block, err)
		}
		got.SetBlock(ref.s, ref.block, data[:])
		// The answer to a Set is what the switch holds: it must be the
		// block written, in the LIDs the routing defines.
		if i < len(writes) && blockOf(got, ref.s, ref.block) != blockOf(next, ref.s, ref.block) {
			return fmt.Errorf("%w: switch %s block %d over %s answered the SubnSet with other entries than written", ErrStepTimeout, g.SwitchName(ref.s), ref.block, ref.path)
		}
	}
	return nil
}

// smpReadAgain gets the written blocks again into got and returns the
// ones that no longer hold next.
func (d *Deployer) smpReadAgain(ctx context.Context, g *fabric.Graph, got, next *lft.Routing, writes []blockRef) ([]blockRef, error) {
	ops := make([]umad.Op, len(writes))
	for i, w := range writes {
		ops[i] = umad.GetOp(umad.AttrLinearForwardTable, uint32(w.block), w.path)
	}
	res, err := d.smpCall(ctx, ops)
	if err != nil {
		return nil, err
	}
	var reverted []blockRef
	for i, w := range writes {
		data, err := res[i].Bytes()
		if err != nil {
			return nil, fmt.Errorf("%w: switch %s block %d: %w", ErrSMPAgent, g.SwitchName(w.s), w.block, err)
		}
		got.SetBlock(w.s, w.block, data[:])
		if blockOf(got, w.s, w.block) != blockOf(next, w.s, w.block) {
			reverted = append(reverted, w)
		}
	}
	return reverted, nil
}

// smpCall sends a batch to the agent (started on first use, restarted
// once after a failure by umad.Agent).
func (d *Deployer) smpCall(ctx context.Context, ops []umad.Op) ([]umad.Result, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	res, err := d.agent.Call(ctx, ops, d.cfg.ToolTimeout)
	if err != nil {
		d.met.smpFailures.Inc()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrSMPAgent, err)
	}
	return res, nil
}

// waitSweepEnd waits until OpenSM's log shows no heavy sweep in progress.
func (d *Deployer) waitSweepEnd(ctx context.Context, deadline time.Time) error {
	poll := 10 * time.Millisecond
	for {
		open, err := d.sweeps.open(d.osm)
		if err != nil {
			return fmt.Errorf("reading OpenSM's log: %w", err)
		}
		if !open {
			return nil
		}
		if time.Now().After(deadline) {
			// The retry does not wait for this sweep again: a sweep that
			// does run meanwhile is caught by reading the blocks again.
			d.sweeps.inside = false
			return fmt.Errorf("%w within %v: OpenSM's heavy sweep did not end (no \"SUBNET UP\" in its log)", ErrStepTimeout, d.cfg.StepTimeout)
		}
		if err := d.logWatch.wait(ctx, poll); err != nil {
			return err
		}
		poll = min(2*poll, 100*time.Millisecond)
	}
}

// catchUp makes OpenSM load the staged LFT file after steps written with
// SMPs, or sweep for a link's trap it did not sweep for (oweTrapSweep),
// and waits until its file engine configured the switches and the sweep
// ended. OpenSM's SA answers path records from its own copy of the
// LFTs, which SMP writes leave behind; the file equals what the switches
// hold, so the sweep rewrites blocks with the entries they have.
func (d *Deployer) catchUp(ctx context.Context) error {
	deadline := time.Now().Add(d.cfg.StepTimeout)
	lg := sweepLog{end: d.osm.logOffset()}
	if _, err := d.osm.hup(); err != nil {
		return err
	}
	d.sweeps.hupSent(d.osm)
	poll := 10 * time.Millisecond
	for {
		more, err := d.osm.readLog(lg.end)
		if err != nil {
			return fmt.Errorf("reading OpenSM's log: %w", err)
		}
		lg.merge(more)
		if err := logVerdict(lg); err != nil {
			return err
		}
		if len(lg.configured) > 0 && lg.subnetUp > 0 {
			d.smpPending = false
			d.trapOwed.Store(false)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %v: OpenSM did not load the LFT file the SMPs wrote (its SA serves path records from its own, older copy of the tables until it does)", ErrStepTimeout, d.cfg.StepTimeout)
		}
		if err := d.logWatch.wait(ctx, poll); err != nil {
			return err
		}
		poll = min(2*poll, 100*time.Millisecond)
	}
}

// portsBySMP reads the ports of switch guid (over path) with SMPs: the
// PortInfo state of every port the dump's block lists or the switch has,
// then NodeInfo over each port that is up, for the peer's GUIDs and port.
func (d *Deployer) portsBySMP(ctx context.Context, dump []byte, guid uint64, path string) ([]portSeen, error) {
	res, err := d.smpCall(ctx, []umad.Op{umad.GetOp(umad.AttrNodeInfo, 0, path)})
	if err != nil {
		return nil, err
	}
	ni, err := res[0].Bytes()
	if err != nil {
		return nil, err
	}
	info := umad.ParseNodeInfo(ni)
	if info.NodeGUID != guid {
		return nil, fmt.Errorf("the route %s leads to node %#x, not to the trapping switch", path, info.NodeGUID)
	}
	nports := info.NumPorts
	ops := make([]umad.Op, nports)
	for p := 1; p <= nports; p++ {
		ops[p-1] = umad.GetOp(umad.AttrPortInfo, uint32(p), path)
	}
	if res, err = d.smpCall(ctx, ops); err != nil {
		return nil, err
	}
	seen := make([]portSeen, nports)
	var peerOps []umad.Op
	var upIdx []int
	for i := range res {
		pi, err := res[i].Bytes()
		if err != nil {
			return nil, fmt.Errorf("PortInfo of port %d: %w", i+1, err)
		}
		// PortState: the low nibble of byte 32 (1 Down … 4 Active;
		// IBA vol 1 §14.2.5.6).
		seen[i] = portSeen{port: i + 1, up: pi[32]&0x0f > 1}
		if seen[i].up {
			peerOps = append(peerOps, umad.GetOp(umad.AttrNodeInfo, 0, fmt.Sprintf("%s,%d", path, i+1)))
			upIdx = append(upIdx, i)
		}
	}
	if res, err = d.smpCall(ctx, peerOps); err != nil {
		return nil, err
	}
	for k, i := range upIdx {
		ni, err := res[k].Bytes()
		if err != nil {
			return nil, fmt.Errorf("NodeInfo behind port %d: %w", i+1, err)
		}
		// The peer's node and port GUIDs (a dump names a CA's port by
		// the latter) and the port the SMP entered it by.
		peer := umad.ParseNodeInfo(ni)
		seen[i].peer, seen[i].peerAlt, seen[i].peerPort = peer.NodeGUID, peer.PortGUID, peer.LocalPortNum
	}
	return seen, nil
}
