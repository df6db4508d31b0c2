package deploy

import (
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// TestHeldSLsOfAnotherFabric stages a generation of the 3-level fat tree
// k=4 (LIDs 1-112, SLs per destination), then takes what the switches
// hold for a generation of a fabric with fewer LIDs (the 2-level fat
// tree, LIDs 1-24), as a rollout after a discovery that lost hosts does:
// the held state must carry the staged SLs of its own LIDs only, so that
// its steps stage. An SL table of the staged file's 113 entries beside
// 25-entry LFTs fails every step ("SL table has 113 destination …
// entries, expected 25").
func TestHeldSLsOfAnotherFabric(t *testing.T) {
	lids := func(n, k int) *fabric.Graph {
		tp, err := topo.FatTree(n, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := tp.Fabric.AssignLIDs(0); err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	big, small := lids(4, 3), lids(4, 2)
	if big.MaxLID() <= small.MaxLID() {
		t.Fatalf("fabrics of %d and %d LIDs", big.MaxLID(), small.MaxLID())
	}
	dir := t.TempDir()
	d := &Deployer{cfg: Config{StateDir: dir, QoSPolicyFile: dir + "/qos-policy.conf", LFTsFile: dir + "/opensm-lfts.dump"}}
	r := lft.New(big, "nue")
	r.NumVLs = 2
	for lid := 1; lid <= big.MaxLID(); lid++ {
		r.SL.ByDest[lid] = uint8(lid % 2)
	}
	if err := d.stage(big, r); err != nil {
		t.Fatal(err)
	}
	held := lft.New(small, "held")
	d.heldSLs(small, held)
	if len(held.SL.ByDest) != held.Stride || held.NumVLs != 2 {
		t.Fatalf("held: %d SL entries for %d LIDs, %d VLs", len(held.SL.ByDest), held.Stride, held.NumVLs)
	}
	for lid := 1; lid <= small.MaxLID(); lid++ {
		if held.SL.ByDest[lid] != uint8(lid%2) {
			t.Fatalf("LID %d: held SL %d, staged %d", lid, held.SL.ByDest[lid], lid%2)
		}
	}
	if err := d.stage(small, held); err != nil && strings.Contains(err.Error(), "SL table") {
		t.Fatalf("the held state does not stage: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}
