package sm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
)

// Results of a reroute.
const (
	resultPublished = "published"
	resultUnchanged = "unchanged"
	resultFailed    = "failed"
)

// reroute runs one reroute and records its outcome. Failures keep the
// last good tables published; it returns how long to wait before
// retrying a publication that failed (0: no retry).
func (s *Server) reroute(ctx context.Context, reason string) (retry time.Duration) {
	t0 := time.Now()
	s.setStatus(func(st *Status) { st.State = "rerouting"; st.LastTrigger = reason })
	s.log.Info("reroute", "trigger", reason)
	s.phases, s.routedJobs = s.phases[:0], 0
	res, pub, jobs, err := s.rerouteOnce(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("reroute deadline of %s exceeded: %w", s.cfg.RerouteTimeout.Duration, err)
	}
	dur := time.Since(t0)
	s.metrics.duration.Observe(dur.Seconds())
	s.metrics.reroutes.WithLabelValues(res).Inc()
	if err == nil {
		s.metrics.lastSuccess.Set(float64(time.Now().Unix()))
		s.setProblem("output", "") // the set is published afresh or intact
	}
	s.setStatus(func(st *Status) {
		st.State = "idle"
		st.LastReroute = time.Now()
		st.LastResult = res
		st.Reroutes++
		st.LastError = ""
		if err != nil {
			st.Failures++
			st.LastError = err.Error()
		}
		if pub != nil {
			st.Published = pub
		}
		if jobs != nil {
			st.Jobs = jobs
		}
	})
	retry = s.publishRetry(err)
	if err != nil {
		msg := "reroute failed; the last good tables stay published"
		if s.Status().Published == nil {
			msg = "reroute failed; no tables are published"
		}
		s.log.Error(msg, "trigger", reason, "err", err, "seconds", dur.Seconds())
		return retry
	}
	s.log.Info("reroute done", "result", res, "seconds", dur.Seconds(), "jobs_routed", s.routedJobs, "phases", strings.Join(s.phases, " "))
	return 0
}

// publishError is a reroute that routed and verified its tables but could
// not publish them (a full disk, an output directory in the way): unlike
// bad input or a routing the engines refuse, it may pass on its own, so
// it is retried.
type publishError struct{ err error }

func (e *publishError) Error() string { return e.err.Error() }
func (e *publishError) Unwrap() error { return e.err }

// Publish retries wait publishRetryMin, doubling up to publishRetryMax.
const (
	publishRetryMin = 2 * time.Second
	publishRetryMax = time.Minute
)

// publishRetry returns the wait before a retry after a publish that
// failed, which is a problem in /healthz until a publication succeeds
// (the published tables then route an older fabric or job set than the
// dump and the hooks ask for); 0 after any other outcome.
func (s *Server) publishRetry(err error) time.Duration {
	var pe *publishError
	if !errors.As(err, &pe) {
		if err == nil {
			s.publishBackoff = 0
			s.setProblem("publish", "")
		}
		return 0
	}
	s.publishBackoff = min(max(2*s.publishBackoff, publishRetryMin), publishRetryMax)
	s.setProblem("publish", fmt.Sprintf("publishing the tables routed for the current dump failed (retrying every %s at most): %v", s.publishBackoff, pe.err))
	return s.publishBackoff
}

