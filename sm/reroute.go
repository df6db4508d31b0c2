package sm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nuesm/nuesm/cdg"
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
// last good tables published.
func (s *Server) reroute(ctx context.Context, reason string) {
	t0 := time.Now()
	s.setStatus(func(st *Status) { st.State = "rerouting"; st.LastTrigger = reason })
	s.log.Info("reroute", "trigger", reason)
	res, pub, jobs, err := s.rerouteOnce(ctx)
	dur := time.Since(t0)
	s.metrics.duration.Observe(dur.Seconds())
	s.metrics.reroutes.WithLabelValues(res).Inc()
	if err == nil {
		s.metrics.lastSuccess.Set(float64(time.Now().Unix()))
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
	if err != nil {
		s.log.Error("reroute failed; last good tables stay published", "trigger", reason, "err", err, "seconds", dur.Seconds())
		return
	}
	s.log.Info("reroute done", "result", res, "seconds", dur.Seconds())
}

// phase times one step of a reroute.
func (s *Server) phase(name string, f func() error) error {
	t0 := time.Now()
	err := f()
	s.metrics.phase.WithLabelValues(name).Observe(time.Since(t0).Seconds())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// readFabric returns the dump's bytes and name.
func (s *Server) readFabric() ([]byte, string, error) {
	if s.cfg.Fabric == "" {
		return []byte(s.defaultText), s.defaultName, nil
	}
	b, err := os.ReadFile(s.cfg.Fabric)
	return b, s.cfg.Fabric, err
}

func (s *Server) rerouteOnce(ctx context.Context) (string, *PublishedStatus, []JobStatus, error) {
	var (
		text []byte
		name string
		g    *fabric.Graph
	)
	err := s.phase("parse", func() error {
		var err error
		if text, name, err = s.readFabric(); err != nil {
			return err
		}
		res, err := ibnetdiscover.Parse(bytes.NewReader(text), name)
		if err != nil {
			return err
		}
		if err := res.Fabric.AssignLIDs(0); err != nil {
			return err
		}
		g, err = fabric.Compile(res.Fabric)
		return err
	})
	if err != nil {
		return resultFailed, nil, nil, err
	}
	s.lastGraph = g
	sum := sha256.Sum256(text)
	hash := hex.EncodeToString(sum[:])
	s.metrics.switches.Set(float64(g.NumSwitches()))
	s.metrics.terminals.Set(float64(len(g.Terms)))

	var jobs []routing.Job
	var jobStatus []JobStatus
	if s.jobs != nil {
		_ = s.phase("jobs", func() error {
			jctx, cancel := context.WithTimeout(ctx, s.cfg.SLURM.Timeout.Duration)
			defer cancel()
			j, js, err := s.jobs.Jobs(jctx, g)
			if err != nil {
				s.metrics.slurmErrors.Inc()
				s.setStatus(func(st *Status) { st.SLURM = "error: " + err.Error() })
				// An outage says nothing about the jobs: on the same fabric
				// keep the last jobs SLURM gave (so the published SAR
				// tables stay); on a changed fabric their terminals may
				// mean other hosts, so route without jobs rather than not
				// at all: the tables must follow the fabric.
				if s.goodJobsHash == hash {
					jobs, jobStatus = s.goodJobs, s.goodJobStatus
					s.log.Warn("SLURM unavailable; keeping the last known jobs", "jobs", len(jobs), "err", err)
				} else {
					jobStatus = []JobStatus{} // routed without jobs: status says so
					s.log.Warn("SLURM unavailable; routing without job information", "err", err)
				}
				return err
			}
			jobs, jobStatus = j, js
			if jobStatus == nil {
				jobStatus = []JobStatus{}
			}
			s.goodJobs, s.goodJobStatus, s.goodJobsHash = jobs, jobStatus, hash
			s.setStatus(func(st *Status) { st.SLURM = "ok" })
			return nil
		})
	}
	s.lastJobs = jobFingerprint(jobs)
	s.metrics.jobs.Set(float64(len(jobs)))

	var r *lft.Routing
	var rep *cdg.Report
	if err := s.routeAndVerify(ctx, g, jobs, &r, &rep); err != nil {
		return resultFailed, nil, jobStatus, err
	}
	m, err := routing.Measure(g, r, 0)
	if err != nil {
		return resultFailed, nil, jobStatus, err
	}
	st := &PublishedStatus{
		Published: time.Now().UTC(), Fabric: name, FabricSHA256: hash, Engine: r.Engine, VLs: r.NumVLs,
		Verified: rep.OK(), Switches: g.NumSwitches(), Terminals: len(g.Terms), Pairs: rep.Pairs,
		AvgHops: m.AvgHops, MaxEFI: m.MaxEFI, Jobs: jobStatus,
	}
	if len(jobs) > 0 {
		sm, err := sar.Measure(g, r, jobs)
		if err != nil {
			return resultFailed, nil, jobStatus, err
		}
		st.EffectiveEFI, st.DarkFiber = sm.EffectiveEFI, sm.DarkFiber
		for i := range st.Jobs {
			if i < len(sm.Jobs) {
				st.Jobs[i].EffectiveEFI = sm.Jobs[i].EffectiveEFI
			}
		}
	}

	// Diff against what is published: equal tables publish nothing.
	var old *lft.Routing
	_ = s.phase("diff", func() error {
		old = s.readPublished(g)
		return nil
	})
	if old != nil && lft.Equal(old, r) {
		s.updateRoutingMetrics(st)
		return resultUnchanged, nil, jobStatus, nil
	}
	var plan *PlanResult
	if s.planner != nil {
		if err := s.phase("plan", func() error {
			var err error
			plan, err = s.planner.Plan(ctx, g, old, r)
			return err
		}); err != nil {
			return resultFailed, nil, jobStatus, err
		}
		st.Plan = &plan.Summary
	}
	files := []genFile{
		{"fabric.topo", func(w io.Writer) error { _, err := w.Write(text); return err }},
		{"opensm-lfts.dump", func(w io.Writer) error { return lft.WriteOpenSMLFTs(w, g, r) }},
		{"nuesm.sl", func(w io.Writer) error { return lft.WriteSL(w, g, r) }},
		{"opensm-sl2vl.dump", func(w io.Writer) error { return lft.WriteOpenSMSL2VL(w, g, r) }},
		{"plan.json", func(w io.Writer) error { return writePlan(w, plan, old == nil) }},
	}
	if r.SL.PerDest() {
		files = append(files, genFile{"qos-policy.conf", func(w io.Writer) error { return lft.WriteQoSPolicy(w, g, r) }})
	}
	if err := s.phase("publish", func() error { return s.pub.publish(st, files) }); err != nil {
		return resultFailed, nil, jobStatus, err
	}
	s.updateRoutingMetrics(st)
	s.metrics.generation.Set(float64(st.Generation))
	if s.deployer != nil {
		s.deployer.Publish(st.Generation, s.pub.genDir(st.Generation))
	}
	return resultPublished, st, jobStatus, nil
}

// routeAndVerify tries the engine chain; every routing is verified before
// it counts (phases "route" and "verify").
func (s *Server) routeAndVerify(ctx context.Context, g *fabric.Graph, jobs []routing.Job, out **lft.Routing, rep **cdg.Report) error {
	engines, err := routing.ParseChain(s.cfg.Engines)
	if err != nil {
		return err
	}
	opt := routing.Options{MaxVLs: s.cfg.MaxVLs, Seed: s.cfg.Seed, Params: s.cfg.Params, Jobs: jobs}
	var errs []error
	for _, e := range engines {
		var r *lft.Routing
		if err := s.phase("route", func() error {
			var err error
			r, err = e.Route(ctx, g, opt)
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		if r.Engine == "" {
			r.Engine = e.Name()
		}
		var rp *cdg.Report
		if err := s.phase("verify", func() error {
			var err error
			rp, err = cdg.Verify(g, r, cdg.Options{MaxVLs: s.cfg.MaxVLs, SwitchDelivery: true})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("%s: tables fail verification: %w", e.Name(), err))
			continue
		}
		*out, *rep = r, rp
		return nil
	}
	return fmt.Errorf("no engine of %q produced verified tables: %w", s.cfg.Engines, errors.Join(errs...))
}

// readPublished reads the current generation's tables for g, or nil when
// there are none or they do not fit g (another fabric).
func (s *Server) readPublished(g *fabric.Graph) *lft.Routing {
	r, err := lft.ReadOpenSMLFTsFile(s.pub.currentPath("opensm-lfts.dump"), g)
	if err != nil {
		return nil
	}
	sl, n, err := lft.ReadSLFile(s.pub.currentPath("nuesm.sl"), g)
	if err != nil {
		return nil
	}
	m, err := lft.ReadOpenSMSL2VLFile(s.pub.currentPath("opensm-sl2vl.dump"), g)
	if err != nil {
		return nil
	}
	r.SL, r.NumVLs, r.SL2VL = sl, n, m
	return r
}

func (s *Server) updateRoutingMetrics(st *PublishedStatus) {
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

// writePlan writes plan.json: the planner's plan, or why there is none.
func writePlan(w io.Writer, p *PlanResult, initial bool) error {
	if p != nil && p.Write != nil {
		return p.Write(w)
	}
	note := "no update planner configured: apply the tables in one go only on an idle fabric"
	if initial {
		note = "initial tables: nothing published before"
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
