package sm

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// repairSuffix marks the engine of repaired tables ("nue+repair").
const repairSuffix = "+repair"

// baseRouting is the last full routing the daemon published for no job,
// with the State of its full verification: the routing its repairs
// started from. When a cable or switch comes back, the daemon repairs it
// for the fabric rather than the tables published since (see repair).
type baseRouting struct {
	engine string        // the engine that routed it
	hash   string        // SHA-256 of its fabric's dump
	g      *fabric.Graph // its fabric (st's too: kept anyway)
	r      *lft.Routing
	st     *cdg.State
}

// keepBase records res, published for g (dump hash) and jobs, as the
// base of later repairs when it is a full routing for no job with a
// State; any other full routing leaves no base.
func (s *Server) keepBase(g *fabric.Graph, hash string, res *routing.Result, jobs []routing.Job) {
	if len(jobs) > 0 || res.State == nil || strings.HasSuffix(res.Routing.Engine, repairSuffix) {
		s.base.Store(nil)
		return
	}
	s.base.Store(&baseRouting{engine: res.Routing.Engine, hash: hash, g: g, r: res.Routing, st: res.State})
}

// repair adapts the published routing to a changed fabric with the
// least change (routing.Repair): after a cable or switch failure only the
// entries that led into it change, so a failure costs an update of tens
// of entries, not a full reroute. When a cable or switch comes back (the
// fabric has parts the published one lacks), the last full routing
// (baseRouting) is repaired for the fabric instead: its entries come back
// wherever nothing still failed breaks them, so the part carries its
// traffic again and the change undoes the failures' repairs; the fabric
// whole again gets the full routing back, entry for entry.
//
// Repaired tables stay while the fabric stays as it is: a reroute of
// the same fabric (a poll, a restart, POST /reroute) would otherwise
// replace tens of repaired entries by a full routing's thousands. Any
// published tables stay, verified, when the dump is rewritten with the
// fabric they were verified for in other text (descriptions, node
// order: keepPublished), after a restart too (the published dump tells
// that fabric: publishedGraph); a reroute asked again for that text
// routes a full routing in full, as for the text it was routed from.
//
// Published tables of a full routing stay when the fabric changes back
// to the one they were routed for (keepRouted): a host or cable back
// after a loss that kept them.
//
// It applies when tables for this fabric's switches and LIDs are
// published by the chain's first engine (repaired or not), no job is
// routed now or was then (SAR tables follow their jobs), the result
// verifies and, after a restart, the routing configuration is the one
// they were published under; otherwise it returns nil and the engine
// chain routes.
func (s *Server) repair(ctx context.Context, g *fabric.Graph, hash string, jobs []routing.Job) *routing.Result {
	pub := s.Status().Published
	if len(jobs) > 0 || pub == nil || len(pub.Jobs) > 0 {
		return nil
	}
	if rc := s.cfg.routingConfig(); s.pubGraph.Load() == nil && pub.RoutingConfig != "" && pub.RoutingConfig != rc {
		s.log.Info("restarted under another routing configuration; full reroute", "published", pub.RoutingConfig, "now", rc)
		return nil
	}
	base, repaired := strings.CutSuffix(pub.Engine, repairSuffix)
	first, _, _ := strings.Cut(s.cfg.Engines, ",")
	if first, _, _ = strings.Cut(first, ":"); base != first {
		return nil
	}
	// The chain's first engine as configured (its parameters can change
	// what verified means, e.g. CA delivery only), not its defaults.
	e := s.engines[0]
	if e.Name() != base {
		return nil
	}
	if !repaired {
		if res := s.keepRouted(g, e); res != nil || pub.FabricSHA256 == hash {
			return res
		}
	}
	// The published tables were verified with State vst (nil after a
	// restart): their repair takes the CDG of the destinations the change
	// left intact from it, and is verified against it, walking only the
	// destinations whose paths changed, with the report of a full
	// verification.
	vst := s.verified.Load()
	if pub.FabricSHA256 == hash {
		return s.keepPublished(g, e, pub.Engine, vst)
	}
	if pg := s.pubGraph.Load(); pg != nil && g.Same(pg) {
		// The fabric the published tables were verified for, in other
		// text. Asked again for the text last routed, a full routing
		// routes it in full (as keepRouted).
		if lt := s.pubText.Load(); !repaired && lt != nil && *lt == hash {
			return nil
		}
		return s.keepPublished(g, e, pub.Engine, vst)
	}
	if s.pubGraph.Load() == nil {
		// After a restart: the fabric the published dump describes.
		if pg := s.publishedGraph(); pg != nil && g.Same(pg) {
			return s.keepPublished(g, e, pub.Engine, vst)
		}
	}
	if !vst.Covers(g) {
		if b := s.base.Load(); b != nil && b.engine == base && b.st.Covers(g) {
			return s.repairFrom(ctx, g, e, repairSource{engine: base, r: b.r, st: b.st, base: true, whole: hash == b.hash})
		}
	}
	old := s.readPublished(g)
	if old == nil {
		return nil
	}
	return s.repairFrom(ctx, g, e, repairSource{engine: base, r: old, st: vst})
}

