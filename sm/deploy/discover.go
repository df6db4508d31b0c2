package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// TriggerDiscovered is the reroute reason discovery gives the daemon.
const TriggerDiscovered = "fabric-discovered"

// watchFabric rediscovers the fabric when OpenSM logs a trap that a
// link changed state ("Link state change", trap 128: a cable failed or
// came back), when OpenSM finishes a heavy sweep (it rewrites
// opensm-subnet.lst then: a port change seen by a light sweep), and every
// Rediscover, and asks the daemon to reroute when the fabric changed.
// OpenSM logs the trap as it arrives, before its own heavy sweep, so the
// reroute starts while OpenSM is still sweeping: a trap of cables that
// went down reads only the trapping switches' ports (lostCables), others
// a full discovery; the rediscovery after that sweep sees the fabric as
// OpenSM left it. Both files are watched
// with inotify, checked every DiscoverPoll where it is not available.
//
// The full discoveries a sweep's end or the period start run beside the
// watch (fullScan): a trap abandons the one in progress, whose scan may
// predate the change, and is handled at once; the sweep the trap causes
// ends in another full discovery. An abandoned scan is killed on real
// umad: a scan that meets a dead link would otherwise spend its SMP
// timeouts and delay the discovery queued behind it. Through umad2sim
// it runs to its end and is discarded (see killSuperseded).
func (d *Deployer) watchFabric(ctx context.Context, trigger func(string)) {
	kill := d.run.killSuperseded()
	d.log.Debug("full scans a link's trap supersedes", "killed", kill)
	subnet := ""
	if d.cfg.DumpDir != "" {
		subnet = filepath.Join(d.cfg.DumpDir, "opensm-subnet.lst")
	}
	w := watchDirs(ctx, filepath.Dir(d.cfg.LogFile), d.cfg.DumpDir)
	last, logOff := stampOf(subnet), d.osm.logOffset()
	// retry: the last discovery's scan was not adopted (see scan); the
	// next wake-up scans again unless a trigger does first.
	var retry rescan
	retry.set(d.scan(ctx, "start", nil, trigger))
	next := time.Now().Add(d.cfg.Rediscover)
	var full fullScan
	defer full.stop()
	for {
		if err := w.wait(ctx, d.cfg.DiscoverPoll); err != nil {
			return
		}
		full.reap(ctx)
		lg, err := d.osm.readLog(logOff)
		if err == nil {
			logOff = lg.end
		}
		// OpenSM logs the trap, then which switch sent it: wait a moment
		// for that line.
		for try := 0; try < 5 && err == nil && lg.linkChanges > 0 && len(lg.trapSwitches) == 0; try++ {
			if sleep(ctx, 2*time.Millisecond) != nil {
				return
			}
			var more sweepLog
			if more, err = d.osm.readLog(logOff); err == nil {
				lg.merge(more)
				logOff = lg.end
			}
		}
		switch st := stampOf(subnet); {
		case lg.linkChanges > 0:
			full.abandon(kill)
			if d.lostCables(ctx, lg.trapSwitches, trigger) {
				d.oweTrapSweep()
			} else {
				d.trapSweepNow()
				retry.set(d.scan(ctx, "opensm-trap", nil, trigger))
			}
			next = time.Now().Add(d.cfg.Rediscover)
		case subnet != "" && st != last:
			last = st
			full.start(ctx, d.fullDiscovery("opensm-sweep", &retry, trigger))
			next = time.Now().Add(d.cfg.Rediscover)
		case retry.pending():
			full.start(ctx, d.fullDiscovery(retry.take(), &retry, trigger))
		case d.cfg.Rediscover > 0 && time.Now().After(next):
			full.start(ctx, d.fullDiscovery("periodic", &retry, trigger))
			next = time.Now().Add(d.cfg.Rediscover)
		}
	}
}

