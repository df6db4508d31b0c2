package dfsssp

// Cross-checks against the real OpenSM (its dfsssp and sssp engines) on
// ibsim. They skip loudly when the programs are missing, and fail instead
// when NUESM_REQUIRE_TOOLS is set (see internal/ibtest).

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// runOpenSM routes g's fabric with OpenSM's engine (-R engine) once, LIDs
// pinned to g's, and returns OpenSM.
func runOpenSM(t *testing.T, g *fabric.Graph, engine string) *ibtest.OpenSM {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fabric.net")
	if err := ibnetdiscover.WriteIBSimFile(path, g.F); err != nil {
		t.Fatal(err)
	}
	cfg := ibtest.SimConfig{}
	args := ibnetdiscover.IBSimArgs(g.F)
	for i := 0; i+1 < len(args); i += 2 {
		n, _ := strconv.Atoi(args[i+1])
		switch args[i] {
		case "-N":
			cfg.MaxNodes = n
		case "-S":
			cfg.MaxSwitches = n
		case "-P":
			cfg.MaxPorts = n
		case "-L":
			cfg.LinearCap = n
		}
	}
	sim := ibtest.StartSim(t, path, cfg)
	var lids []ibtest.LIDAssignment
	for _, id := range g.Switches {
		p := &g.F.Nodes[id].Ports[0]
		lids = append(lids, ibtest.LIDAssignment{GUID: g.F.Nodes[id].GUID, LID: p.LID, LMC: p.LMC})
	}
	for _, tm := range g.Terms {
		n := &g.F.Nodes[tm.Node]
		lids = append(lids, ibtest.LIDAssignment{GUID: n.Ports[tm.Port].GUID, LID: tm.LID, LMC: tm.LMC})
	}
	osm, err := ibtest.RunOpenSMOnce(t, sim, ibtest.OpenSMConfig{Args: []string{"-R", engine}, LIDs: lids})
	if err != nil {
		t.Fatal(err)
	}
	return osm
}

var (
	vlNeededRE = regexp.MustCompile(`Virtual Lanes needed: (\d+)`)
	vlAvailRE  = regexp.MustCompile(`Virtual Lanes available: (\d+)`)
)

// openSMNeeded returns the VLs OpenSM's dfsssp reported as needed and
// available.
func openSMNeeded(t *testing.T, osm *ibtest.OpenSM) (needed, avail int) {
	t.Helper()
	needed, avail, err := parseNeeded(osm.Log())
	if err != nil {
		t.Fatalf("%v:\n%s", err, osm.Log())
	}
	return needed, avail
}

// parseNeeded reads the VLs needed and available from dfsssp's log lines.
func parseNeeded(log string) (needed, avail int, err error) {
	m, a := vlNeededRE.FindStringSubmatch(log), vlAvailRE.FindStringSubmatch(log)
	if m == nil || a == nil {
		return 0, 0, errors.New("OpenSM's log does not say how many VLs dfsssp needs")
	}
	needed, _ = strconv.Atoi(m[1])
	avail, _ = strconv.Atoi(a[1])
	return needed, avail, nil
}

// lanes parses the per-VL path counts OpenSM's dfsssp logs after the line
// starting with heading.
func lanes(log, heading string) []int64 {
	i := strings.Index(log, heading)
	if i < 0 {
		return nil
	}
	var out []int64
	for _, line := range strings.Split(log[i:], "\n")[1:] {
		m := laneRE.FindStringSubmatch(line)
		if m == nil {
			break
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, n)
	}
	return out
}

var laneRE = regexp.MustCompile(`^.*\d+\. lane: (\d+)$`)

// interopFixtures are routed by both OpenSM and us. They stay within
// ibsim's default limits.
var interopFixtures = []fixture{
	{"ring5", func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) }},
	{"ring5-shortcut", func() (*topo.Topology, error) { return topo.Ring(5, 2, []int{2, 4}) }},
	{"torus3x3x3", func() (*topo.Topology, error) { return topo.Torus([]int{3, 3, 3}, 2, false) }},
	{"torus4x4x4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 2, false) }},
	{"torus6x6", func() (*topo.Topology, error) { return topo.Torus([]int{6, 6}, 2, false) }},
	{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
	{"dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 0) }},
	{"random20", func() (*topo.Topology, error) { return topo.Random(20, 4, 2, 1) }},
	{"kautz3-2", func() (*topo.Topology, error) { return topo.Kautz(3, 2, 2) }},
}

// TestOpenSMSameTables: our SSSP forwarding tables equal OpenSM's sssp
// tables entry for entry (same LIDs pinned), which checks the destination
// order, the weights, and Dijkstra's tie-breaking.
func TestOpenSMSameTables(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm")
	for _, fx := range interopFixtures {
		t.Run(fx.name, func(t *testing.T) {
			tp, err := fx.make()
			g := compile(t, tp, err)
			osm := runOpenSM(t, g, "sssp")
			theirs, err := lft.ReadOpenSMLFTsFile(osm.Dump("opensm-lfts.dump"), g)
			if err != nil {
				t.Fatal(err)
			}
			ours := routeSSSP(t, g, routing.Options{})
			diff := 0
			for s := int32(0); int(s) < g.NumSwitches(); s++ {
				for lid := 1; lid <= g.MaxLID(); lid++ {
					if a, b := ours.Port(s, lid), theirs.Port(s, lid); a != b {
						if diff++; diff <= 5 {
							t.Errorf("%s, LID %d: port %d, OpenSM %d", g.SwitchName(s), lid, a, b)
						}
					}
				}
			}
			if diff > 0 {
				t.Errorf("%d entries differ", diff)
			}
		})
	}
}

// TestOpenSMSameLayers: our DFSSSP needs as many VLs as OpenSM's and puts
// as many (source LID, destination LID) pairs in each layer, before and
// after spreading paths over spare VLs — on the 4×4×4 torus both fail
// with 9 VLs needed at 8 available.
func TestOpenSMSameLayers(t *testing.T) {
	ibtest.Require(t, "ibsim", "opensm")
	for _, fx := range interopFixtures {
		t.Run(fx.name, func(t *testing.T) {
			tp, err := fx.make()
			g := compile(t, tp, err)
			osm := runOpenSM(t, g, "dfsssp")
			needed, avail := openSMNeeded(t, osm)
			log := osm.Log()
			r, st, err := RouteDFSSSP(context.Background(), g, routing.Options{MaxVLs: avail})
			if st.Needed != needed {
				t.Fatalf("needed %d VLs, OpenSM %d", st.Needed, needed)
			}
			var ve *routing.VLError
			if (needed > avail) != errors.As(err, &ve) {
				t.Fatalf("err = %v with OpenSM needing %d of %d", err, needed, avail)
			}
			before := make([]int64, avail)
			copy(before, st.LayerPairs)
			if want := lanes(log, "Paths per VL (before balancing)"); !slices.Equal(before, want) {
				t.Fatalf("pairs per layer %v, OpenSM %v", before, want)
			}
			if err != nil {
				return
			}
			var after []int64
			for L, k := range st.Split {
				for range k {
					after = append(after, st.LayerPairs[L]/int64(k))
				}
			}
			for len(after) < avail {
				after = append(after, 0)
			}
			if want := lanes(log, "Approx. #paths per VL (after balancing)"); !slices.Equal(after, want) {
				t.Fatalf("pairs per VL after balancing %v, OpenSM %v", after, want)
			}
			if rep, err := verify(t, g, r, avail, false); err != nil {
				t.Fatalf("%v\n%s", err, rep)
			}
		})
	}
}
