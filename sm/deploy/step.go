package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/umad"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
)

// runStep executes step i of a plan from the staged state cur and returns
// the new staged state.
func (d *Deployer) runStep(ctx context.Context, g *fabric.Graph, cur *lft.Routing, s *plan.Step, i, gen int) (*lft.Routing, error) {
	t0 := time.Now()
	kind := s.Kind.String()
	defer func() { d.met.stepSeconds.WithLabelValues(kind).Observe(time.Since(t0).Seconds()) }()
	d.setStepNote(s.Note)
	switch s.Kind {
	case plan.Barrier:
		// The packets in flight leave the fabric (delivered, or dropped
		// by the switches' lifetime limit).
		return cur, sleep(ctx, max(0, d.cfg.Drain))
	case plan.Pause, plan.Resume:
		return nil, fmt.Errorf("a %s step: OpenSM cannot stop hosts injecting (plans for OpenSM have no pauses)", s.Kind)
	}
	next := cur.Clone()
	applyStep(g, next, s)
	if _, err := d.osm.pid(); err != nil {
		return nil, &noOpenSMError{err}
	}
	if len(s.SL2VL) > 0 && d.cfg.ManageConf {
		if err := writeSL2VLBlock(d.cfg.Conf, next.SL2VL.Default); err != nil {
			return nil, fmt.Errorf("writing the SL2VL lines into %s: %w", d.cfg.Conf, err)
		}
	}
	d.st.Staged = i + 1
	got, tApply, err := d.writeStep(ctx, StepEvent{Generation: gen, Step: i + 1, Steps: d.st.Steps, Graph: g, Tables: next, From: cur}, s, t0)
	if tApply.IsZero() {
		return nil, err // nothing written: staging failed
	}
	applied := time.Since(tApply)
	if errors.Is(err, errNewer) {
		d.met.stepsTotal.WithLabelValues("superseded").Inc()
		return nil, err
	}
	if err != nil {
		d.met.stepsTotal.WithLabelValues("failed").Inc()
		d.readHeldAfterFailure(ctx, g, gen, i, cur, next)
		return nil, err
	}
	d.heldSLs(g, got)
	rep := d.checkHeld(g, got, gen, fmt.Sprintf("step %d of generation %d", i+1, gen))
	if !d.held.Safe {
		d.met.stepsTotal.WithLabelValues("failed").Inc()
		return nil, fmt.Errorf("%w: %v", ErrUnsafeState, rep.Err())
	}
	tCheck := time.Now()
	if err := d.checkSLs(ctx, g, next, s); err != nil {
		d.met.stepsTotal.WithLabelValues("failed").Inc()
		return nil, err
	}
	if err := d.checkSL2VL(ctx, g, next, s); err != nil {
		d.met.stepsTotal.WithLabelValues("failed").Inc()
		return nil, err
	}
	d.met.stepsTotal.WithLabelValues("proven").Inc()
	d.st.ProvenSteps++
	d.log.Info("step proven", "generation", gen, "step", i+1, "of", d.st.Steps, "lft_writes", len(s.LFT), "sl_changes", len(s.SL), "undelivered_pairs", d.held.Undelivered,
		"apply_seconds", applied.Seconds(), "check_seconds", time.Since(tCheck).Seconds(), "seconds", time.Since(t0).Seconds())
	if d.cfg.AfterStep != nil {
		d.cfg.AfterStep(StepEvent{Generation: gen, Step: i + 1, Steps: d.st.Steps, Graph: g, Tables: next})
	}
	return next, nil
}

// writeStep stages step s (ev.Tables, from ev.From) and makes the
// switches hold it: with SMPs or OpenSM's heavy sweep, the file first or,
// where writesBeforeStage allows, beside the writes. It returns the tables
// read back and when the writes began (zero when the staging failed
// before any).
func (d *Deployer) writeStep(ctx context.Context, ev StepEvent, s *plan.Step, t0 time.Time) (*lft.Routing, time.Time, error) {
	g, cur, next := ev.Graph, ev.From, ev.Tables
	lftOnly := d.cfg.Apply == ApplySMP && len(s.SL) == 0 && len(s.SL2VL) == 0
	if lftOnly && d.writesBeforeStage() {
		// state.json says the step may be in progress before its first
		// write; the LFT file is staged beside the writes.
		if err := d.save(); err != nil {
			return nil, time.Time{}, err
		}
		tApply := time.Now()
		got, err := d.applySMP(ctx, g, cur, next, func(written <-chan struct{}) error {
			if d.cfg.BeforeStage != nil {
				<-written
				d.cfg.BeforeStage(ev)
			}
			return d.stageStep(g, next, t0, false)
		})
		return got, tApply, d.yieldUnanswered(err)
	}
	if err := d.stageStep(g, next, t0, true); err != nil {
		return nil, time.Time{}, err
	}
	d.markSynced()
	tApply := time.Now()
	if lftOnly {
		got, err := d.applySMP(ctx, g, cur, next, nil)
		return got, tApply, d.yieldUnanswered(err)
	}
	got, err := d.apply(ctx, g, next)
	return got, tApply, err
}

