package deploy

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
)

// deliverable refuses a routing OpenSM cannot deliver as routed: SL2VL
// tables that differ by port (OpenSM programs one map per port kind),
// more VLs than the limit or the ports operate, SLs no QoS policy can
// express, and an OpenSM configuration that does not load the staged
// files or maps SLs to other VLs.
func (d *Deployer) deliverable(ctx context.Context, g *fabric.Graph, r *lft.Routing) error {
	for s, t := range r.SL2VL.Switch {
		if t != nil {
			return fmt.Errorf("%w: switch %s has SL2VL tables of its own (VLs chosen per input and output port, as DOR's dateline classes need); OpenSM's qos_*sl2vl options map SLs to VLs the same way on every port of a kind",
				ErrUndeliverable, g.SwitchName(int32(s)))
		}
	}
	need := r.MaxVL() + 1
	if need > d.cfg.MaxVLs {
		return fmt.Errorf("%w: the routing uses %d VLs, the limit is %d", ErrUndeliverable, need, d.cfg.MaxVLs)
	}
	if err := lft.WriteQoSPolicyPaths(io.Discard, g, r); err != nil {
		return fmt.Errorf("%w: its path SLs: %v", ErrUndeliverable, err)
	}
	pid, err := d.osm.pid()
	var args []string
	if err == nil {
		args = cmdline(d.osm.procDir, pid)
	}
	c, err := readConf(d.cfg.Conf, args)
	if err != nil {
		return err
	}
	d.noteTrapSweeps(!c.trapSweeps())
	if err := c.checkFiles(d.cfg.LFTsFile, d.cfg.QoSPolicyFile); err != nil {
		return err
	}
	if !d.cfg.ManageConf {
		if err := c.checkSL2VL(r.SL2VL.Default, usedSLs(r)); err != nil {
			return err
		}
	}
	return nil
}

// operVLs refuses a routing that needs more VLs than a switch-to-switch
// port operates; it is read once per VL count (after settle: the read
// gives the directed route to a switch).
func (d *Deployer) operVLs(ctx context.Context, g *fabric.Graph, r *lft.Routing) error {
	need := r.MaxVL() + 1
	if need <= d.operVLsOK {
		return nil
	}
	ok, err := d.checkOperVLs(ctx, g, need)
	if ok {
		d.operVLsOK = need
	}
	return err
}

// manageConf makes OpenSM's SL2VL options map the target's SLs as it
// needs (Config.ManageConf). The map can change only while the switches
// hold no routes (nothing in flight meets both maps): then the lines are
// written before the first step's SIGHUP programs them; with routes held
// a different map is refused. beforeWrite runs before the lines are
// written (and its error returned).
func (d *Deployer) manageConf(held, target *lft.Routing, beforeWrite func() error) error {
	if !d.cfg.ManageConf {
		return nil
	}
	var args []string
	if pid, err := d.osm.pid(); err == nil {
		args = cmdline(d.osm.procDir, pid)
	}
	c, err := readConf(d.cfg.Conf, args)
	if err != nil {
		return err
	}
	cerr := c.checkSL2VL(target.SL2VL.Default, usedSLs(target))
	switch {
	case cerr == nil:
		return nil
	case held.Entries() > 0:
		return fmt.Errorf("%w: %v; the switches hold routes, and changing the SL-to-VL map under live traffic cannot be proven safe", ErrUndeliverable, cerr)
	}
	if err := beforeWrite(); err != nil {
		return err
	}
	if err := writeSL2VLBlock(d.cfg.Conf, target.SL2VL.Default); err != nil {
		return fmt.Errorf("writing the SL2VL lines into %s: %w", d.cfg.Conf, err)
	}
	d.log.Info("wrote the routing's SL2VL map into OpenSM's configuration (no routes held yet)", "conf", d.cfg.Conf, "qos_sl2vl", formatSL2VL(target.SL2VL.Default))
	return nil
}