// oweTrapSweep notes, when OpenSM does not sweep on traps, that the
// heavy sweep it skipped for cables lost is owed: it brings OpenSM's own
// view (SA, multicast trees) up to date, and runs after the rollout the
// loss causes (catchUpIfPending) or, when none comes, after
// trapSweepGrace. Without that sweep in between, the heal's steps are
// written as soon as they are proven, not after OpenSM's sweep of the old
// file.
func (d *Deployer) oweTrapSweep() {
	if !d.osm.noTrapSweep.Load() {
		return
	}
	d.trapOwed.Store(true)
	select {
	case d.owed <- struct{}{}:
	default:
	}
}

// trapSweepNow sends, when OpenSM does not sweep on traps, the heavy
// sweep it skipped for a trap that is not cables lost alone: a link that
// came up is brought up (its ports armed and active, new ports given
// LIDs) by OpenSM's sweep before any route uses it.
func (d *Deployer) trapSweepNow() {
	if !d.osm.noTrapSweep.Load() {
		return
	}
	if _, err := d.osm.hup(); err != nil {
		d.log.Warn("cannot send OpenSM the heavy sweep its sweep_on_trap FALSE skipped", "err", err)
		return
	}
	d.log.Info("a link's trap other than cables lost: SIGHUP for the heavy sweep OpenSM skipped (sweep_on_trap FALSE)")
}

// trapSweepGrace is how long an owed trap sweep waits for a rollout to
// send it.
const trapSweepGrace = time.Second

// rescan is the trigger of the scan the last discovery asks for: ""
// (none), "incomplete-scan" or "superseded-scan".
type rescan struct{ why atomic.Pointer[string] }

func (r *rescan) set(why string) { r.why.Store(&why) }

func (r *rescan) pending() bool { p := r.why.Load(); return p != nil && *p != "" }

func (r *rescan) take() string {
	if p := r.why.Swap(nil); p != nil {
		return *p
	}
	return ""
}

// fullDiscovery is a full discovery for fullScan: a rescan it asks for is
// noted in retry; one that completes leaves a rescan asked meanwhile (by
// the trap's own discovery) in place.
func (d *Deployer) fullDiscovery(reason string, retry *rescan, trigger func(string)) func(context.Context, *scanGate) {
	return func(c context.Context, g *scanGate) {
		if why := d.scan(c, reason, g, trigger); why != "" {
			retry.set(why)
		}
	}
}

// scanGate tells a full discovery, once its scan has ended, whether it
// still counts: a link's trap abandons it. The discovery holds mu while
// it adopts, so that after abandon returns it adopts nothing.
type scanGate struct {
	mu  sync.Mutex
	off bool
}

// fullScan is the full discovery watchFabric runs beside its watch: one
// at a time, a request made meanwhile run after it.
type fullScan struct {
	cancel  context.CancelFunc
	done    chan struct{}
	gate    *scanGate
	pending func(context.Context, *scanGate)
}

// start runs scan, or queues it while another is in progress (also an
// abandoned one: one ibnetdiscover at a time).
func (f *fullScan) start(ctx context.Context, scan func(context.Context, *scanGate)) {
	f.reap(ctx)
	if f.done != nil {
		f.pending = scan
		return
	}
	c, cancel := context.WithCancel(ctx)
	done, g := make(chan struct{}), &scanGate{}
	f.cancel, f.done, f.gate = cancel, done, g
	go func() { defer close(done); scan(c, g) }()
}

// abandon drops the queued scan and makes the one in progress discard
// what it finds; with kill it also cancels that scan and waits for its
// end (ibnetdiscover killed), else lets it run to its end and waits only
// for an adoption in progress to end.
func (f *fullScan) abandon(kill bool) {
	f.pending = nil
	if f.gate == nil {
		return
	}
	f.gate.mu.Lock()
	f.gate.off = true
	f.gate.mu.Unlock()
	if kill {
		f.cancel()
		<-f.done
	}
}

