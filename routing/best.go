package routing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Best is the engine "best": it routes with each of its engines, keeps the
// routings that pass Verify (every pair delivered, acyclic CDG per VL
// within the VL limit) and returns the one that scores best by a measured
// criterion, the first of equal ones. Unlike a chain, which takes the
// first verified routing, it answers "prefer the best verified of nue, dor
// and dfsssp": on a torus DOR's dimension order balances the all-to-all
// better than Nue's greedy, on a fat tree Nue's does, and DOR does not
// route around failed cables at all.
//
// Parameters: "of", the engines joined by '+' (default nue+dor+dfsssp),
// and "by", the criterion: maxload (default: the most CA-to-LID paths on
// one channel, routing.Measure's MaxEFI, which bounds the throughput of
// uniform and all-to-all traffic) or hops (the average path length), each
// with the other breaking ties.
type Best struct {
	Of []string
	By string
}

// Best's criteria.
const (
	ByMaxLoad = "maxload"
	ByHops    = "hops"
)

func init() {
	Register("best", func() Engine { return Best{Of: []string{"nue", "dor", "dfsssp"}, By: ByMaxLoad} })
}

// Name returns "best".
func (Best) Name() string { return "best" }

// DeadlockFree reports true: Best returns verified routings only.
func (Best) DeadlockFree() bool { return true }

// Params lists Best's parameters (Configurable).
func (Best) Params() []Param {
	return []Param{
		{Name: "of", Doc: "engines to compare, joined by '+'"},
		{Name: "by", Values: []string{ByMaxLoad, ByHops}, Doc: "the criterion: max channel load or average hops"},
	}
}

// Configure returns Best with params applied (Configurable).
func (b Best) Configure(params map[string]string) (Engine, error) {
	if err := CheckParams("best", b.Params(), params); err != nil {
		return nil, err
	}
	if v, ok := params["of"]; ok {
		b.Of = nil
		for _, n := range strings.Split(v, "+") {
			n = strings.TrimSpace(n)
			if n == "best" {
				return nil, &ParamError{Engine: "best", Name: "of", Value: v}
			}
			if _, err := Lookup(n); err != nil {
				return nil, fmt.Errorf("best: parameter of: %w", err)
			}
			b.Of = append(b.Of, n)
		}
	}
	if v, ok := params["by"]; ok {
		b.By = v
	}
	return b, nil
}

// Route routes g with every engine of b.Of and returns the best verified
// routing; its Engine field names the engine that made it. It fails when
// none of them produced a verified routing, with each one's reason.
func (b Best) Route(ctx context.Context, g *fabric.Graph, opt Options) (*lft.Routing, error) {
	var best *lft.Routing
	var bestScore [2]float64
	var errs []error
	for _, name := range b.Of {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		inner := opt
		inner.KeepState = false // the chain verifies the best one again
		r, _, a := try(ctx, g, e, inner)
		if a.Err != nil {
			errs = append(errs, a.Err)
			continue
		}
		m, err := Measure(g, r, opt.Workers)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		score := [2]float64{float64(m.MaxEFI), m.AvgHops}
		if b.By == ByHops {
			score = [2]float64{m.AvgHops, float64(m.MaxEFI)}
		}
		if best == nil || score[0] < bestScore[0] || score[0] == bestScore[0] && score[1] < bestScore[1] {
			best, bestScore = r, score
			best.Engine = name
		}
	}
	if best == nil {
		return nil, fmt.Errorf("best: no engine of %s produced a verified routing: %w", strings.Join(b.Of, "+"), errors.Join(errs...))
	}
	return best, nil
}
