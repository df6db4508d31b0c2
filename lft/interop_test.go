package lft

// Tests against the real OpenSM, ibsim and infiniband-diags (see package
// internal/ibtest). They skip loudly when the programs are missing, and
// fail instead when NUESM_REQUIRE_TOOLS is set.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
)

// simFabric writes g's fabric as an ibsim net file and starts ibsim on it.
func simFabric(t *testing.T, g *fabric.Graph) *ibtest.Sim {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.net")
	if err := ibnetdiscover.WriteFile(path, g.F); err != nil {
		t.Fatal(err)
	}
	return ibtest.StartSim(t, path, ibtest.SimConfig{})
}

// pinnedLIDs makes OpenSM use g's LIDs.
func pinnedLIDs(g *fabric.Graph) []ibtest.LIDAssignment {
	var a []ibtest.LIDAssignment
	for _, p := range lidPorts(g) {
		if p.lid != 0 {
			a = append(a, ibtest.LIDAssignment{GUID: p.guid, LID: p.lid, LMC: p.lmc})
		}
	}
	return a
}

func noLogErrors(t *testing.T, osm *ibtest.OpenSM) {
	t.Helper()
	if errs := osm.LogErrors(); len(errs) > 0 {
		t.Errorf("OpenSM logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestInteropReadOpenSMDumps runs OpenSM once (min-hop, QoS on) on a
// simulated ring and reads what it produced: opensm-lfts.dump,
// opensm-sl2vl.dump, and the switches' tables through dump_lfts. Our
// writers must reproduce OpenSM's two dumps byte for byte.
func TestInteropReadOpenSMDumps(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm", "dump_lfts", "dump_fts")
	g := ringGraph(t, 5, 2, []int{0, 2}, 0)
	sim := simFabric(t, g)
	osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{Args: []string{"-Q"}, LIDs: pinnedLIDs(g)})
	if err != nil {
		t.Fatal(err)
	}
	noLogErrors(t, osm)

	lfts, err := ReadOpenSMLFTsFile(osm.Dump("opensm-lfts.dump"), g)
	if err != nil {
		t.Fatal(err)
	}
	for s := range lfts.Switches {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			if lfts.Port(int32(s), lid) == NoPort {
				t.Errorf("OpenSM left %s without a route to LID %d", g.SwitchName(int32(s)), lid)
			}
		}
	}
	m, err := ReadOpenSMSL2VLFile(osm.Dump("opensm-sl2vl.dump"), g)
	if err != nil {
		t.Fatal(err)
	}
	lfts.SL2VL = m
	for _, c := range []struct {
		file  string
		write func(w *bytes.Buffer) error
	}{
		{"opensm-lfts.dump", func(w *bytes.Buffer) error { return WriteOpenSMLFTs(w, g, lfts) }},
		{"opensm-sl2vl.dump", func(w *bytes.Buffer) error { return WriteOpenSMSL2VL(w, g, lfts) }},
	} {
		var buf bytes.Buffer
		if err := c.write(&buf); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(osm.Dump(c.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("our %s differs from OpenSM's:\n%s", c.file, firstDiff(buf.Bytes(), want))
		}
	}

	out, err := sim.Run(ibtest.Budget(t), "dump_lfts")
	if err != nil {
		t.Fatal(err)
	}
	fromSwitches, err := ReadIBRoute(bytes.NewReader(out), "dump_lfts", g)
	if err != nil {
		t.Fatal(err)
	}
	if want := lftsOnly(g, lfts); !Equal(fromSwitches, want) {
		t.Errorf("switch tables (dump_lfts) differ from opensm-lfts.dump:\n%s", diffRoutings(g, fromSwitches, want, 10))
	}
}

// TestInteropOpenSMLoadsOurLFTs writes random tables (every port 0..N, and
// no-route entries), has OpenSM's file engine load them into the simulated
// switches, and reads every switch's table back with dump_lfts over
// directed routes; every entry must match.
func TestInteropOpenSMLoadsOurLFTs(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm", "dump_lfts", "dump_fts")
	g := ringGraph(t, 5, 3, []int{1, 3}, 0)
	// LID 0 routes are set but not written (OpenSM would not dump them
	// either), so the switches end up with no route for LID 0.
	r := randomRouting(g, 2024, randomOpts{lid0: true})
	path := filepath.Join(t.TempDir(), "nuesm-lfts.dump")
	if err := WriteOpenSMLFTsFile(path, g, r); err != nil {
		t.Fatal(err)
	}
	sim := simFabric(t, g)

	t.Run("fallback is detected", func(t *testing.T) {
		// OpenSM aborts the file load on a port beyond the switch's port
		// count and falls back to minhop without failing; the checks
		// below must notice. Our reader rejects such a file too.
		text, _ := os.ReadFile(path)
		i := bytes.Index(text, []byte("\n0x0001 "))
		bad := append(append(append([]byte(nil), text[:i+8]...), "040"...), text[i+11:]...)
		badPath := filepath.Join(t.TempDir(), "bad.dump")
		if err := os.WriteFile(badPath, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadOpenSMLFTsFile(badPath, g); err == nil {
			t.Error("our reader accepted port 40 on a 6-port switch")
		}
		osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{Args: []string{"-R", "file", "-U", badPath}, LIDs: pinnedLIDs(g)})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(osm.Log(), "file tables configured on all switches") || len(osm.LogErrors()) == 0 {
			t.Fatalf("a rejected file went unnoticed; log:\n%s", osm.Log())
		}
	})

	osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{
		Args: []string{"-R", "file", "-U", path},
		LIDs: pinnedLIDs(g),
	})
	if err != nil {
		t.Fatal(err)
	}
	noLogErrors(t, osm)
	if log := osm.Log(); !strings.Contains(log, "file tables configured on all switches") {
		t.Fatalf("OpenSM did not configure the switches with the file engine; log:\n%s", log)
	}
	// OpenSM dumps the tables it loaded: the same file.
	ours, _ := os.ReadFile(path)
	theirs, err := os.ReadFile(osm.Dump("opensm-lfts.dump"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		t.Errorf("OpenSM's dump of the loaded tables differs from ours:\n%s", firstDiff(theirs, ours))
	}
	// The switches hold them. -n: random tables break LID routing, so
	// dump_lfts must not resolve destinations by LID.
	out, err := sim.Run(ibtest.Budget(t), "dump_lfts", "-n")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadIBRoute(bytes.NewReader(out), "dump_lfts -n", g)
	if err != nil {
		t.Fatal(err)
	}
	want := lftsOnly(g, r)
	for s := range want.Switches {
		want.SetPort(int32(s), 0, NoPort)
	}
	if !Equal(got, want) {
		t.Errorf("switch tables differ from what we wrote:\n%s", diffRoutings(g, got, want, 20))
	}
}

var saSL = regexp.MustCompile(`(?m)^\s*sl\.+0x([0-9a-fA-F]+)\s*$`)

// TestInteropQoSPolicy has OpenSM parse our QoS policy (opensm -Q -Y) and
// then asks its SA for path records: the SL of every path must be the
// destination's SL. A broken policy must show up as a logged error, so
// that a clean log means something.
func TestInteropQoSPolicy(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm", "saquery")
	g := ringGraph(t, 4, 2, nil, 0)
	r := randomRouting(g, 99, randomOpts{})
	for lid := range r.SL.ByDest {
		r.SL.ByDest[lid] = uint8(lid % 4)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "qos-policy.conf")
	if err := WriteQoSPolicyFile(policy, g, r); err != nil {
		t.Fatal(err)
	}
	sim := simFabric(t, g)

	t.Run("broken policy is reported", func(t *testing.T) {
		text, _ := os.ReadFile(policy)
		bad := filepath.Join(dir, "broken.conf")
		broken := strings.Replace(string(text), "sl: 1", "sl: one", 1)
		if err := os.WriteFile(bad, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{Args: []string{"-Q", "-Y", bad}, LIDs: pinnedLIDs(g)})
		if err != nil {
			t.Fatal(err)
		}
		if len(osm.LogErrors()) == 0 {
			t.Fatal("OpenSM logged no error for a broken policy; the check below would prove nothing")
		}
	})

	osm, err := ibtest.StartOpenSM(t, sim, ibtest.OpenSMConfig{Args: []string{"-Q", "-Y", policy}, LIDs: pinnedLIDs(g)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(osm.Log(), "Loading QoS policy file ("+policy+")") {
		t.Error("OpenSM did not say it loaded the policy")
	}
	noLogErrors(t, osm)
	src := int(g.Terms[0].LID)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if lid == src {
			continue
		}
		out, err := sim.Run(ibtest.Budget(t), "saquery", "-p", "--src-to-dst", strconv.Itoa(src)+":"+strconv.Itoa(lid))
		if err != nil {
			t.Fatal(err)
		}
		m := saSL.FindSubmatch(out)
		if m == nil {
			t.Fatalf("no SL in the path record %d -> %d:\n%s", src, lid, out)
		}
		sl, _ := strconv.ParseUint(string(m[1]), 16, 8)
		if uint8(sl) != r.SL.ByDest[lid] {
			t.Errorf("path %d -> %d: OpenSM answers SL %d, the routing has %d", src, lid, sl, r.SL.ByDest[lid])
		}
	}
}