// keepPublished returns the published tables of engine, verified for g
// against vst, the State they were verified with for the last reroute's
// fabric (nil after a restart: verified in full): g is that fabric
// (fabric.Graph.Same), in the same text or in another (descriptions,
// node order), so no routing or repair runs. It returns nil, and logs
// why, when they cannot be read or do not verify.
func (s *Server) keepPublished(g *fabric.Graph, e routing.Engine, engine string, vst *cdg.State) *routing.Result {
	old, err := lft.ReadTableSet(s.pub.currentPath(""), g, lft.ReadOptions{})
	if err != nil {
		s.log.Warn("published tables unreadable; full reroute", "err", err)
		return nil
	}
	old.Engine = engine
	res, err := s.verifyKept(g, e, old, vst)
	if err != nil {
		s.log.Warn("the published tables do not verify for the fabric; full reroute", "err", err)
	}
	return res
}

// verifyKept verifies tables r, kept without a routing or repair run,
// for g against st (timed as the reroute's verify phase), and returns
// them as the reroute's result.
func (s *Server) verifyKept(g *fabric.Graph, e routing.Engine, r *lft.Routing, st *cdg.State) (*routing.Result, error) {
	t0 := time.Now()
	rep, next, err := routing.VerifyState(g, r, e, routing.Options{MaxVLs: s.cfg.MaxVLs}, st)
	tv := time.Since(t0)
	s.mark("verify", tv)
	if err != nil {
		return nil, err
	}
	return &routing.Result{Routing: r, Report: rep, State: next, Attempts: []routing.Attempt{{Engine: r.Engine, Report: rep, Verify: tv}}}, nil
}

// keepRouted returns the base routing, verified for g against its State,
// when the fabric changed since the last reroute and g is again the
// fabric the base was routed for (fabric.Graph.Same: the same switches,
// LIDs, CA and router ports and cables, so every entry means what it
// meant there) in the same switch order; nil otherwise. A reroute of the
// fabric last routed (POST /reroute, a poll) still routes in full: that
// is how an operator asks for one. The caller has checked that the
// published tables are not repaired: then they are the base routing's (a
// loss that kept them published nothing), and keeping it publishes
// nothing either.
func (s *Server) keepRouted(g *fabric.Graph, e routing.Engine) *routing.Result {
	b, last := s.base.Load(), s.pubGraph.Load()
	if b == nil || last == nil || g.Same(last) || b.engine != e.Name() || !g.Same(b.g) || b.r.CheckShape(g) != nil {
		return nil
	}
	res, err := s.verifyKept(g, e, b.r, b.st)
	if err != nil {
		s.log.Warn("the routed tables do not verify for their fabric; full reroute", "err", err)
		return nil
	}
	s.log.Info("the fabric is the one the published tables were routed for; kept", "engine", b.engine, "verify_seconds", res.Attempts[0].Verify.Seconds())
	return res
}

// repairSource is what repairFrom repairs: tables of engine, verified
// with State st (nil: none kept), either the published ones or the base
// routing (base), whose fabric g may be again (whole).
type repairSource struct {
	engine      string
	r           *lft.Routing
	st          *cdg.State
	base, whole bool
}

// repairFrom repairs src for g and verifies the result against src's
// State. It returns nil when the repair or its verification fails, and
// when the published tables need no change (nothing led into a failed
// part) though g has parts their fabric lacked: the engine chain then
// routes, so a part that came back without a base routing carries
// traffic again. A fabric that only lost parts (a host's cable, a switch
// cable nothing used) keeps the published tables, verified for it (the
// publication then finds them unchanged), and its return keeps them
// too (keepRouted): a host that reboots costs no reroute and no rollout.
func (s *Server) repairFrom(ctx context.Context, g *fabric.Graph, e routing.Engine, src repairSource) *routing.Result {
	t0 := time.Now()
	r, st, err := routing.RepairWith(ctx, g, src.r, routing.RepairOptions{State: src.st})
	tr := time.Since(t0)
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Info("no minimal repair of the published tables; full reroute", "err", err)
		}
		return nil
	}
	if st.Changed == 0 && !src.base {
		if pg := s.publishedGraph(); pg == nil || !g.Within(pg) {
			return nil
		}
	}
	t1 := time.Now()
	rep, next, err := routing.VerifyState(g, r, e, routing.Options{MaxVLs: s.cfg.MaxVLs}, src.st)
	tv := time.Since(t1)
	s.mark("route", tr)
	s.mark("verify", tv)
	if err != nil {
		s.log.Warn("the repaired tables do not verify; full reroute", "err", err)
		return nil
	}
	r.Engine = src.engine + repairSuffix
	if src.whole && st.Changed == 0 {
		r.Engine = src.engine // the base routing itself, on its own fabric
	}
	walked := rep.Destinations
	if next != nil {
		walked = next.Walked()
	}
	from := "published tables"
	if src.base {
		from = "last full routing"
	}
	s.log.Info("repaired the "+from, "engine", r.Engine, "destinations", st.Dests, "entries", st.Changed,
		"route_seconds", tr.Seconds(), "verify_seconds", tv.Seconds(),
		"repair_destinations_walked", st.Walked, "verify_destinations_walked", walked)
	return &routing.Result{Routing: r, Report: rep, State: next, Attempts: []routing.Attempt{{Engine: r.Engine, Report: rep, Route: tr, Verify: tv}}}
}