// yieldUnanswered turns SMPs written without an answer (after every
// try: a switch gone, or a link on its route) into errNewer when a newer
// generation is published meanwhile, as apply does for a read-back.
func (d *Deployer) yieldUnanswered(err error) error {
	if errors.Is(err, umad.ErrTimeout) && d.newer() {
		return fmt.Errorf("%w while the step's SMPs got no answer: %w", errNewer, err)
	}
	return err
}

// stageStep writes the step's files and, withState, state.json (Staged
// already set), all synced. Without writesBeforeStage the files' syncs
// stay before the writes: after a host crash OpenSM loads the LFT file
// at its first heavy sweep, and only a file of this step (or the one
// before: both ends of the step's proven transition) keeps that sweep
// within a proven state; a file not yet on disk can come back older by
// several steps, or empty, and OpenSM then routes with its own engine.
// state.json needs no order against the files (settle reads the switches
// whatever it says, whichever landed), so the two syncs overlap.
func (d *Deployer) stageStep(g *fabric.Graph, next *lft.Routing, t0 time.Time, withState bool) error {
	saved := make(chan error, 1)
	var saveTook time.Duration
	if withState {
		go func() { t := time.Now(); err := d.save(); saveTook = time.Since(t); saved <- err }()
	} else {
		saved <- nil
	}
	tStage := time.Now()
	err := d.stage(g, next)
	stageTook := time.Since(tStage)
	if serr := <-saved; serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	d.log.Debug("step staged", "stage_seconds", time.Since(t0).Seconds(), "files_seconds", stageTook.Seconds(), "state_seconds", saveTook.Seconds())
	return nil
}

// writesBeforeStage reports whether an LFT step may write its blocks
// before its own file is synced: the LFT file holds the step's starting
// state (settle and every step stage it, synced, before they return) and
// no heavy sweep that may have loaded an older file is in progress. Then
// any sweep, during the writes or after, loads the file of the step
// before or of this step, and a host crash leaves one of the two on disk:
// both ends of the step's proven transition, whatever mix of blocks the
// writes and the sweep leave (a sweep that ran is waited for and the
// written blocks read again, as without). The file must still be synced
// before the step is proven, so that the next step starts from it.
func (d *Deployer) writesBeforeStage() bool {
	m := d.lftMark
	return m.file != (stamp{}) && m.file == stampOf(d.cfg.LFTsFile) && d.sweeps.carries(d.osm, m)
}

// markSynced records that the LFT file, just synced, holds the staged
// tables.
func (d *Deployer) markSynced() {
	d.lftMark = d.sweeps.synced(d.osm)
	d.lftMark.file = stampOf(d.cfg.LFTsFile)
}

func (d *Deployer) setStepNote(note string) {
	s := *d.status.Load()
	s.StepNote = note
	d.status.Store(&s)
}

// readHeldAfterFailure reads the switches back so that status shows what
// they hold after a step that did not take.
func (d *Deployer) readHeldAfterFailure(ctx context.Context, g *fabric.Graph, gen, i int, cur, next *lft.Routing) {
	held, missing, err := d.read(ctx, g, nil)
	if err != nil {
		d.held = &HeldStatus{ReadAt: time.Now().UTC(), Generation: gen, Matches: "unknown: reading the switches failed: " + err.Error()}
		return
	}
	d.heldSLs(g, held)
	what := fmt.Sprintf("a mix of step %d and step %d of generation %d (step %d half applied)", i, i+1, gen, i+1)
	if n, _ := sameLFTs(g, held, cur, 0); n == 0 {
		what = fmt.Sprintf("step %d of generation %d (step %d staged, not applied)", i, gen, i+1)
	} else if n, _ := sameLFTs(g, held, next, 0); n == 0 {
		what = fmt.Sprintf("step %d of generation %d (applied, not proven)", i+1, gen)
	}
	d.checkHeld(g, held, gen, what)
	d.held.Missing = missing
}

