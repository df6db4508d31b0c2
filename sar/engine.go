package sar

import (
	"context"

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
	r, _, err := nue.Route(ctx, g, opt)
	if r != nil {
		r.Engine = "sar-nue"
	}
	return r, err
}
