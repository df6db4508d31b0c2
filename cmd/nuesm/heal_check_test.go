package main

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/sm/deploy"
)

// measureChecked is measureHeal; with NUESM_HEAL_READER_CHECK=1 the
// dump_fts reader samples the same heal at the same time, and both
// readers' bounds must bracket one event and an unsafe state the
// dump_fts reader saw must be seen by the SMP reader too.
func measureChecked(t *testing.T, w healWatch, fail func() time.Time, readBefore bool) healResult {
	t.Helper()
	if os.Getenv("NUESM_HEAL_READER_CHECK") != "1" {
		return measureHeal(t, w, fail, readBefore)
	}
	started, done := make(chan time.Time, 1), make(chan healResult, 1)
	go func() {
		t0 := <-started
		ow := w
		if ow.window == 0 {
			ow.window = budget(t, 0.15)
		}
		done <- measureHealDumpFTS(t, ow, func() time.Time { return t0 }, false)
	}()
	res := measureHeal(t, w, func() time.Time { t0 := fail(); started <- t0; return t0 }, readBefore)
	old := <-done
	t.Logf("reader check: smp healed %.3f s, after %.3f s, one read %.4f s, %d states, %d unsafe; dump_fts healed %.3f s, after %.3f s, one read %.4f s, %d states, %d unsafe",
		res.Healed.Seconds(), res.After.Seconds(), res.ReadMean.Seconds(), res.States, res.Unsafe,
		old.Healed.Seconds(), old.After.Seconds(), old.ReadMean.Seconds(), old.States, old.Unsafe)
	if old.After >= res.Healed || res.After >= old.Healed {
		t.Errorf("reader check: the readers' bounds bracket different events: smp (%v, %v], dump_fts (%v, %v]", res.After, res.Healed, old.After, old.Healed)
	}
	if old.Unsafe > 0 && res.Unsafe == 0 {
		t.Errorf("reader check: dump_fts read %d unsafe states (%s), the SMP reader none", old.Unsafe, old.Worst)
	}
	return res
}

// measureHealDumpFTS calls fail (which fails a part of the fabric, or did, and
// returns when) and samples the switches from then until a state
// delivers every pair of g. The entries dump_fts misses (a top LID that
// opens a block: one smpdump per switch) are read at every fourth sample
// and to confirm a healed state; samples in between take them from the
// last full read, so that most samples cost one dump_fts. With
// readBefore the switches are read in full before fail is called, so
// that the first sample begins at once and costs one dump_fts too.
func measureHealDumpFTS(t *testing.T, w healWatch, fail func() time.Time, readBefore bool) (res healResult) {
	t.Helper()
	env, g, sls, window := w.env, w.g, w.sls, w.window
	work := t.TempDir()
	res = healResult{Cycles: sls != nil}
	var full *lft.Routing // the last full read
	if readBefore {
		// The switches' entries until a subnet manager writes them.
		r, err := deploy.ReadSwitches(context.Background(), env, work, budget(t, 0.05), g, nil)
		if err != nil {
			t.Logf("reading the switches before the failure: %v (the first sample reads them in full)", err)
			r = nil
		}
		full = r
	}
	t0 := fail()
	deadline := time.Now().Add(budget(t, 0.2))
	if window > 0 {
		deadline = t0.Add(min(window, budget(t, 0.2)))
	}
	last, lastLost := t0, int64(-1)
	var reading time.Duration
	defer func() {
		if res.States > 0 {
			res.ReadMean = reading / time.Duration(res.States)
		}
	}()
	sinceFull := 0
	for {
		var known deploy.Known
		if full != nil && sinceFull < 3 {
			known = deploy.KnownUnchanged(g, full, g, full)
		}
		began := time.Now()
		r, err := deploy.ReadSwitches(context.Background(), env, work, budget(t, 0.05), g, known)
		now := time.Now()
		reading += now.Sub(began)
		sinceFull++
		if err == nil && known == nil {
			full, sinceFull = r.Clone(), 0
		}
		if err != nil {
			t.Logf("read-back failed (counted as nothing healed): %v", err)
		} else {
			if sls != nil {
				sls(r)
			}
			rep, _ := cdg.Verify(g, r, cdg.Options{})
			if rep == nil {
				t.Fatal("verifier gave no report")
			}
			lost := rep.Pairs - rep.Delivered
			if lastLost < 0 {
				lastLost = lost // the first sample stands for the time before it
			}
			res.PairSeconds += float64(lastLost) * now.Sub(last).Seconds()
			last, lastLost = now, lost
			res.States++
			if rep.Loops > 0 || (sls != nil && rep.Cycle != nil) {
				res.Unsafe++
				if res.Worst == "" {
					res.Worst = fmt.Sprintf("%d loops, cycle %v", rep.Loops, rep.Cycle)
				}
			}
			if lost == 0 && known == nil {
				res.Healed = now.Sub(t0)
				return res
			}
			if lost == 0 {
				ok, r := confirmHealed(t, env, work, g, sls)
				if ok {
					res.Healed = now.Sub(t0)
					return res
				}
				if r != nil {
					full, sinceFull = r, 0
				}
			}
			if lost > 0 {
				res.After = began.Sub(t0)
			}
		}
		if now.After(deadline) && window > 0 {
			res.NotHealed, res.Healed, res.Lost = true, now.Sub(t0), lastLost
			return res
		}
		if now.After(deadline) {
			t.Fatalf("not healed within %v: %d states read, %.1f pair-seconds", now.Sub(t0), res.States, res.PairSeconds)
		}
	}
}

// confirmHealed reads the switches in full and reports whether they
// deliver every pair of g, with the state read (nil when the read
// failed).
func confirmHealed(t *testing.T, env []string, work string, g *fabric.Graph, sls func(*lft.Routing)) (bool, *lft.Routing) {
	t.Helper()
	r, err := deploy.ReadSwitches(context.Background(), env, work, budget(t, 0.05), g, nil)
	if err != nil {
		return false, nil
	}
	full := r.Clone()
	if sls != nil {
		sls(r)
	}
	rep, _ := cdg.Verify(g, r, cdg.Options{})
	return rep != nil && rep.Pairs == rep.Delivered, full
}