// applyStep applies a write step to r: LFT entries, SLs, SL2VL tables.
func applyStep(g *fabric.Graph, r *lft.Routing, s *plan.Step) {
	for _, w := range s.LFT {
		r.SetPort(w.Switch, int(w.LID), w.New)
	}
	for _, c := range s.SL {
		lft.ApplySL(&r.SL, g.NumSwitches(), c)
	}
	for _, c := range s.SL2VL {
		lft.ApplySL2VL(&r.SL2VL, g.NumSwitches(), c, s.NewDefault)
	}
	r.SL.Compact()
	r.NumVLs = max(r.NumVLs, r.MaxVL()+1)
}

// apply makes OpenSM load the staged tables (SIGHUP: a heavy sweep) and
// waits until the switches hold want. OpenSM's log says when the file
// engine configured the switches or rejected the file; a sweep that read
// the file before it was staged gets another SIGHUP. The entries
// dump_fts cannot read are read again only where the step writes them.
func (d *Deployer) apply(ctx context.Context, g *fabric.Graph, want *lft.Routing) (*lft.Routing, error) {
	t0 := time.Now()
	deadline := t0.Add(d.cfg.StepTimeout)
	lg := sweepLog{end: d.osm.logOffset()}
	if _, err := d.osm.hup(); err != nil {
		return nil, err
	}
	d.sweeps.hupSent(d.osm)
	hups, poll := 1, 20*time.Millisecond
	var last string
	for {
		more, err := d.osm.readLog(lg.end)
		if err != nil {
			return nil, fmt.Errorf("reading OpenSM's log: %w", err)
		}
		lg.merge(more)
		if err := logVerdict(lg); err != nil {
			return nil, err
		}
		if len(lg.configured) > 0 {
			tr, off, pid := time.Now(), d.osm.logOffset(), d.pidOrZero()
			got, missing, err := d.read(ctx, g, want)
			d.log.Debug("step applied by OpenSM, read back", "configured_seconds", tr.Sub(t0).Seconds(), "read_seconds", time.Since(tr).Seconds())
			switch {
			case err != nil || len(missing) > 0:
				if err != nil {
					last = err.Error()
				} else {
					last = fmt.Sprintf("%d switches did not answer (%s…)", len(missing), missing[0])
				}
				// Switches that do not answer may be gone, and a newer
				// generation (a later discovery) may route without them:
				// waiting out the step's timeout would hold the heal. Any
				// subset of a step's writes is a proven state (plan), so
				// the next rollout plans from what the switches hold.
				if d.newer() {
					return nil, fmt.Errorf("%w while the step waited: %s", errNewer, last)
				}
			default:
				n, diff := sameLFTs(g, got, want, 3)
				if n == 0 {
					d.readStaged(off, pid)
					return got, nil
				}
				last = fmt.Sprintf("%d entries differ (%s)", n, diff)
				// The sweep may have read the file before it was staged.
				if lg.subnetUp > 0 && hups < 5 {
					lg = sweepLog{end: lg.end}
					if _, err := d.osm.hup(); err != nil {
						return nil, err
					}
					d.sweeps.hupSent(d.osm)
					hups++
				}
			}
		}
		if time.Now().After(deadline) {
			if last == "" {
				last = "OpenSM logged no sweep that configured the switches"
				if _, err := d.osm.pid(); err != nil {
					last = err.Error()
				}
			}
			return nil, fmt.Errorf("%w within %v (%d SIGHUPs): %s", ErrStepTimeout, d.cfg.StepTimeout, hups, last)
		}
		// OpenSM's log lines wake the wait (inotify); the period is
		// the fallback.
		if err := d.logWatch.wait(ctx, poll); err != nil {
			return nil, err
		}
		poll = min(poll*2, 100*time.Millisecond)
	}
}

// logVerdict turns what OpenSM logged after a SIGHUP into an error when
// it rejected the staged files or configured the switches otherwise.
func logVerdict(lg sweepLog) error {
	if lg.noEngine || len(lg.errors) > 0 {
		msg := "OpenSM rejected the staged tables"
		if lg.noEngine {
			msg += " (no routing engine could configure the switches)"
		}
		if len(lg.errors) > 0 {
			msg += ": " + strings.Join(lg.errors, " | ")
		}
		return errors.New(msg)
	}
	for _, e := range lg.configured {
		if e != "file" {
			return fmt.Errorf("OpenSM configured the switches with its %q engine instead of the file engine (a fallback)", e)
		}
	}
	return nil
}

// noOpenSMError marks a step that found no OpenSM to apply it.
type noOpenSMError struct{ err error }

func (e *noOpenSMError) Error() string { return e.err.Error() }
func (e *noOpenSMError) Unwrap() error { return e.err }
