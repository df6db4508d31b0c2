package routing

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Param describes one parameter of a configurable engine.
type Param struct {
	Name string
	// Values lists the accepted values, the default first; empty for a
	// parameter whose values the engine parses itself (DOR's dims).
	Values []string
	Doc    string
}

// Configurable is an Engine that takes parameters. The registry's
// factories return engines with their default configuration; Configure
// returns a copy with the given parameters, checked all at once, before
// any routing.
type Configurable interface {
	Engine
	// Params lists the parameters the engine knows, in a fixed order.
	Params() []Param
	// Configure returns the engine with params (name → value) applied. Its
	// errors name the engine, the parameter and the accepted values.
	Configure(params map[string]string) (Engine, error)
}

// ParamError reports a parameter an engine does not take or a value it
// does not accept.
type ParamError struct {
	Engine string
	Name   string
	Value  string
	// Accepted lists the accepted values, or, for an unknown name, the
	// parameters the engine knows.
	Accepted []string
	Unknown  bool // the engine has no parameter Name
}

func (e *ParamError) Error() string {
	if e.Unknown {
		if len(e.Accepted) == 0 {
			return fmt.Sprintf("%s: unknown parameter %q: the engine takes no parameters", e.Engine, e.Name)
		}
		return fmt.Sprintf("%s: unknown parameter %q, expected %s", e.Engine, e.Name, orList(e.Accepted))
	}
	if len(e.Accepted) == 0 {
		return fmt.Sprintf("%s: parameter %s: bad value %q", e.Engine, e.Name, e.Value)
	}
	return fmt.Sprintf("%s: parameter %s: unknown value %q, expected %s", e.Engine, e.Name, e.Value, orList(e.Accepted))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// CheckParams is the shared part of Configure: every name in params must
// be one of known, and every value one of its Values (when it lists
// them). It returns the first problem in name order.
func CheckParams(engine string, known []Param, params map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(params)) {
		v := params[name]
		i := slices.IndexFunc(known, func(p Param) bool { return p.Name == name })
		if i < 0 {
			names := make([]string, len(known))
			for j, p := range known {
				names[j] = p.Name
			}
			return &ParamError{Engine: engine, Name: name, Value: v, Accepted: names, Unknown: true}
		}
		if vals := known[i].Values; len(vals) > 0 && !slices.Contains(vals, v) {
			return &ParamError{Engine: engine, Name: name, Value: v, Accepted: vals}
		}
	}
	return nil
}

// EngineSpec is one element of a chain spec: an engine name and its
// parameters, "nue:partition=locality:share=none".
type EngineSpec struct {
	Name   string
	Params map[string]string
}

// ParseSpec splits a chain spec into its engines. ',' separates the
// engines of the chain (tried in order), ':' an engine's name from its
// parameters and the parameters from each other:
//
//	nue:partition=locality:share=none,dfsssp:vlbalance=off,updn
//
// A parameter value may hold an engine spec in parentheses, whose ':' are
// its own (best:of=nue+(nue:share=switchlid)); ',' always separates the
// engines of the chain, so every tool that splits chains at ',' keeps
// doing so. Spaces around the parts are ignored. An empty chain, an empty
// engine name, a parameter without '=' or given twice for one engine and
// unbalanced parentheses are errors.
func ParseSpec(spec string) ([]EngineSpec, error) {
	var out []EngineSpec
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields, err := splitTop(part, ':')
		if err != nil {
			return nil, fmt.Errorf("routing: engine spec %q: %v", part, err)
		}
		es := EngineSpec{Name: strings.TrimSpace(fields[0])}
		if es.Name == "" {
			return nil, fmt.Errorf("routing: engine spec %q: no engine name before ':'", part)
		}
		if strings.ContainsAny(es.Name, "()") {
			return nil, fmt.Errorf("routing: engine spec %q: parentheses hold an engine with parameters inside best's of, e.g. best:of=nue+(nue:share=switchlid)", part)
		}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, fmt.Errorf("routing: engine spec %q: parameter %q, expected name=value", part, f)
			}
			if es.Params == nil {
				es.Params = map[string]string{}
			}
			if _, dup := es.Params[k]; dup {
				return nil, fmt.Errorf("routing: engine spec %q: parameter %s given twice", part, k)
			}
			es.Params[k] = v
		}
		out = append(out, es)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("routing: empty engine chain %q", spec)
	}
	return out, nil
}

