package routing

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
// an engine with parameters written as its spec in parentheses, so that
// two parameter sets of one engine compete
// (best:of=nue+(nue:share=switchlid)); and "by", the criterion: maxload
// (default: the most CA-to-LID paths on one channel, routing.Measure's
// MaxEFI, which bounds the throughput of uniform and all-to-all traffic)
// or hops (the average path length), each with the other breaking ties.
type Best struct {
	// Of holds the engines' specs in the ordinary form
	// ("nue:share=switchlid"), which names the routing Best returns.
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
		{Name: "of", Doc: "engines to compare, joined by '+'; one with parameters as its spec in parentheses: nue+(nue:share=switchlid)"},
		{Name: "by", Values: []string{ByMaxLoad, ByHops}, Doc: "the criterion: max channel load or average hops"},
	}
}

// Configure returns Best with params applied (Configurable).
func (b Best) Configure(params map[string]string) (Engine, error) {
	if err := CheckParams("best", b.Params(), params); err != nil {
		var pe *ParamError
		if errors.As(err, &pe) && pe.Unknown {
			return nil, fmt.Errorf("%w (an engine with parameters goes into of as its spec in parentheses: of=nue+(nue:share=switchlid))", err)
		}
		return nil, err
	}
	if v, ok := params["of"]; ok {
		of, err := parseMembers(v)
		if err != nil {
			return nil, fmt.Errorf("best: parameter of=%s: %w", v, err)
		}
		b.Of = of
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
		e, err := memberEngine(name)
		if err != nil {
			return nil, err
		}
		inner := opt
		inner.KeepState = false // the chain verifies the best one again
		r, _, a := try(ctx, g, e, inner)
		if a.Err != nil {
			if name != e.Name() {
				a.Err = fmt.Errorf("%s: %w", name, a.Err)
			}
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
		return nil, fmt.Errorf("best: no engine of %s produced a verified routing: %w", joinMembers(b.Of), errors.Join(errs...))
	}
	return best, nil
}

// parseMembers reads best's "of": engines joined by '+', each a bare name
// or an engine spec in parentheses, "nue+(nue:share=switchlid:partition=locality)".
// It returns the members' specs in the ordinary form, the parameters in
// name order. Best itself, an unknown engine or parameter and the same
// engine twice with the same parameters (defaults filled in) are errors.
func parseMembers(of string) ([]string, error) {
	parts, err := splitTop(of, '+')
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]string{} // the full configuration → the member as given
	for i, p := range parts {
		p = strings.TrimSpace(p)
		es, err := memberSpec(p)
		if err != nil {
			return nil, fmt.Errorf("engine %d %q: %w", i+1, p, err)
		}
		e, err := Lookup(es.Name)
		if err != nil {
			return nil, fmt.Errorf("engine %d: %w", i+1, err)
		}
		if _, err := Configure(e, es.Params); err != nil {
			return nil, fmt.Errorf("engine %d %q: %w", i+1, p, err)
		}
		full := specString(es.Name, withDefaults(e, es.Params))
		if prev, dup := seen[full]; dup {
			return nil, fmt.Errorf("engines %q and %q are the same engine with the same parameters (%s)", prev, p, full)
		}
		seen[full] = p
		out = append(out, specString(es.Name, es.Params))
	}
	return out, nil
}

// memberSpec parses one member of best's "of".
func memberSpec(p string) (EngineSpec, error) {
	switch {
	case p == "":
		return EngineSpec{}, fmt.Errorf("no engine name, expected NAME or (NAME:PARAM=VALUE...) between the '+'")
	case strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")"):
		inner := strings.TrimSpace(p[1 : len(p)-1])
		if strings.Contains(inner, ",") {
			return EngineSpec{}, fmt.Errorf("one engine per parentheses, its parameters joined by ':', e.g. (nue:share=switchlid:partition=locality)")
		}
		specs, err := ParseSpec(inner)
		if err != nil {
			return EngineSpec{}, err
		}
		if specs[0].Name == "best" {
			return EngineSpec{}, fmt.Errorf("best cannot compare itself")
		}
		return specs[0], nil
	case strings.ContainsAny(p, "():="):
		return EngineSpec{}, fmt.Errorf("an engine with parameters goes in parentheses, e.g. (nue:share=switchlid)")
	case p == "best":
		return EngineSpec{}, fmt.Errorf("best cannot compare itself")
	}
	return EngineSpec{Name: p}, nil
}

// memberEngine builds the engine of a member spec that parseMembers
// returned.
func memberEngine(spec string) (Engine, error) {
	chain, err := NewChain(spec, nil)
	if err != nil {
		return nil, fmt.Errorf("best: %w", err)
	}
	return chain[0], nil
}

// withDefaults adds the default of every parameter of e that params does
// not set and whose values e lists.
func withDefaults(e Engine, params map[string]string) map[string]string {
	out := maps.Clone(params)
	c, ok := e.(Configurable)
	if !ok {
		return out
	}
	for _, p := range c.Params() {
		if _, set := out[p.Name]; !set && len(p.Values) > 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[p.Name] = p.Values[0]
		}
	}
	return out
}

// specString writes an engine spec in the ordinary form, the parameters in
// name order: "nue:partition=locality:share=switchlid".
func specString(name string, params map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		fmt.Fprintf(&b, ":%s=%s", k, params[k])
	}
	return b.String()
}

// joinMembers writes member specs back in the form of best's "of".
func joinMembers(specs []string) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s
		if strings.Contains(s, ":") {
			parts[i] = "(" + s + ")"
		}
	}
	return strings.Join(parts, "+")
}