// phase times one step of a reroute.
func (s *Server) phase(name string, f func() error) error {
	t0 := time.Now()
	err := f()
	s.mark(name, time.Since(t0))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// mark records a phase's time d in its metric and for the reroute's log
// line, so that both name the same phases (reroutePhases).
func (s *Server) mark(name string, d time.Duration) {
	s.metrics.phase.WithLabelValues(name).Observe(d.Seconds())
	s.phases = append(s.phases, fmt.Sprintf("%s=%.1fms", name, float64(d.Microseconds())/1000))
}

// timed runs f as phase name ("repair" spans the repair's own "route"
// and "verify").
func (s *Server) timed(name string, f func()) {
	t0 := time.Now()
	f()
	s.mark(name, time.Since(t0))
}

// readFabric returns the dump's bytes and name, read within
// max_dump_bytes: a larger dump, a named pipe or a device fail at once.
func (s *Server) readFabric() ([]byte, string, error) {
	if s.cfg.Fabric == "" {
		return []byte(s.defaultText), s.defaultName, nil
	}
	b, err := ibnetdiscover.ReadFileLimited(s.cfg.Fabric, s.cfg.MaxDumpBytes)
	if errors.Is(err, ibnetdiscover.ErrTooLarge) {
		err = fmt.Errorf("%w (max_dump_bytes)", err)
	}
	return b, s.cfg.Fabric, err
}

func (s *Server) rerouteOnce(ctx context.Context) (string, *PublishedStatus, []JobStatus, error) {
	l, hash, err := s.load()
	if err != nil {
		return resultFailed, nil, nil, err
	}
	g := l.Graph
	jobs, jobStatus := s.currentJobs(g)
	s.routedJobs = len(jobs)
	var res *routing.Result
	s.timed("repair", func() { res = s.repair(ctx, g, hash, jobs) })
	full := res == nil
	if full {
		res, err = s.routeAndVerify(ctx, g, jobs)
	}
	if err == nil {
		err = pastDeadline(ctx) // publish nothing
	}
	if err != nil {
		return resultFailed, nil, jobStatus, err
	}
	var st *PublishedStatus
	s.timed("measure", func() { st, err = newPublishedStatus(l, hash, res, jobs, jobStatus) })
	if err != nil {
		return resultFailed, nil, jobStatus, err
	}
	st.RoutingConfig = s.cfg.routingConfig()
	set := &lft.TableSet{Graph: g, Routing: res.Routing, Fabric: l.Text, OpenSMLFTs: s.cfg.WritesOpenSMDump()}
	result, err := s.publishSet(ctx, set, st, l.AssignedLIDs)
	if err != nil {
		return resultFailed, nil, jobStatus, &publishError{err}
	}
	s.verified.Store(res.State)
	s.pubGraph.Store(g)
	s.pubText.Store(&hash)
	if full {
		s.keepBase(g, hash, res, jobs)
	}
	if result == resultUnchanged {
		st = nil
	} else {
		s.keepDump(st.Generation, l.Text, g)
	}
	return result, st, jobStatus, nil
}

// pastDeadline is ctx's error, or DeadlineExceeded once its deadline has
// passed though its timer has not run yet (a loaded machine): the
// daemon's overdue report, a timer of its own started after the context's,
// and this check then agree that the reroute is late.
func pastDeadline(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// load reads and loads the dump (phase "parse") and returns it with the
// SHA-256 of its text.
func (s *Server) load() (*ibnetdiscover.Loaded, string, error) {
	var l *ibnetdiscover.Loaded
	err := s.phase("parse", func() error {
		text, name, err := s.readFabric()
		if err != nil {
			return err
		}
		l, err = ibnetdiscover.Load(text, name)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	s.lastGraph.Store(l.Graph)
	sum := sha256.Sum256(l.Text)
	s.metrics.switches.Set(float64(l.Graph.NumSwitches()))
	s.metrics.terminals.Set(float64(len(l.Graph.Terms)))
	return l, hex.EncodeToString(sum[:]), nil
}

// newPublishedStatus measures the routing for status.json.
func newPublishedStatus(l *ibnetdiscover.Loaded, hash string, res *routing.Result, jobs []routing.Job, jobStatus []JobStatus) (*PublishedStatus, error) {
	g, r, rep := l.Graph, res.Routing, res.Report
	m, err := routing.Measure(g, r, 0)
	if err != nil {
		return nil, err
	}
	st := &PublishedStatus{
		Published: time.Now().UTC(), Fabric: l.File, FabricSHA256: hash, Engine: r.Engine, VLs: r.NumVLs,
		Verified: rep.OK(), Switches: g.NumSwitches(), Terminals: len(g.Terms), Pairs: rep.Pairs,
		AvgHops: m.AvgHops, MaxEFI: m.MaxEFI, Jobs: jobStatus,
	}
	if len(jobs) == 0 {
		return st, nil
	}
	sm, err := sar.Measure(g, r, jobs)
	if err != nil {
		return nil, err
	}
	st.EffectiveEFI, st.DarkFiber = sm.EffectiveEFI, sm.DarkFiber
	for i := range st.Jobs {
		if i < len(sm.Jobs) {
			st.Jobs[i].EffectiveEFI = sm.Jobs[i].EffectiveEFI
		}
	}
	return st, nil
}

// publishSet diffs the set against what is published (equal tables
// publish nothing, unless the published dump misnames the fabric:
// resultUnchanged), plans the update and publishes the set with
// plan.json and status.json as a new generation. assigned counts
// the endpoints whose LIDs the daemon numbered (the dump had none).
func (s *Server) publishSet(ctx context.Context, set *lft.TableSet, st *PublishedStatus, assigned int) (string, error) {
	var old *lft.Routing
	var why string
	_ = s.phase("diff", func() error {
		old, why = s.publishedTables(set.Graph)
		return nil
	})
	if old != nil && lft.Equal(old, set.Routing) && s.publishedIntact() && s.publishedHas(set) && s.publishedSays(set, st.FabricSHA256) {
		s.updateRoutingMetrics(st)
		return resultUnchanged, nil
	}
	published := s.handOff(set, assigned)
	err := s.planAndPublish(ctx, set, st, old, why)
	if published != nil {
		published(err)
	} else if err == nil && s.deployer != nil {
		s.deployer.Publish(st.Generation, s.pub.genDir(st.Generation))
	}
	if err != nil {
		return resultFailed, err
	}
	return resultPublished, nil
}

// handOff hands the set to a deployer that takes generations in memory
// before they are published (DeployerHandoff), and returns the function
// that tells it the outcome of the publication (nil: nothing handed
// over). A publication under another number than the one handed over
// (not expected: reroutes publish one at a time) is refused to the
// deployer and handed over from disk instead.
func (s *Server) handOff(set *lft.TableSet, assigned int) func(error) {
	dh, ok := s.deployer.(DeployerHandoff)
	if !ok {
		return nil
	}
	gen, err := s.pub.nextGen()
	if err != nil {
		return nil
	}
	ch := make(chan error, 1)
	dh.Handoff(Handoff{Gen: gen, Dir: s.pub.genDir(gen), Graph: set.Graph, Routing: set.Routing, Fabric: set.Fabric, AssignedLIDs: assigned, Published: ch})
	return func(err error) {
		cur := s.pub.lastGen
		if err == nil && cur != gen {
			err = fmt.Errorf("published as generation %d, not %d", cur, gen)
			s.deployer.Publish(cur, s.pub.genDir(cur))
		}
		ch <- err
	}
}

// planAndPublish plans the update from old (the planner plugin; nil,
// why says why: publishedTables) and publishes the set with plan.json
// and status.json as a new generation. The planner runs while the tables
// are written and synced; plan.json, written last, and status.json (the
// plan's summary) wait for it.
func (s *Server) planAndPublish(ctx context.Context, set *lft.TableSet, st *PublishedStatus, old *lft.Routing, why string) error {
	for _, n := range set.OpenSMNotes() {
		s.log.Warn("OpenSM cannot deliver all of these tables", "note", n)
	}
	pl := s.startPlan(ctx, set, old)
	files := append(set.Files(), lft.File{Name: planFile, Write: func(w io.Writer) error {
		plan, err := pl.result()
		if err != nil {
			return err
		}
		if plan != nil {
			if old == nil {
				plan.Summary.Note = joinNote(why, plan.Summary.Note)
			}
			st.Plan = &plan.Summary
		}
		return writePlan(w, plan, why)
	}})
	err := s.phase("publish", func() error { return s.pub.publish(st, files) })
	_, perr := pl.result()
	if pl.took > 0 {
		s.mark("plan", pl.took)
	}
	if perr != nil {
		return fmt.Errorf("plan: %w", perr)
	}
	if err != nil {
		return err
	}
	s.updateRoutingMetrics(st)
	s.metrics.generation.Set(float64(st.Generation))
	return nil
}

// planRun is the planner plugin's run beside a publication.
type planRun struct {
	done chan struct{}
	plan *PlanResult
	err  error
	took time.Duration
}

// startPlan runs the planner (none: a nil plan) from old to set.
func (s *Server) startPlan(ctx context.Context, set *lft.TableSet, old *lft.Routing) *planRun {
	pl := &planRun{done: make(chan struct{})}
	if s.planner == nil {
		close(pl.done)
		return pl
	}
	go func() {
		defer close(pl.done)
		t0 := time.Now()
		pl.plan, pl.err = s.planner.Plan(ctx, set.Graph, old, set.Routing)
		pl.took = time.Since(t0)
	}()
	return pl
}

// result waits for the planner and returns its plan.
func (pl *planRun) result() (*PlanResult, error) {
	<-pl.done
	return pl.plan, pl.err
}

// routeAndVerify runs the engine chain (routing.RouteChain: every routing
// is verified before it counts) and times each attempt's phases "route"
// and "verify".
func (s *Server) routeAndVerify(ctx context.Context, g *fabric.Graph, jobs []routing.Job) (*routing.Result, error) {
	// Tables routed for no job may be repaired later: keep the State
	// their repair is verified against.
	opt := routing.Options{MaxVLs: s.cfg.MaxVLs, Seed: s.cfg.Seed, Jobs: jobs, KeepState: len(jobs) == 0}
	res, err := routing.RouteChain(ctx, g, s.engines, opt)
	if res != nil {
		for _, a := range res.Attempts {
			s.mark("route", a.Route)
			if a.Report != nil {
				s.mark("verify", a.Verify)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("engine chain %q: %w", s.cfg.Engines, err)
	}
	return res, nil
}

// publishedIntact reports whether the published set is as it was
// published; a damaged one is published afresh even when its tables are
// equal.
func (s *Server) publishedIntact() bool {
	p := s.Status().Published
	return p != nil && s.pub.check(p.Generation) == nil
}

// publishedHas reports whether the published generation holds every
// file of set: one published in another form (opensm_dump changed, or a
// set from before nuesm.lft) is published afresh even when its tables
// are equal.
func (s *Server) publishedHas(set *lft.TableSet) bool {
	p := s.Status().Published
	if p == nil {
		return false
	}
	for _, f := range set.Files() {
		if _, ok := p.Files[f.Name]; !ok {
			return false
		}
	}
	return true
}

// publishedSays reports whether the published generation's dump may
// stay for set's (hash: its text's SHA-256): the same text, text that
// differs only in its header comments and the order of its node blocks
// (ibnetdiscover.ContentHash), or another fabric (one that lost parts
// keeps equal tables published, see repairFrom). The fabric the published
// dump describes, with other descriptions, widths or speeds, is published
// afresh with equal tables: the published files (the dump, OpenSM's LFT
// dump, which names every port) then describe it as it is.
func (s *Server) publishedSays(set *lft.TableSet, hash string) bool {
	p := s.Status().Published
	if p == nil || set.Fabric == nil || p.FabricSHA256 == hash {
		return p != nil
	}
	d := s.publishedDump()
	if d == nil || d.content == nil {
		return false
	}
	if *d.content == ibnetdiscover.ContentHash(set.Fabric) {
		return true
	}
	return d.g != nil && !set.Graph.Same(d.g)
}

// readPublished reads the current generation's tables for g, or nil when
// there are none or they do not read for g (another fabric, a damaged
// set).
func (s *Server) readPublished(g *fabric.Graph) *lft.Routing {
	r, _ := s.publishedTables(g)
	return r
}

// publishedTables is readPublished, and without tables why, for the
// plan's note: nothing published, or what keeps the published tables
// from reading for g.
func (s *Server) publishedTables(g *fabric.Graph) (*lft.Routing, string) {
	cur := s.pub.currentPath("")
	if _, err := os.Lstat(cur); errors.Is(err, fs.ErrNotExist) {
		return nil, "nothing published before"
	}
	r, err := lft.ReadTableSet(cur, g, lft.ReadOptions{})
	if err != nil {
		return nil, fmt.Sprintf("published tables (generation %d) unreadable for this fabric: %v", s.pub.currentGen(), err)
	}
	return r, ""
}

func (s *Server) updateRoutingMetrics(st *PublishedStatus) {
	s.metrics.setEngine(s.cfg.Engines, st.Engine)
	s.metrics.vls.Set(float64(st.VLs))
	v := 0.0
	if st.Verified {
		v = 1
	}
	s.metrics.verified.Set(v)
	s.metrics.maxEFI.Set(float64(st.MaxEFI))
	s.metrics.avgHops.Set(st.AvgHops)
	s.metrics.effEFI.Set(float64(st.EffectiveEFI))
	s.metrics.darkFiber.Set(st.DarkFiber / 100)
	if st.Plan != nil {
		s.metrics.planSteps.Set(float64(st.Plan.Steps))
		s.metrics.planWrites.Set(float64(st.Plan.Writes))
		s.metrics.planBlocks.Set(float64(st.Plan.Blocks))
	}
}

// writePlan writes plan.json: the planner's plan, or why there is none
// (why: why there were no tables to plan from, "" when there were).
func writePlan(w io.Writer, p *PlanResult, why string) error {
	if p != nil && p.Write != nil {
		return p.Write(w)
	}
	note := "no update planner configured: apply the tables in one go only on an idle fabric"
	if why != "" {
		note = "initial tables: " + why
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]string{"note": note})
}

// jobFingerprint identifies a job set independent of order.
func jobFingerprint(jobs []routing.Job) string {
	parts := make([]string, 0, len(jobs))
	for _, j := range jobs {
		ts := append([]int32(nil), j.Terms...)
		sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
		parts = append(parts, fmt.Sprint(j.ID, ts))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}
