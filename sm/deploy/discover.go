package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/atomicfile"
)

// TriggerDiscovered is the reroute reason discovery gives the daemon.
const TriggerDiscovered = "fabric-discovered"

// watchFabric rediscovers the fabric whenever OpenSM finishes a heavy
// sweep (it rewrites opensm-subnet.lst then: a trap for a failed or
// repaired cable, a port change seen by a light sweep) and every
// Rediscover, and asks the daemon to reroute when the fabric changed.
// OpenSM heavy-sweeps within a fraction of a second of a link change
// (docs/deploy.md), so watching its dump is as fast as polling the
// fabric without costing a discovery per poll.
func (d *Deployer) watchFabric(ctx context.Context, trigger func(string)) {
	subnet := ""
	if d.cfg.DumpDir != "" {
		subnet = filepath.Join(d.cfg.DumpDir, "opensm-subnet.lst")
	}
	last := stampOf(subnet)
	d.discover(ctx, "start", trigger)
	tick := time.NewTicker(d.cfg.DiscoverPoll)
	defer tick.Stop()
	next := time.Now().Add(d.cfg.Rediscover)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if st := stampOf(subnet); subnet != "" && st != last {
			last = st
			d.discover(ctx, "opensm-sweep", trigger)
			next = time.Now().Add(d.cfg.Rediscover)
		} else if d.cfg.Rediscover > 0 && time.Now().After(next) {
			d.discover(ctx, "periodic", trigger)
			next = time.Now().Add(d.cfg.Rediscover)
		}
	}
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

// discover runs ibnetdiscover and, when the fabric differs from the
// daemon's dump (ignoring ibnetdiscover's header comments, which carry
// the time), replaces the dump and triggers a reroute.
func (d *Deployer) discover(ctx context.Context, reason string, trigger func(string)) {
	t0 := time.Now()
	out, err := d.run.run(ctx, "ibnetdiscover")
	d.met.discoverDur.Observe(time.Since(t0).Seconds())
	if err == nil {
		_, err = ibnetdiscover.Parse(bytes.NewReader(out), "ibnetdiscover")
	}
	d.mu.Lock()
	d.disc.Runs++
	d.disc.LastRun, d.disc.LastTrigger, d.disc.LastError = time.Now().UTC(), reason, ""
	d.mu.Unlock()
	if err != nil {
		d.met.discover.WithLabelValues("failed").Inc()
		d.mu.Lock()
		d.disc.LastError = err.Error()
		d.mu.Unlock()
		d.log.Warn("fabric discovery failed", "trigger", reason, "err", err)
		return
	}
	old, _ := os.ReadFile(d.cfg.Fabric)
	if fabricHash(old) == fabricHash(out) {
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

// fabricHash hashes a dump without its lines starting with '#' (the
// header ibnetdiscover dates).
func fabricHash(b []byte) [32]byte {
	h := sha256.New()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b
		if i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > 0 && line[0] != '#' {
			h.Write(line)
		}
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}
