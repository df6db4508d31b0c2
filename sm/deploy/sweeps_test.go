package deploy

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepTracker follows OpenSM's log lines: a trap opens a heavy
// sweep, "SUBNET UP" ends it, a SIGHUP the deployer sent opens one, and
// since tells whether sweep lines came after a mark.
func TestSweepTracker(t *testing.T) {
	log := filepath.Join(t.TempDir(), "opensm.log")
	o := &openSM{logFile: log}
	write := func(lines ...string) {
		f, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			if _, err := f.WriteString(l + "\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	var tr sweepTracker
	if tr.carries(o, fileMark{}) {
		t.Error("carries: the zero mark says nothing, yet it carries")
	}
	open := func(want bool, what string) {
		t.Helper()
		if got, err := tr.open(o); err != nil || got != want {
			t.Errorf("%s: sweep in progress %v (%v), want %v", what, got, err, want)
		}
	}
	write("Nov 26 09:01:25 209474 [755806C0] 0x02 -> osm_vendor_init: 1000 pending umads specified")
	open(false, "no sweep line")
	idle := tr.synced(o)
	mark := tr.mark()
	write(`Nov 26 09:01:25 209474 [755806C0] 0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:7 TID:0x000000000000001c`)
	open(true, "after a link's trap")
	if !tr.carries(o, idle) {
		t.Error("carries: a file synced with no sweep in progress, yet a later sweep may carry an older one")
	}
	busy := tr.synced(o)
	if tr.carries(o, busy) {
		t.Error("carries: a file synced during a sweep, yet that sweep (which may have loaded the older file) is taken to carry it")
	}
	if !tr.since(o, mark) {
		t.Error("since: no sweep seen after the trap")
	}
	write("Nov 26 09:01:25 209474 [755806C0] 0x02 -> osm_ucast_mgr_process: file tables configured on all switches")
	open(true, "tables configured, no SUBNET UP yet")
	write("Nov 26 09:01:25 214074 [755806C0] 0x02 -> SUBNET UP")
	open(false, "after SUBNET UP")
	if !tr.carries(o, busy) {
		t.Error("carries: the sweep in progress at the sync ended, yet the file is not taken as carried")
	}
	mark = tr.mark()
	if tr.since(o, mark) {
		t.Error("since: a sweep seen without new lines")
	}
	o.hups.Add(1) // openSM.hup sent a SIGHUP, from any goroutine
	open(true, "after a SIGHUP")
	write("Nov 26 09:01:26 214074 [755806C0] 0x80 -> Entering DISCOVERING state", "Nov 26 09:01:26 214074 [755806C0] 0x02 -> SUBNET UP")
	open(false, "after the SIGHUP's sweep")
	// A rotated (shorter) log is read from its start.
	if err := os.WriteFile(log, []byte("Nov 26 09:01:27 1 [1] 0x80 -> Entering DISCOVERING state\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open(true, "a new log starting a sweep")
}

// TestNoTrapSweep: with OpenSM's sweep_on_trap FALSE (read from its
// configuration: TRUE when unset, FALSE for any value but "TRUE") a
// link's trap starts no sweep; OpenSM's own sweep lines still do.
func TestNoTrapSweep(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "opensm.conf")
	for _, c := range []struct {
		text string
		want bool
	}{{"routing_engine file\n", true}, {"sweep_on_trap TRUE\n", true}, {"sweep_on_trap FALSE # nuesm heals\n", false},
		{"sweep_on_trap FALSE\nsweep_on_trap TRUE\n", true}, {"sweep_on_trap false\n", false}} {
		if err := os.WriteFile(conf, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		oc, err := readConf(conf, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := oc.trapSweeps(); got != c.want {
			t.Errorf("%q: trap sweeps %v, want %v", c.text, got, c.want)
		}
	}
	log := filepath.Join(dir, "opensm.log")
	o := &openSM{logFile: log}
	o.noTrapSweep.Store(true)
	trap := `Nov 26 09:01:25 209474 [755806C0] 0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:7 TID:0x000000000000001c` + "\n"
	if err := os.WriteFile(log, []byte(trap), 0o644); err != nil {
		t.Fatal(err)
	}
	var tr sweepTracker
	if open, err := tr.open(o); err != nil || open {
		t.Errorf("a trap without trap sweeps: sweep in progress %v (%v)", open, err)
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("Nov 26 09:01:26 214074 [755806C0] 0x02 -> osm_ucast_mgr_process: file tables configured on all switches\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if open, err := tr.open(o); err != nil || !open {
		t.Errorf("the file engine configuring the switches: sweep in progress %v (%v), want true", open, err)
	}
}

// TestWritesBeforeStage: a step may write before its own file only when
// the LFT file is the one the deployer last synced (not replaced behind
// its back) and no sweep in progress began before that sync.
func TestWritesBeforeStage(t *testing.T) {
	dir := t.TempDir()
	log, lfts := filepath.Join(dir, "opensm.log"), filepath.Join(dir, "opensm-lfts.dump")
	d := &Deployer{cfg: Config{LFTsFile: lfts}, osm: &openSM{logFile: log}}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d.writesBeforeStage() {
		t.Error("nothing synced yet, yet writes may go first")
	}
	if err := os.WriteFile(lfts, []byte("Unicast lids [0x0-0x1] of switch Lid 1 guid 0x1 (sw):\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.markSynced()
	if !d.writesBeforeStage() {
		t.Error("the file just synced, no sweep: writes may go first")
	}
	d.osm.hups.Add(1) // a SIGHUP: a sweep from now on loads this file
	if !d.writesBeforeStage() {
		t.Error("a sweep begun after the sync carries the file, yet writes wait")
	}
	d.markSynced() // synced again while that sweep is in progress
	if d.writesBeforeStage() {
		t.Error("a sweep in progress at the sync may carry an older file, yet writes may go first")
	}
	if err := os.WriteFile(log, []byte("Nov 26 09:01:26 214074 [755806C0] 0x02 -> SUBNET UP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !d.writesBeforeStage() {
		t.Error("the sweep in progress at the sync ended, yet writes wait")
	}
	if err := os.WriteFile(lfts, []byte("replaced by someone else, longer than before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d.writesBeforeStage() {
		t.Error("the LFT file was replaced after the sync, yet writes may go first")
	}
}

// TestNoteTrapSweeps: with SMP writes, OpenSM's sweep_on_trap TRUE is
// logged once, again only after it changed, and FALSE never.
func TestNoteTrapSweeps(t *testing.T) {
	var buf bytes.Buffer
	d := &Deployer{osm: &openSM{}, log: slog.New(slog.NewTextHandler(&buf, nil))}
	d.cfg.Apply = ApplySMP
	said := func() int { return strings.Count(buf.String(), "sweep_on_trap TRUE") }
	for i, step := range []struct {
		none bool
		said int
	}{{false, 1}, {false, 1}, {true, 1}, {true, 1}, {false, 2}} {
		d.noteTrapSweeps(step.none)
		if said() != step.said || d.osm.noTrapSweep.Load() != step.none {
			t.Errorf("read %d (none %v): said %d times, want %d; noTrapSweep %v", i+1, step.none, said(), step.said, d.osm.noTrapSweep.Load())
		}
	}
}
