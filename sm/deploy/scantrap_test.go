package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/internal/metrictest"
)

// linkTrapLine is how OpenSM logs a link's trap as it arrives.
const linkTrapLine = `Nov 26 09:01:25 209474 [755806C0] 0x01 -> log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 (Switch) from LID:7 TID:0x000000000000001c`

// TestDiscoverSupersededByTrap: a real ibnetdiscover scan of the
// simulator after a cable's Unlink, during which OpenSM logs a link's
// trap (the wrapper appends it as the scan ends, as a trap that arrives
// while the scan runs), is not adopted: it may have read the link's
// ports before the change, and a reroute from it writes over the failed
// cable. The deployer keeps its dump, triggers nothing and scans again;
// after maxSuperseded such scans in a row (a flapping link) it adopts;
// a scan without a trap is adopted at once.
func TestDiscoverSupersededByTrap(t *testing.T) {
	tp, sim := simFatTree42(t)
	dump, err := sim.Run(ibtest.Budget(t)/4, "ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	d, reg, fab := scanDeployer(t, sim, dump)
	osmLog := d.osm.logFile
	real, err := ibtest.LookPath("ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	tools, trapFlag := t.TempDir(), filepath.Join(t.TempDir(), "trap")
	script := fmt.Sprintf("#!/bin/sh\n%q \"$@\"; rc=$?\n[ -e %q ] && echo %q >> %q\nexit $rc\n", real, trapFlag, linkTrapLine, osmLog)
	if err := os.WriteFile(filepath.Join(tools, "ibnetdiscover"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d.run.dir = tools
	triggers := 0
	trigger := func(string) { triggers++ }
	ctx := context.Background()
	name, port := switchCable(t, tp)
	if out, err := sim.Console(ibtest.Budget(t)/4, fmt.Sprintf("Unlink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("Unlink: %v %s", err, out)
	}
	if err := os.WriteFile(trapFlag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range maxSuperseded {
		if again := d.scan(ctx, "test", nil, trigger); again != "superseded-scan" {
			t.Fatalf("scan %d: a scan during which a link's trap was logged was adopted or not rescanned as superseded (rescan %q, error %q)", i+1, again, d.disc.LastError)
		}
		if b, _ := os.ReadFile(fab); string(b) != string(dump) || triggers != 0 {
			t.Fatalf("scan %d: a superseded scan replaced the dump or triggered a reroute (%d triggers)", i+1, triggers)
		}
		if !strings.Contains(d.disc.LastError, "trap came during the scan") {
			t.Errorf("status does not say why the scan was not adopted: %q", d.disc.LastError)
		}
	}
	if got := discoverCount(t, reg, "superseded"); got != maxSuperseded {
		t.Errorf("nuesm_fabric_discover_total{result=\"superseded\"} = %v, want %d", got, maxSuperseded)
	}
	if d.discover(ctx, "test", trigger) || triggers != 1 {
		t.Fatalf("scan %d in a row with a trap: not adopted (%d triggers, error %q)", maxSuperseded+1, triggers, d.disc.LastError)
	}
	// Without a trap a changed fabric is adopted at once.
	if err := os.Remove(trapFlag); err != nil {
		t.Fatal(err)
	}
	if out, err := sim.Console(ibtest.Budget(t)/4, fmt.Sprintf("ReLink %q[%d]", name, port)); err != nil || strings.Contains(out, "#") {
		t.Fatalf("ReLink: %v %s", err, out)
	}
	if d.discover(ctx, "test", trigger) || triggers != 2 {
		t.Fatalf("a scan without a trap after the ReLink: not adopted (%d triggers, error %q)", triggers, d.disc.LastError)
	}
}

// discoverCount returns nuesm_fabric_discover_total{result}.
func discoverCount(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	return metrictest.Value(t, reg, "nuesm_fabric_discover_total", "result", result)
}

// discover is scan without a gate; it reports whether to scan again.
func (d *Deployer) discover(ctx context.Context, reason string, trigger func(string)) (again bool) {
	return d.scan(ctx, reason, nil, trigger) != ""
}
