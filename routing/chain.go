package routing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Attempt records one engine's try in a chain.
type Attempt struct {
	Engine string
	Err    error       // nil for the attempt that succeeded
	Report *cdg.Report // verifier report when the engine produced tables
	// Rejected holds the tables the verifier refused (nil otherwise), for
	// callers that study unsafe routings (flitsim run --unsafe).
	Rejected *lft.Routing
	// Route and Verify are the time the engine took and the time the
	// verifier took (0 when it did not run).
	Route, Verify time.Duration
}

// ErrChainFailed is wrapped when no engine of a chain produced safe tables.
var ErrChainFailed = errors.New("no engine produced a verified routing")

// RouteChain tries the engines in order and returns the first routing that
// the verifier accepts (delivery, no loops, VLs within opt.MaxVLs, acyclic
// CDG). An engine error or a routing that fails verification moves on to
// the next engine; every attempt is returned. Cancellation stops the chain.
func RouteChain(ctx context.Context, g *fabric.Graph, engines []Engine, opt Options) (*lft.Routing, *cdg.Report, []Attempt, error) {
	if err := opt.Validate(); err != nil {
		return nil, nil, nil, err
	}
	opt = opt.WithDefaults()
	var attempts []Attempt
	var errs []error
	for _, e := range engines {
		if err := ctx.Err(); err != nil {
			return nil, nil, attempts, err
		}
		t0 := time.Now()
		r, err := e.Route(ctx, g, opt)
		took := time.Since(t0)
		if err != nil {
			attempts = append(attempts, Attempt{Engine: e.Name(), Err: err, Route: took})
			errs = append(errs, err)
			if ctx.Err() != nil {
				return nil, nil, attempts, err
			}
			continue
		}
		if r.Engine == "" {
			r.Engine = e.Name()
		}
		t0 = time.Now()
		rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: opt.MaxVLs, Workers: opt.Workers})
		verify := time.Since(t0)
		if err != nil {
			if rep != nil && e.DeadlockFree() && rep.Cycle != nil {
				err = fmt.Errorf("%s: BUG: engine claims deadlock freedom but its tables fail verification: %w", e.Name(), err)
			} else {
				err = fmt.Errorf("%s: tables fail verification: %w", e.Name(), err)
			}
			attempts = append(attempts, Attempt{Engine: e.Name(), Err: err, Report: rep, Rejected: r, Route: took, Verify: verify})
			errs = append(errs, err)
			continue
		}
		attempts = append(attempts, Attempt{Engine: e.Name(), Report: rep, Route: took, Verify: verify})
		return r, rep, attempts, nil
	}
	return nil, nil, attempts, fmt.Errorf("routing: %w: %w", ErrChainFailed, errors.Join(errs...))
}