// splitTop splits s at every sep outside parentheses.
func splitTop(s string, sep byte) ([]string, error) {
	var out []string
	depth, start, open := 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth == 0 {
				open = i
			}
			depth++
		case ')':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("')' at column %d has no '('", i+1)
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("'(' at column %d is not closed (inside the parentheses ':' separates the parameters; ',' separates the engines of a chain)", open+1)
	}
	return append(out, s[start:]), nil
}

// ParseParam splits a "name=value" parameter (the --param flag).
func ParseParam(s string) (name, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", fmt.Errorf("parameter %q, expected name=value", s)
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), nil
}

// NewChain builds the configured engines of a chain spec (see ParseSpec).
// Shared parameters (--param, the daemon's [params] table) go to every
// engine of the chain that knows their name; a name that no engine of the
// chain knows is an error, and a parameter in an engine's own spec
// overrides a shared one. Every problem shows here, before any routing.
func NewChain(spec string, shared map[string]string) ([]Engine, error) {
	specs, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	var out []Engine
	for _, es := range specs {
		e, err := Lookup(es.Name)
		if err != nil {
			if strings.ContainsAny(es.Name[:1], "0123456789") {
				err = fmt.Errorf("%w (',' separates the engines of a chain; list values take 'x', e.g. dims=8x8x4)", err)
			}
			return nil, err
		}
		params := map[string]string{}
		if c, ok := e.(Configurable); ok {
			for _, p := range c.Params() {
				if v, ok := shared[p.Name]; ok {
					params[p.Name] = v
					used[p.Name] = true
				}
			}
		}
		maps.Copy(params, es.Params)
		if e, err = Configure(e, params); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	for _, name := range slices.Sorted(maps.Keys(shared)) {
		if !used[name] {
			return nil, fmt.Errorf("routing: parameter %s=%s: no engine of the chain %q takes %q%s", name, shared[name], spec, name, chainParams(out))
		}
	}
	return out, nil
}

// Configure applies params to e; an engine that is not Configurable takes
// none.
func Configure(e Engine, params map[string]string) (Engine, error) {
	if len(params) == 0 {
		return e, nil
	}
	c, ok := e.(Configurable)
	if !ok {
		return nil, CheckParams(e.Name(), nil, params)
	}
	return c.Configure(params)
}

// chainParams lists the parameters the engines take, for an error message.
func chainParams(engines []Engine) string {
	var parts []string
	for _, e := range engines {
		c, ok := e.(Configurable)
		if !ok {
			continue
		}
		var names []string
		for _, p := range c.Params() {
			names = append(names, p.Name)
		}
		parts = append(parts, e.Name()+" takes "+strings.Join(names, ", "))
	}
	if len(parts) == 0 {
		return " (its engines take no parameters)"
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// ParamsHelp describes the parameters of every registered engine that
// takes any, for command help: engines with the same parameters (sar-nue
// and nue) share one entry.
func ParamsHelp() string {
	var order []string
	engines := map[string][]string{}
	for _, name := range Names() {
		e, _ := Lookup(name)
		c, ok := e.(Configurable)
		if !ok {
			continue
		}
		var b strings.Builder
		for _, p := range c.Params() {
			vals := "VALUE"
			if len(p.Values) > 0 {
				vals = strings.Join(p.Values, "|")
			}
			fmt.Fprintf(&b, "    %s=%s  %s\n", p.Name, vals, p.Doc)
		}
		if engines[b.String()] == nil {
			order = append(order, b.String())
		}
		engines[b.String()] = append(engines[b.String()], name)
	}
	var out strings.Builder
	for _, params := range order {
		fmt.Fprintf(&out, "  %s:\n%s", strings.Join(engines[params], ", "), params)
	}
	return out.String()
}
