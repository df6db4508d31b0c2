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
	Err    error       // nil for the attempt whose tables were accepted
	Report *cdg.Report // verifier report when the engine produced tables
	// Route and Verify are the time the engine took and the time the
	// verifier took (0 when it did not run).
	Route, Verify time.Duration
}

// Result is what an engine chain produced: the accepted routing, its
// verifier report and every engine tried, in order (the last one
// produced Routing).
type Result struct {
	Routing  *lft.Routing
	Report   *cdg.Report
	Attempts []Attempt
	// State is the verifier's State of Routing with Options.KeepState
	// (nil without it, or when the routing allows none: cdg.VerifyState).
	State *cdg.State
}

// ErrChainFailed is wrapped when no engine of a chain produced safe tables.
var ErrChainFailed = errors.New("no engine produced a verified routing")

// CADelivery is implemented by engines whose delivery promise covers the
// packets of CA and router ports only, not those a switch sends from its
// own port 0 (Ftree: two top switches of a fat tree have no up*/down*
// route to each other, and OpenSM's ftree leaves them out too).
type CADelivery interface {
	CADeliveryOnly() bool
}

// VerifyOptions is the one definition of verified tables that nuesm
// route, the daemon and every other publisher use, for tables of engine
// e (nil: unknown): every connected pair of CA and router ports
// delivered; every switch's own packets delivered too (management
// traffic: traps to the subnet manager, performance queries) unless e
// promises CA traffic only (CADelivery); no loops, no dead ends; VLs
// within opt.MaxVLs (0: DefaultMaxVLs); an acyclic channel dependency
// graph per VL.
func VerifyOptions(e Engine, opt Options) cdg.Options {
	opt = opt.WithDefaults()
	caOnly := false
	if c, ok := e.(CADelivery); ok {
		caOnly = c.CADeliveryOnly()
	}
	return cdg.Options{MaxVLs: opt.MaxVLs, SwitchDelivery: !caOnly, Workers: opt.Workers}
}

// Verify checks r, the tables of engine e, against g with
// VerifyOptions(e, opt).
func Verify(g *fabric.Graph, r *lft.Routing, e Engine, opt Options) (*cdg.Report, error) {
	return cdg.Verify(g, r, VerifyOptions(e, opt))
}

// VerifyState is Verify that also keeps the verifier's State
// (cdg.VerifyState), when st is nil, or verifies against st, the State
// of the tables r repairs (cdg.State.Verify): the same report either way.
func VerifyState(g *fabric.Graph, r *lft.Routing, e Engine, opt Options, st *cdg.State) (*cdg.Report, *cdg.State, error) {
	if st == nil {
		return cdg.VerifyState(g, r, VerifyOptions(e, opt))
	}
	return st.Verify(g, r, VerifyOptions(e, opt))
}

// RouteChain tries the engines in order and returns the first routing
// that Verify accepts. An engine error or a routing that fails
// verification moves on to the next engine. The Result is never nil: it
// lists every attempt, also when the chain fails (then with a nil
// Routing). Cancellation stops the chain.
func RouteChain(ctx context.Context, g *fabric.Graph, engines []Engine, opt Options) (*Result, error) {
	return routeChain(ctx, g, engines, opt, false)
}

// RouteUnverified returns the first tables an engine of the chain
// produces, verified or not: Result.Report says what the verifier found
// (nil when it could not check the tables at all) and the attempt's Err
// keeps its verdict. It is for simulating deadlock-prone routings, never for
// publishing tables.
func RouteUnverified(ctx context.Context, g *fabric.Graph, engines []Engine, opt Options) (*Result, error) {
	return routeChain(ctx, g, engines, opt, true)
}

func routeChain(ctx context.Context, g *fabric.Graph, engines []Engine, opt Options, unverified bool) (*Result, error) {
	res := &Result{}
	if err := opt.Validate(); err != nil {
		return res, err
	}
	opt = autoWorkers(g, opt).WithDefaults()
	var errs []error
	for _, e := range engines {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		r, st, a := try(ctx, g, e, opt)
		res.Attempts = append(res.Attempts, a)
		if a.Err == nil || (unverified && r != nil) {
			res.Routing, res.Report, res.State = r, a.Report, st
			return res, nil
		}
		errs = append(errs, a.Err)
		if r == nil && ctx.Err() != nil {
			return res, a.Err
		}
	}
	return res, fmt.Errorf("routing: %w: %w", ErrChainFailed, errors.Join(errs...))
}

// smallTables is the size of a fabric's tables (switches × LIDs) below
// which a chain with automatic workers routes and verifies on one
// goroutine: its engines and verifier then take a few milliseconds, and
// handing work to a second goroutine and waiting for it costs as much as
// it saves, or far more on a busy machine, where the second goroutine's
// thread may wait for a core.
const smallTables = 1 << 18

// SmallTables reports whether g's tables (switches × LIDs) are small:
// fewer than 2^18 entries, a routing of a few milliseconds.
func SmallTables(g *fabric.Graph) bool {
	return int64(g.NumSwitches())*int64(g.MaxLID()+1) < smallTables
}

// autoWorkers is opt with one worker when opt leaves the workers to the
// chain (0) and g's tables are small (SmallTables). Results never depend
// on the workers.
func autoWorkers(g *fabric.Graph, opt Options) Options {
	if opt.Workers == 0 && SmallTables(g) {
		opt.Workers = 1
	}
	return opt
}

// phase tells opt.Phase, when set, that the chain moves on.
func phase(opt Options, name string) {
	if opt.Phase != nil {
		opt.Phase(name)
	}
}

// try runs one engine and verifies its tables. The routing is returned
// whenever the engine produced one; the attempt's Err says whether it
// failed verification.
func try(ctx context.Context, g *fabric.Graph, e Engine, opt Options) (*lft.Routing, *cdg.State, Attempt) {
	a := Attempt{Engine: e.Name()}
	phase(opt, "routing "+e.Name())
	t0 := time.Now()
	r, err := e.Route(ctx, g, opt)
	a.Route = time.Since(t0)
	if err != nil {
		a.Err = err
		return nil, nil, a
	}
	if r.Engine == "" {
		r.Engine = e.Name()
	}
	phase(opt, "verifying "+e.Name())
	t0 = time.Now()
	var st *cdg.State
	if opt.KeepState {
		a.Report, st, err = VerifyState(g, r, e, opt, nil)
	} else {
		a.Report, err = Verify(g, r, e, opt)
	}
	a.Verify = time.Since(t0)
	switch {
	case err == nil:
	case a.Report != nil && e.DeadlockFree() && a.Report.Cycle != nil:
		a.Err = fmt.Errorf("%s: BUG: engine claims deadlock freedom but its tables fail verification: %w", e.Name(), err)
	default:
		a.Err = fmt.Errorf("%s: tables fail verification: %w", e.Name(), err)
	}
	return r, st, a
}
