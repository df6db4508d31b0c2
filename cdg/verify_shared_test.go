package cdg_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
)

// shareTrees makes many destinations of r share the paths of another
// destination on their switch, as Nue's shared searches and the LIDs of
// one port do, so that the verifier's walkers meet trees they settled
// before: a LID copies the entries and SLs of an earlier LID on its
// switch at every other switch, and some copies then differ in one entry
// or one SL (a tree that merely looks shared).
func shareTrees(g *fabric.Graph, r *lft.Routing, rng *rand.Rand) {
	S := int32(g.NumSwitches())
	first := make([]int, S) // per switch: its first LID with a tree, 0 none
	for lid := 1; lid <= g.MaxLID(); lid++ {
		dsw, _, _ := lft.Target(g, lid)
		if dsw < 0 {
			continue
		}
		d0 := first[dsw]
		if d0 == 0 {
			first[dsw] = lid
			continue
		}
		if rng.IntN(4) == 0 {
			continue
		}
		for x := int32(0); x < S; x++ {
			if x != dsw {
				r.SetPort(x, lid, r.Port(x, d0))
			}
			if r.SL.BySrc != nil {
				r.SL.SrcRow(x)[lid] = r.SL.SrcRow(x)[d0]
			}
		}
		if rng.IntN(2) == 0 {
			r.SL.ByDest[lid] = r.SL.ByDest[d0]
		}
		switch x := rng.Int32N(S); rng.IntN(6) {
		case 0: // another port
			r.SetPort(x, lid, uint8(rng.IntN(g.F.Nodes[g.Switches[x]].NumPorts()+1)))
		case 1:
			r.SetPort(x, lid, lft.NoPort)
		case 2:
			if r.SL.BySrc != nil {
				r.SL.SrcRow(x)[lid] ^= 1
			}
		}
	}
}

// TestVerifySharedTreesAgainstReference is TestVerifyAgainstReference on
// routings whose destinations often share their switch's trees (see
// shareTrees), with every option drawn at random; the report must not
// depend on the workers either.
func TestVerifySharedTreesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 5))
	trials := 60
	if testing.Short() {
		trials = 15
	}
	var cyclic, undelivered int
	for _, fc := range refFabrics(t) {
		t.Run(fc.name, func(t *testing.T) {
			for trial := range trials {
				rep := sharedTrial(t, fc.g, rng)
				if t.Failed() {
					t.Fatalf("trial %d:\n%s", trial, rep)
				}
				cyclic += b2i(rep.Cycle != nil)
				undelivered += b2i(rep.Delivered < rep.Pairs)
			}
		})
	}
	t.Logf("routings: %d cyclic, %d with undelivered pairs", cyclic, undelivered)
}

// sharedTrial verifies one random routing with shared trees against the
// reference, with random options and two worker counts.
func sharedTrial(t *testing.T, g *fabric.Graph, rng *rand.Rand) *cdg.Report {
	r := randomRouting(g, rng)
	shareTrees(g, r, rng)
	opt := cdg.Options{
		SwitchSources: rng.IntN(3) == 0, SwitchDelivery: rng.IntN(2) == 0,
		MaxExamples: 1 + rng.IntN(12), Workers: 1 + rng.IntN(4),
	}
	rep, err := cdg.Verify(g, r, opt)
	if rep == nil {
		t.Fatal(err)
	}
	ref := enginetest.Reference(g, r, enginetest.RefOptions{SwitchSources: opt.SwitchSources, SwitchDelivery: opt.SwitchDelivery})
	compareWithReference(t, g, rep, ref, opt.MaxExamples)
	other := opt
	other.Workers = 5 - opt.Workers
	if rep2, _ := cdg.Verify(g, r, other); !reflect.DeepEqual(rep, rep2) {
		t.Errorf("options %+v: the report changes with the number of workers:\n%s\n%s", opt, rep, rep2)
	}
	return rep
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