// killSuperseded reports whether a full scan a link's trap supersedes
// may be killed at once: the diags reach the fabric through real umad,
// where a client may die at any moment. Through umad2sim (LD_PRELOAD in
// the programs' environment, the only way they reach ibsim) a scan is
// let finish: ibsim 0.10 exits when a client dies between its attach
// request and ibsim's call-back (docs/deploy.md), and the cost of
// letting it finish is small there (ibsim answers a dead link's SMPs at
// once).
func (r *runner) killSuperseded() bool {
	return !preloadsUMAD2Sim(append(os.Environ(), r.env...))
}

// preloadsUMAD2Sim reports whether the LD_PRELOAD that env (NAME=value,
// the last of a name counting, as exec takes it) gives a program holds
// umad2sim's library.
func preloadsUMAD2Sim(env []string) bool {
	preload := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
			preload = v
		}
	}
	// ld.so splits LD_PRELOAD at spaces and colons.
	for _, lib := range strings.FieldsFunc(preload, func(r rune) bool { return r == ':' || r == ' ' }) {
		if strings.Contains(filepath.Base(lib), "umad2sim") {
			return true
		}
	}
	return false
}

// reap notes the end of the scan in progress and starts the queued one.
func (f *fullScan) reap(ctx context.Context) {
	if f.done == nil {
		return
	}
	select {
	case <-f.done:
		f.cancel()
		f.cancel, f.done, f.gate = nil, nil, nil
		if p := f.pending; p != nil {
			f.pending = nil
			f.start(ctx, p)
		}
	default:
	}
}

// stop cancels the scan in progress and the queued one and waits for the
// first to end (the watch's end).
func (f *fullScan) stop() {
	f.pending = nil
	if f.done == nil {
		return
	}
	f.cancel()
	<-f.done
	f.cancel, f.done, f.gate = nil, nil, nil
}

type stamp struct {
	size  int64
	mtime time.Time
}

func stampOf(path string) stamp {
	if path == "" {
		return stamp{}
	}
	st, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{st.Size(), st.ModTime()}
}

// scan runs ibnetdiscover and, when the fabric differs from the
// daemon's dump (ignoring ibnetdiscover's header comments, which carry
// the time, and the order of its nodes), replaces the dump and triggers
// a reroute. A scan in which queries failed, or during which OpenSM
// logged a link's trap, is not adopted; scan then returns the trigger of
// the scan to run again ("incomplete-scan", "superseded-scan"), else "".
// A scan whose gate (nil: none) was abandoned meanwhile is discarded.
func (d *Deployer) scan(ctx context.Context, reason string, g *scanGate, trigger func(string)) (again string) {
	t0, logOff := time.Now(), int64(-1)
	if d.osm != nil {
		logOff = d.osm.logOffset()
	}
	out, stderr, err := d.run.runStderr(ctx, "ibnetdiscover")
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.off {
			d.met.discover.WithLabelValues("superseded").Inc()
			d.log.Debug("fabric discovery discarded: a link's trap came during the scan and is handled on its own", "trigger", reason, "killed", err != nil && ctx.Err() != nil, "seconds", time.Since(t0).Seconds())
			return ""
		}
	}
	if err != nil && ctx.Err() != nil {
		d.log.Debug("fabric discovery cancelled", "trigger", reason, "seconds", time.Since(t0).Seconds())
		return ""
	}
	d.met.discoverDur.Observe(time.Since(t0).Seconds())
	if err == nil {
		if err = scanIncomplete(stderr); err != nil {
			again = "incomplete-scan"
		}
	}
	if err == nil && logOff >= 0 {
		if err = d.trapDuringScan(logOff); err != nil {
			again = "superseded-scan"
		}
	}
	if err == nil {
		_, err = ibnetdiscover.Parse(bytes.NewReader(out), "ibnetdiscover")
	}
	d.mu.Lock()
	d.disc.Runs++
	d.disc.LastRun, d.disc.LastTrigger, d.disc.LastError = time.Now().UTC(), reason, ""
	if err != nil {
		d.disc.LastError = err.Error()
	}
	d.mu.Unlock()
	if err != nil {
		if errors.Is(err, errTrapDuringScan) {
			d.met.discover.WithLabelValues("superseded").Inc()
			d.log.Info("fabric discovery not adopted", "trigger", reason, "reason", err)
			return again
		}
		d.met.discover.WithLabelValues("failed").Inc()
		d.log.Warn("fabric discovery failed", "trigger", reason, "err", err)
		return again
	}
	d.adopt(out, reason, t0, trigger)
	return ""
}