// usedSLs marks the SLs some path uses.
func usedSLs(r *lft.Routing) [lft.NumSLs]bool {
	var u [lft.NumSLs]bool
	for _, t := range [][]uint8{r.SL.ByDest, r.SL.BySrc} {
		for _, sl := range t {
			u[sl&0xF] = true
		}
	}
	for _, sl := range r.SL.Pair {
		u[sl&0xF] = true
	}
	return u
}

var operVLs = regexp.MustCompile(`OperVLs:\.*VL0-(\d+)`)

// checkOperVLs reads the operational VLs of one switch-to-switch port:
// OpenSM masks SL2VL entries beyond them (VL & (2^k-1)), which would
// silently merge the routing's VLs. It reports whether the port was read.
// The query goes over the switch's directed route (the switches may not
// route LIDs yet).
func (d *Deployer) checkOperVLs(ctx context.Context, g *fabric.Graph, need int) (bool, error) {
	s, path := int32(0), ""
	for ; int(s) < g.NumSwitches(); s++ {
		if p, ok := d.paths[g.F.Nodes[g.Switches[s]].GUID]; ok && g.Off[s] < g.Off[s+1] {
			path = p
			break
		}
	}
	if path == "" {
		return false, nil
	}
	port := g.OutPort[g.Off[s]]
	qctx, cancel := d.quick(ctx)
	out, err := d.run.run(qctx, "smpquery", "-D", "portinfo", path, strconv.Itoa(int(port)))
	cancel()
	if err != nil {
		d.log.Warn("cannot read a port's operational VLs (checked at the next rollout)", "err", err)
		return false, nil
	}
	m := operVLs.FindSubmatch(out)
	if m == nil {
		return false, nil
	}
	top, _ := strconv.Atoi(string(m[1]))
	if top+1 < need {
		return false, fmt.Errorf("%w: the routing uses %d VLs, but port %d of %s operates VL0-%d (OpenSM's max_op_vls and the hardware's VLCap decide)",
			ErrUndeliverable, need, port, g.SwitchName(s), top)
	}
	return true, nil
}

// saLanes is how many SA path record queries checkSLs runs at once (the
// same bound as the switch read-backs: ibsim serves a few clients at a
// time, and each query is mostly process start).
const saLanes = 4

// checkSLs asks OpenSM's SA for a sample of the path SLs a step changed,
// the queries of the sample in saLanes lanes.
func (d *Deployer) checkSLs(ctx context.Context, g *fabric.Graph, r *lft.Routing, s *plan.Step) error {
	if len(s.SL) == 0 || d.cfg.SLChecks < 0 {
		return nil
	}
	n := min(d.cfg.SLChecks, len(s.SL))
	type query struct {
		slid, dlid int
		want, got  uint8
		ran        bool
		err        error
	}
	qs := make([]query, 0, n)
	for k := 0; k < n; k++ {
		c := s.SL[k*len(s.SL)/n]
		slid, sw := sourceFor(g, c)
		if slid == 0 || slid == c.DLID {
			continue
		}
		qs = append(qs, query{slid: slid, dlid: c.DLID, want: r.SL.Of(sw, slid, c.DLID)})
	}
	// The SA answers over LID routes, which the step may still lack for
	// some sources: each query gets a few seconds, and a failed query ends
	// the sample at it (said in the log, never taken as SL 0).
	lanes := min(saLanes, len(qs))
	qctx, cancel := context.WithTimeout(ctx, min(d.cfg.ToolTimeout, 5*time.Second)*time.Duration(max(1, (len(qs)+lanes-1)/max(1, lanes))))
	defer cancel()
	// A failed query stops the handing out of later ones; every earlier
	// one completes, so the loop below meets the failure before any query
	// that did not run (or the end of the sample's time).
	_ = parallel.For(qctx, len(qs), lanes, func(_, i int) error {
		one, cancel1 := d.quick(qctx)
		defer cancel1()
		qs[i].got, qs[i].err = pathSL(one, d.run, qs[i].slid, qs[i].dlid)
		qs[i].ran = true
		return qs[i].err
	})
	for _, q := range qs {
		if !q.ran && q.err == nil {
			q.err = fmt.Errorf("not asked (%v)", context.Cause(qctx))
		}
		if q.err != nil {
			d.log.Warn("SA path record query failed; the step's SLs are not sampled further", "slid", q.slid, "dlid", q.dlid, "err", q.err)
			return nil
		}
		if q.got != q.want {
			return fmt.Errorf("OpenSM's SA gives SL %d for the path LID %d -> %d, the step has SL %d: the QoS policy %s did not take",
				q.got, q.slid, q.dlid, q.want, d.cfg.QoSPolicyFile)
		}
	}
	return nil
}

