package sm

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
)

// repairSuffix marks the engine of repaired tables ("nue+repair").
const repairSuffix = "+repair"

// repair adapts the published routing to a changed fabric with the
// least change (routing.Repair): after a cable or switch failure only the
// entries that led into it change, so a failure costs an update of tens
// of entries, not a full reroute. When nothing led into a failed part (a
// cable or switch came back) the engine chain routes in full, so the
// part carries traffic again.
//
// Repaired tables stay while the fabric stays as it is: a reroute of
// the same fabric (a poll, a restart, POST /reroute) would otherwise
// replace tens of repaired entries by a full routing's thousands.
//
// It applies when tables for this fabric's switches and LIDs are
// published by the chain's first engine (repaired or not), no job is
// routed now or was then (SAR tables follow their jobs), and the result
// verifies; otherwise it returns nil and the engine chain routes.
func (s *Server) repair(ctx context.Context, g *fabric.Graph, hash string, jobs []routing.Job) *routing.Result {
	pub := s.Status().Published
	if len(jobs) > 0 || pub == nil || len(pub.Jobs) > 0 {
		return nil
	}
	base, repaired := strings.CutSuffix(pub.Engine, repairSuffix)
	first, _, _ := strings.Cut(s.cfg.Engines, ",")
	if first, _, _ = strings.Cut(first, ":"); base != first || (pub.FabricSHA256 == hash && !repaired) {
		return nil
	}
	e, err := routing.Lookup(base)
	if err != nil {
		return nil
	}
	old := s.readPublished(g)
	if old == nil {
		return nil
	}
	// The published tables were verified with State vst (nil after a
	// restart): their repair takes the CDG of the destinations the change
	// left intact from it, and is verified against it, walking only the
	// destinations whose paths changed, with the report of a full
	// verification.
	vst, vopt := s.verified.Load(), routing.Options{MaxVLs: s.cfg.MaxVLs}
	if pub.FabricSHA256 == hash {
		rep, next, err := routing.VerifyState(g, old, e, vopt, vst)
		if err != nil {
			return nil
		}
		old.Engine = pub.Engine
		return &routing.Result{Routing: old, Report: rep, State: next, Attempts: []routing.Attempt{{Engine: old.Engine, Report: rep}}}
	}
	t0 := time.Now()
	r, st, err := routing.RepairWith(ctx, g, old, routing.RepairOptions{State: vst})
	tr := time.Since(t0)
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Info("no minimal repair of the published tables; full reroute", "err", err)
		}
		return nil
	}
	if st.Changed == 0 {
		return nil
	}
	t1 := time.Now()
	rep, next, err := routing.VerifyState(g, r, e, vopt, vst)
	tv := time.Since(t1)
	s.metrics.phase.WithLabelValues("route").Observe(tr.Seconds())
	s.metrics.phase.WithLabelValues("verify").Observe(tv.Seconds())
	if err != nil {
		s.log.Warn("the repaired tables do not verify; full reroute", "err", err)
		return nil
	}
	r.Engine = base + repairSuffix
	walked := rep.Destinations
	if next != nil {
		walked = next.Walked()
	}
	s.log.Info("repaired the published tables", "engine", r.Engine, "destinations", st.Dests, "entries", st.Changed,
		"route_seconds", tr.Seconds(), "verify_seconds", tv.Seconds(),
		"repair_destinations_walked", st.Walked, "verify_destinations_walked", walked)
	return &routing.Result{Routing: r, Report: rep, State: next, Attempts: []routing.Attempt{{Engine: r.Engine, Report: rep, Route: tr, Verify: tv}}}
}
