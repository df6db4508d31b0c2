// Package routing defines the routing engine contract (Engine, Options),
// the registry of engines by name, the fallback chain, the metrics of a
// routing, and the baseline engines (MinHop, Up*/Down*, DOR, LASH,
// fat-tree). Engines are pure: a compiled fabric and options in, an
// lft.Routing out; no I/O, no clock, no global randomness.
package routing

import (
	"context"
	"errors"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Engine computes a routing for a fabric. Implementations must be safe for
// concurrent use by several goroutines (keep state per call) and
// deterministic: equal inputs give byte-identical routings.
type Engine interface {
	// Name is the registry name, e.g. "dfsssp".
	Name() string
	// DeadlockFree reports whether the engine claims deadlock freedom; such
	// an engine returns an error rather than a routing with a CDG cycle.
	DeadlockFree() bool
	// Route computes the routing. It honours ctx cancellation between
	// units of work and returns a *VLError when it needs more VLs than
	// opt.MaxVLs, and an error wrapping ErrNotApplicable when the fabric
	// does not have the shape the engine needs.
	Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error)
}

// ErrNotApplicable is wrapped by errors of engines that refuse a fabric's
// shape (DOR on a fat tree, fat-tree routing on a torus…).
var ErrNotApplicable = errors.New("engine not applicable to this fabric")

// ErrNeedVLs is wrapped by every VLError.
var ErrNeedVLs = errors.New("needs more VLs than allowed")

// VLError reports that an engine needs more VLs than the limit.
type VLError struct {
	Engine string
	Needed int // VLs the engine would need (a lower bound when it stopped early)
	Limit  int
}

func (e *VLError) Error() string {
	return fmt.Sprintf("%s: needed %d VLs, limit is %d", e.Engine, e.Needed, e.Limit)
}

// Is makes errors.Is(err, ErrNeedVLs) true.
func (e *VLError) Is(target error) bool { return target == ErrNeedVLs }

// NotApplicable returns an error wrapping ErrNotApplicable.
func NotApplicable(engine, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", engine, fmt.Sprintf(format, args...), ErrNotApplicable)
}
