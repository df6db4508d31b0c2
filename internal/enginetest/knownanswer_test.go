package enginetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestDFSSSPTorus8x8x8 is the known answer: on the 8×8×8 torus
// with 4 CAs per switch DFSSSP needs more than 8 VLs (OpenSM's DFSSSP
// needs 9), so with the default limit of 8 it must refuse with a VLError
// whose Needed is at least 9.
func TestDFSSSPTorus8x8x8(t *testing.T) {
	if testing.Short() {
		t.Skip("a second or more per engine run; skipped with -short")
	}
	tp, err := topo.Torus([]int{8, 8, 8}, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	e, err := routing.Lookup("dfsssp")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 8})
	var ve *routing.VLError
	if r != nil || !errors.As(err, &ve) || !errors.Is(err, routing.ErrNeedVLs) || ve.Needed < 9 || ve.Limit != 8 || ve.Engine != "dfsssp" {
		t.Fatalf("dfsssp on the 8×8×8 torus: tables %v, err %v; want a VLError with Needed >= 9, Limit 8", r != nil, err)
	}
	t.Logf("dfsssp refuses in %v: %v", time.Since(start).Round(time.Millisecond), err)
}
