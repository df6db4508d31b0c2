package deploy

import "strings"

// sweepTracker follows OpenSM's log to know whether a heavy sweep is in
// progress: from a line that starts or belongs to one (a link's trap,
// "Entering DISCOVERING state", a port dropped, the routing engine's
// "tables configured", a SIGHUP the deployer sent) until "SUBNET UP",
// which OpenSM logs at the end of every heavy sweep. Owned by Run.
type sweepTracker struct {
	off    int64 // log offset read up to
	inside bool  // a sweep started and has not ended
	lines  int64 // sweep lines seen (start, inside or end)
	ends   int64 // "SUBNET UP" lines seen: sweeps ended
	hups   int64 // SIGHUPs seen (openSM.hups)
}

// sweepLine classifies a log line: +1 starts or continues a heavy
// sweep, -1 ends one, 0 says nothing about sweeps. A link's trap starts
// one only when OpenSM sweeps on traps (its sweep_on_trap).
func sweepLine(line string, trapSweeps bool) int {
	switch {
	case strings.Contains(line, "SUBNET UP"):
		return -1
	case trapSweeps && strings.Contains(line, "Received Generic Notice") && strings.Contains(line, "(Link state change)"),
		strings.Contains(line, "Entering DISCOVERING state"),
		strings.Contains(line, "drop_mgr_remove_port"),
		strings.Contains(line, "tables configured on all switches"):
		return 1
	}
	return 0
}

// update reads the log lines written since the last call. A SIGHUP sent
// since (by the deployer, from any goroutine) starts a sweep first: its
// lines, "SUBNET UP" among them, may be in the lines read.
func (t *sweepTracker) update(o *openSM) error {
	if h := o.hups.Load(); h != t.hups {
		t.hups, t.inside = h, true
		t.lines++
	}
	lg, err := o.readLog(t.off)
	if err != nil {
		return err
	}
	t.off = lg.end
	t.ends += int64(lg.subnetUp)
	if lg.sweepLines > 0 {
		t.inside = lg.sweepOpen
		t.lines += int64(lg.sweepLines)
	}
	return nil
}

// open reports whether a heavy sweep is in progress.
func (t *sweepTracker) open(o *openSM) (bool, error) {
	err := t.update(o)
	return t.inside, err
}

// mark returns a position to ask since about.
func (t *sweepTracker) mark() int64 { return t.lines }

// since reports whether OpenSM logged sweep lines after mark (a log that
// cannot be read counts as a sweep: the blocks are read again).
func (t *sweepTracker) since(o *openSM, mark int64) bool {
	if err := t.update(o); err != nil {
		return true
	}
	return t.lines != mark
}

// hupSent records a SIGHUP: OpenSM sweeps heavily now (update finds it
// in openSM.hups).
func (t *sweepTracker) hupSent(o *openSM) {
	_ = t.update(o)
}

// fileMark is where the tracker stood when the deployer had synced the
// LFT file: a heavy sweep then in progress may have loaded an older file
// and write it until it ends; every later sweep loads this file or a
// newer one (OpenSM sweeps one at a time and the file engine loads the
// file once per sweep).
type fileMark struct {
	known bool  // set by synced; the zero mark says nothing
	open  bool  // a sweep was in progress (or the log could not be read)
	ends  int64 // sweeps ended by then
	file  stamp // the file's size and time (set by the deployer)
}

// synced returns the mark of a file synced before the call.
func (t *sweepTracker) synced(o *openSM) fileMark {
	err := t.update(o)
	return fileMark{known: true, open: t.inside || err != nil, ends: t.ends}
}

// carries reports whether every heavy sweep in progress or to come loads
// the file marked by m or a newer one: no sweep was in progress when it
// was synced, or one has ended since.
func (t *sweepTracker) carries(o *openSM, m fileMark) bool {
	if !m.known || t.update(o) != nil {
		return false
	}
	return !m.open || t.ends > m.ends
}
