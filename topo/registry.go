package topo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Param documents one generator parameter for the CLI.
type Param struct {
	Name    string // flag name, e.g. "dims"
	Default string // default value as text ("" = required)
	Help    string
}

// Generator describes a topology kind for the CLI: its parameters and how
// to build it from their text values.
type Generator struct {
	Kind    string
	Short   string // one-line description
	Example string // example flags, e.g. "--dims 4x4x4 --hosts 2"
	Params  []Param
	Build   func(v Values) (*Topology, error)
}

var registry = map[string]Generator{}

// register adds a generator kind; generators register from init.
func register(g Generator) {
	if _, dup := registry[g.Kind]; dup {
		panic("topo: generator registered twice: " + g.Kind)
	}
	registry[g.Kind] = g
}

// Generators lists the registered kinds, sorted by name.
func Generators() []Generator {
	out := make([]Generator, 0, len(registry))
	for _, g := range registry {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Lookup finds a generator by kind.
func Lookup(kind string) (Generator, bool) {
	g, ok := registry[kind]
	return g, ok
}

// Generate builds a topology of the given kind from text parameters
// (missing ones take their defaults; unknown ones are an error).
func Generate(kind string, params map[string]string) (*Topology, error) {
	g, ok := registry[kind]
	if !ok {
		kinds := make([]string, 0, len(registry))
		for k := range registry {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		return nil, fmt.Errorf("topo: unknown kind %q, expected one of %s", kind, strings.Join(kinds, ", "))
	}
	v := Values{kind: kind, m: map[string]string{}, err: new(error)}
	known := map[string]bool{}
	for _, p := range g.Params {
		known[p.Name] = true
		if p.Default != "" {
			v.m[p.Name] = p.Default
		}
	}
	for k, val := range params {
		if !known[k] {
			return nil, fmt.Errorf("topo: %s: unknown parameter %q", kind, k)
		}
		v.m[k] = val
	}
	return g.Build(v)
}

// Values holds text parameters; its getters record the first parse error,
// returned by Err, so a Build function can read all parameters then check
// once.
type Values struct {
	kind string
	m    map[string]string
	err  *error
}

func (v *Values) fail(name, val, want string) {
	if v.err == nil {
		v.err = new(error)
	}
	if *v.err == nil {
		*v.err = fmt.Errorf("topo: %s: --%s %q: expected %s", v.kind, name, val, want)
	}
}

// Err returns the first parameter error.
func (v *Values) Err() error {
	if v.err == nil {
		return nil
	}
	return *v.err
}

// Has reports whether a parameter has a value.
func (v *Values) Has(name string) bool { _, ok := v.m[name]; return ok }

// String returns a parameter's text.
func (v *Values) String(name string) string { return v.m[name] }

// Int parses an integer parameter.
func (v *Values) Int(name string) int {
	s, ok := v.m[name]
	if !ok {
		v.fail(name, "", "a value (required)")
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		v.fail(name, s, "an integer")
	}
	return n
}

// Float parses a floating-point parameter.
func (v *Values) Float(name string) float64 {
	s, ok := v.m[name]
	if !ok {
		v.fail(name, "", "a value (required)")
		return 0
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		v.fail(name, s, "a number")
	}
	return x
}

// Uint64 parses an unsigned parameter (seeds).
func (v *Values) Uint64(name string) uint64 {
	s, ok := v.m[name]
	if !ok {
		v.fail(name, "", "a value (required)")
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		v.fail(name, s, "an unsigned integer")
	}
	return n
}

// Bool parses a boolean parameter.
func (v *Values) Bool(name string) bool {
	s, ok := v.m[name]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		v.fail(name, s, "true or false")
	}
	return b
}

// Ints parses a list like "4x4x4", "4,4,4" or "4" (separators x or ,).
func (v *Values) Ints(name string) []int {
	s, ok := v.m[name]
	if !ok {
		v.fail(name, "", "a value (required)")
		return nil
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == ',' || r == 'X' })
	if len(fields) == 0 {
		v.fail(name, s, "a list of integers such as 4x4x4 or 4,4,4")
		return nil
	}
	out := make([]int, len(fields))
	for i, f := range fields {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			v.fail(name, s, "a list of integers such as 4x4x4 or 4,4,4")
			return nil
		}
		out[i] = n
	}
	return out
}