// errIncompleteScan marks an ibnetdiscover run whose queries failed.
var errIncompleteScan = errors.New("incomplete scan")

// errTrapDuringScan marks an ibnetdiscover run during which OpenSM logged
// a link's trap: the scan may have read the link's ports before the
// change (a complete dump of the old fabric). Adopted, it would start a
// reroute for a fabric that is gone, whose SMP writes cross the failed
// link; the watch handles the trap instead, and the fabric is scanned
// again.
var errTrapDuringScan = errors.New("a link's trap came during the scan")

// maxSuperseded is how many scans in a row a link's traps may supersede:
// a link that keeps flapping must not keep the fabric undiscovered.
const maxSuperseded = 3

// trapDuringScan returns an errTrapDuringScan error when OpenSM's log
// shows a link's trap after offset off (the scan's start), unless the
// last maxSuperseded scans were superseded so.
func (d *Deployer) trapDuringScan(off int64) error {
	lg, err := d.osm.readLog(off)
	if err != nil || lg.linkChanges == 0 || d.superseded.Load() >= maxSuperseded {
		d.superseded.Store(0)
		return nil
	}
	d.superseded.Add(1)
	return fmt.Errorf("%w (%d in OpenSM's log): the scan may predate the change; the trap's own reads follow and the fabric is scanned again", errTrapDuringScan, lg.linkChanges)
}

// scanFailure matches the lines libibnetdisc writes to standard error
// for a query that got no answer ("… umad (DR path …) bad status 110;
// Connection timed out"). ibnetdiscover exits 0 after them and lists
// only what answered: a cable failing during the scan drops every node
// and port first reached through it, cables and hosts that are still
// there. Routing such a dump would black-hole live hosts, so it is
// not adopted.
var scanFailure = regexp.MustCompile(`(?i)bad status|timed out|query.*failed|failed.*query`)

// scanIncomplete returns an errIncompleteScan error when ibnetdiscover's
// standard error reports failed queries, nil otherwise.
func scanIncomplete(stderr string) error {
	n, first := 0, ""
	for _, line := range strings.Split(stderr, "\n") {
		if scanFailure.MatchString(line) {
			if n == 0 {
				first = strings.TrimSpace(line)
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: ibnetdiscover reported %d failed queries (first: %s): the fabric changed during the scan; the dump is kept and the fabric scanned again", errIncompleteScan, n, first)
}

// adopt replaces the daemon's dump with out when the fabric differs and
// triggers a reroute.
func (d *Deployer) adopt(out []byte, reason string, t0 time.Time, trigger func(string)) {
	old, _ := os.ReadFile(d.cfg.Fabric)
	if ibnetdiscover.ContentHash(old) == ibnetdiscover.ContentHash(out) {
		d.met.discover.WithLabelValues("unchanged").Inc()
		return
	}
	if err := atomicfile.WriteFile(d.cfg.Fabric, func(w io.Writer) error { _, err := w.Write(out); return err }, 0o644); err != nil {
		d.met.discover.WithLabelValues("failed").Inc()
		d.log.Error("cannot write the discovered fabric", "path", d.cfg.Fabric, "err", err)
		return
	}
	d.met.discover.WithLabelValues("changed").Inc()
	d.met.changes.Inc()
	d.met.lastChange.Set(float64(time.Now().Unix()))
	d.mu.Lock()
	d.disc.Changes++
	d.disc.LastChange = time.Now().UTC()
	d.mu.Unlock()
	d.log.Info("fabric changed", "trigger", reason, "dump", d.cfg.Fabric, "discover_seconds", time.Since(t0).Seconds())
	trigger(TriggerDiscovered)
}
