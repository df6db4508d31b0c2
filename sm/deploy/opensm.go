package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// ErrNoOpenSM means no OpenSM process could be found to signal.
var ErrNoOpenSM = errors.New("OpenSM is not running")

// openSM is the running OpenSM as the deployer sees it: a process to
// signal and a log to read.
type openSM struct {
	pidFile string
	logFile string
	procDir string // /proc (tests may point elsewhere)
	// noTrapSweep: OpenSM's configuration says sweep_on_trap FALSE, so a
	// link's trap starts no heavy sweep (read with each rollout).
	noTrapSweep  atomic.Bool
	trapConfRead atomic.Bool // noTrapSweep was read at least once
	// hups counts the SIGHUPs sent (each starts a heavy sweep), from
	// whichever goroutine: the sweep tracker sees them all.
	hups atomic.Int64
}

// pid returns OpenSM's process id: from the pid file, else the one
// process named "opensm". A pid whose process is not named opensm (a
// stale pid file) counts as not running.
func (o *openSM) pid() (int, error) {
	if o.pidFile != "" {
		b, err := os.ReadFile(o.pidFile)
		if err != nil {
			return 0, fmt.Errorf("%w: pid file: %v", ErrNoOpenSM, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return 0, fmt.Errorf("%w: pid file %s holds %q, expected a process id", ErrNoOpenSM, o.pidFile, strings.TrimSpace(string(b)))
		}
		if !o.isOpenSM(pid) {
			return 0, fmt.Errorf("%w: pid %d from %s is not an opensm process", ErrNoOpenSM, pid, o.pidFile)
		}
		return pid, nil
	}
	ents, err := os.ReadDir(o.procDir)
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && o.isOpenSM(pid) {
			pids = append(pids, pid)
		}
	}
	switch len(pids) {
	case 0:
		return 0, fmt.Errorf("%w: no process named opensm", ErrNoOpenSM)
	case 1:
		return pids[0], nil
	}
	sort.Ints(pids)
	return 0, fmt.Errorf("%d processes named opensm (%v): set opensm.pid_file", len(pids), pids)
}

func (o *openSM) isOpenSM(pid int) bool {
	b, err := os.ReadFile(filepath.Join(o.procDir, strconv.Itoa(pid), "comm"))
	if err != nil {
		return false
	}
	// A zombie still has its comm: check the state too.
	st, err := os.ReadFile(filepath.Join(o.procDir, strconv.Itoa(pid), "stat"))
	if err == nil {
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
			return false
		}
	}
	return strings.TrimSpace(string(b)) == "opensm"
}

// hup makes OpenSM sweep heavily: it re-reads the LFT file, the QoS
// policy and the updatable options of its configuration file.
func (o *openSM) hup() (int, error) {
	pid, err := o.pid()
	if err != nil {
		return 0, err
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return pid, fmt.Errorf("%w: SIGHUP to pid %d: %v", ErrNoOpenSM, pid, err)
	}
	o.hups.Add(1)
	return pid, nil
}

// logOffset returns the log's current size: events after it are new.
func (o *openSM) logOffset() int64 {
	st, err := os.Stat(o.logFile)
	if err != nil {
		return 0
	}
	return st.Size()
}

// sweepLog is what OpenSM logged between two offsets.
type sweepLog struct {
	configured []string // engines that "configured all switches", in order
	noEngine   bool     // "No routing engine able to successfully configure"
	errors     []string // error lines that concern routing or QoS
	subnetUp   int      // "SUBNET UP" lines
	// linkChanges counts the traps of a link changing state (trap 128,
	// logged at error level as it arrives, before OpenSM sweeps).
	linkChanges int
	// trapSwitches are the node GUIDs of the switches that reported them.
	trapSwitches []uint64
	// sweepLines counts the lines about heavy sweeps (sweepLine);
	// sweepOpen says whether the last of them left one in progress.
	sweepLines  int
	sweepOpen   bool
	noTrapSweep bool  // a trap starts no sweep (sweepLine)
	end         int64 // offset after the last complete line read
}

// readLog parses the log from off (from 0 when the log is shorter: it was
// rotated). At most 64 MiB are read per call.
func (o *openSM) readLog(off int64) (sweepLog, error) {
	out := sweepLog{end: off, noTrapSweep: o.noTrapSweep.Load()}
	f, err := os.Open(o.logFile)
	if err != nil {
		return out, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return out, err
	}
	if st.Size() < off {
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return out, err
	}
	br := bufio.NewReaderSize(io.LimitReader(f, 64<<20), 64<<10)
	pos := off
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break // a partial last line is read again next time
		}
		pos += int64(len(line))
		out.add(strings.TrimRight(line, "\n"))
	}
	out.end = pos
	return out, nil
}

// merge appends what was logged after s (read from s.end).
func (s *sweepLog) merge(m sweepLog) {
	s.configured = append(s.configured, m.configured...)
	s.noEngine = s.noEngine || m.noEngine
	s.errors = append(s.errors, m.errors[:min(len(m.errors), max(0, 20-len(s.errors)))]...)
	s.subnetUp += m.subnetUp
	if m.sweepLines > 0 {
		s.sweepLines += m.sweepLines
		s.sweepOpen = m.sweepOpen
	}
	s.linkChanges += m.linkChanges
	for _, g := range m.trapSwitches {
		if !slices.Contains(s.trapSwitches, g) {
			s.trapSwitches = append(s.trapSwitches, g)
		}
	}
	s.end = m.end
}

var trapSwitch = regexp.MustCompile(`from switch LID \d+, GUID 0x([0-9a-fA-F]+)`)

func (s *sweepLog) add(line string) {
	if k := sweepLine(line, !s.noTrapSweep); k != 0 {
		s.sweepLines++
		s.sweepOpen = k > 0
	}
	switch {
	case strings.Contains(line, "tables configured on all switches"):
		// "osm_ucast_mgr_process: file tables configured on all switches"
		f := strings.Fields(line[:strings.Index(line, "tables configured")])
		if len(f) > 0 {
			s.configured = append(s.configured, f[len(f)-1])
		}
	case strings.Contains(line, "No routing engine able to successfully configure"):
		s.noEngine = true
	case strings.Contains(line, "SUBNET UP"):
		s.subnetUp++
	case strings.Contains(line, "Received Generic Notice") && strings.Contains(line, "(Link state change)"):
		s.linkChanges++
	case strings.Contains(line, `Notice "Link state change" from switch`):
		// "log_notice: Reporting Urgent Notice "Link state change" from
		// switch LID 1, GUID 0x0002c90000000001"
		if m := trapSwitch.FindStringSubmatch(line); m != nil {
			if g, err := strconv.ParseUint(m[1], 16, 64); err == nil && !slices.Contains(s.trapSwitches, g) {
				s.trapSwitches = append(s.trapSwitches, g)
			}
		}
	case routingError(line):
		if len(s.errors) < 20 {
			s.errors = append(s.errors, strings.TrimSpace(line))
		}
	}
}

// routingError reports OpenSM error lines about the file engine or the
// QoS policy (error level "0x01 ->", "ERR XXXX", "PARSE ERROR").
func routingError(line string) bool {
	if !strings.Contains(line, "] 0x01 -> ") && !strings.Contains(line, "PARSE ERROR") && !strings.Contains(line, " ERR ") {
		return false
	}
	l := strings.ToLower(line)
	for _, k := range []string{"ucast", "qos", "policy", "parse error", "routing", "lft", "sl2vl"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}
