package sar

import (
	"context"
	"errors"

	"github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
)

// NueEngine is "sar-nue": Nue with scheduling awareness. Without jobs it
// routes exactly like "nue".
type NueEngine struct{}

func init() {
	routing.Register("sar-nue", func() routing.Engine { return NueEngine{} })
}

// Name returns "sar-nue".
func (NueEngine) Name() string { return "sar-nue" }

// DeadlockFree reports true (Nue's guarantee does not depend on the order
// or the weights).
func (NueEngine) DeadlockFree() bool { return true }

// Route routes with Nue, intra-job destinations first and balancing on
// intra-job paths only (opt.Jobs).
func (NueEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	opt.SAR = true
	r, _, err := nue.Route(ctx, g, opt)
	if r != nil {
		r.Engine = "sar-nue"
	}
	return r, err
}

// DFSSSPEngine is "sar-dfsssp": DFSSSP with scheduling awareness, as the
// SAR paper built it. Without jobs it routes exactly like "dfsssp".
type DFSSSPEngine struct{}

func init() {
	routing.Register("sar-dfsssp", func() routing.Engine { return DFSSSPEngine{} })
}

// Name returns "sar-dfsssp".
func (DFSSSPEngine) Name() string { return "sar-dfsssp" }

// DeadlockFree reports true (the layering does not depend on the order).
func (DFSSSPEngine) DeadlockFree() bool { return true }

// Route routes with DFSSSP, intra-job destinations first and balancing on
// intra-job paths only (opt.Jobs).
func (DFSSSPEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	opt.SAR = true
	r, _, err := dfsssp.RouteDFSSSP(ctx, g, opt)
	if r != nil {
		r.Engine = "sar-dfsssp"
	}
	// Name the engine the admin chose in "needed N VLs", not the one inside.
	var vle *routing.VLError
	if errors.As(err, &vle) {
		e := *vle
		e.Engine = "sar-dfsssp"
		err = &e
	}
	return r, err
}