// sourceFor picks a source LID whose path an SL change concerns, and its
// switch.
func sourceFor(g *fabric.Graph, c lft.SLChange) (int, int32) {
	if c.SLID != 0 {
		sw, term := g.Owner(c.SLID)
		if term >= 0 {
			sw = g.Terms[term].Switch
		}
		return c.SLID, sw
	}
	sws := []int32{c.Src}
	if c.Src < 0 {
		sws = sws[:0]
		for s := int32(0); int(s) < g.NumSwitches(); s++ {
			sws = append(sws, s)
		}
	}
	for _, s := range sws {
		for _, ti := range g.TermAt[g.TermOff[s]:g.TermOff[s+1]] {
			if lid := int(g.Terms[ti].LID); lid != c.DLID {
				return lid, s
			}
		}
	}
	return 0, -1
}

// checkSL2VL reads back the SL2VL tables of a few ports after a step that
// changed them and compares the SLs in use with the routing's map.
func (d *Deployer) checkSL2VL(ctx context.Context, g *fabric.Graph, r *lft.Routing, s *plan.Step) error {
	if len(s.SL2VL) == 0 || d.cfg.SL2VLChecks < 0 {
		return nil
	}
	used := usedSLs(r)
	checked := 0
	for sw := int32(0); int(sw) < g.NumSwitches() && checked < d.cfg.SL2VLChecks; sw += max(1, int32(g.NumSwitches()/d.cfg.SL2VLChecks)) {
		if g.Off[sw] == g.Off[sw+1] {
			continue
		}
		lid := int(g.F.Nodes[g.Switches[sw]].Ports[0].LID)
		port := int(g.OutPort[g.Off[sw]])
		qctx, cancel := d.quick(ctx)
		tabs, err := readSL2VL(qctx, d.run, lid, port)
		cancel()
		if err != nil {
			d.log.Warn("cannot read SL2VL tables back", "switch", g.SwitchName(sw), "err", err)
			continue
		}
		checked++
		for in, vls := range tabs {
			for sl := range used {
				if used[sl] && vls[sl] != r.SL2VL.Default[sl] {
					return fmt.Errorf("switch %s port %d (from port %d) maps SL %d to VL %d, the routing needs VL %d: OpenSM did not program the SL2VL map (qos_sl2vl, or VLs beyond the port's operational VLs)",
						g.SwitchName(sw), port, in, sl, vls[sl], r.SL2VL.Default[sl])
				}
			}
		}
	}
	return nil
}

// quick bounds one query of a sample: LID-routed queries may find no
// route in a state between steps, and a sample must not hold up a step.
func (d *Deployer) quick(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, min(d.cfg.ToolTimeout, 5*time.Second))
}

// noteTrapSweeps records OpenSM's sweep_on_trap and says once, and when it
// changes, what it means for a heal with SMP writes: OpenSM's sweep after
// a link's trap rewrites the old tables, so the heal's later steps wait
// for its end (docs/deploy.md recommends FALSE).
func (d *Deployer) noteTrapSweeps(none bool) {
	was := d.osm.noTrapSweep.Swap(none)
	if d.osm.trapConfRead.Swap(true) && was == none {
		return
	}
	if !none && d.cfg.Apply == ApplySMP {
		d.log.Info("OpenSM heavy-sweeps on link traps (sweep_on_trap TRUE): a heal's write steps after the first wait for that sweep to end; docs/deploy.md recommends sweep_on_trap FALSE with apply = smp")
	}
}
