package flitsim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nuesm/nuesm/fabric"
)

// Named policies, as the command line writes them: NAME[+VC]. Packages
// register what they implement (this package: lft, min, val, ugal,
// conditional and the shortest-path minimal relation; studies/rsi: lar,
// lar-toward and the two-level tables; studies/novacube: pora-literal,
// pora-minimal; studies/vcpolicy: the VC policies), so a binary offers
// the policies of the packages it imports.

// PolicyEnv is what a named policy is built from.
type PolicyEnv struct {
	Graph *fabric.Graph
	// Groups gives per switch its group (topo.Topology.Group), nil none.
	Groups []int
	// Kind and Coords are the generator kind and the coordinates of every
	// switch of a generated fabric ("" and nil for a dump).
	Kind   string
	Coords [][]int
	// Threshold is LAR's Th and Conditional's pause level (0: default).
	Threshold float64
	// UGALBias is added to the Valiant side of UGAL's comparison (flits).
	UGALBias float64
	// MinimalName names the registered minimal relation of the adaptive
	// policies on grouped fabrics (e.g. "two-level", "shortest").
	MinimalName string
}

// PolicyBuilder builds a registered policy.
type PolicyBuilder func(env PolicyEnv) (Policy, error)

// MinimalBuilder builds a registered minimal relation for a grouped
// fabric; nil with a nil error means every shortest path.
type MinimalBuilder func(g *fabric.Graph, groups []int) (Minimal, error)

var registry = struct {
	sync.Mutex
	policies map[string]PolicyBuilder
	minimals map[string]MinimalBuilder
	vc       func(spec string) (VCPolicy, error)
}{policies: map[string]PolicyBuilder{}, minimals: map[string]MinimalBuilder{}}

// RegisterPolicy makes a policy available by name. It panics when the
// name is taken (a programming error, caught at start-up).
func RegisterPolicy(name string, b PolicyBuilder) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.policies[name]; dup {
		panic("flitsim: policy " + name + " registered twice")
	}
	registry.policies[name] = b
}

// RegisterMinimal makes a minimal relation available by name; it panics
// when the name is taken.
func RegisterMinimal(name string, b MinimalBuilder) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.minimals[name]; dup {
		panic("flitsim: minimal relation " + name + " registered twice")
	}
	registry.minimals[name] = b
}

// RegisterVCParser sets the parser of VC policy specs; it panics when one
// is set.
func RegisterVCParser(parse func(spec string) (VCPolicy, error)) {
	registry.Lock()
	defer registry.Unlock()
	if registry.vc != nil {
		panic("flitsim: VC policy parser registered twice")
	}
	registry.vc = parse
}

// PolicyNames returns the registered policy names, sorted.
func PolicyNames() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Sorted(maps.Keys(registry.policies))
}

func init() {
	RegisterPolicy("lft", func(env PolicyEnv) (Policy, error) { return LFTPolicy{SwitchGroups: env.Groups}, nil })
	for k := MinAdaptive; k <= Conditional; k++ {
		RegisterPolicy(k.String(), func(env PolicyEnv) (Policy, error) {
			m, err := env.Minimal()
			if err != nil {
				return nil, err
			}
			return NewAdaptive(env.Graph, Adaptive{Kind: k, SwitchGroups: env.Groups, Minimal: m, Threshold: env.Threshold, UGALBias: env.UGALBias})
		})
	}
	RegisterMinimal("shortest", func(*fabric.Graph, []int) (Minimal, error) { return nil, nil })
}

// Minimal returns the minimal relation env names on a grouped fabric; nil
// (every shortest path) without groups.
func (env PolicyEnv) Minimal() (Minimal, error) {
	registry.Lock()
	b, ok := registry.minimals[env.MinimalName]
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("flitsim: minimal relation %q, expected one of %s: %w", env.MinimalName, strings.Join(minimalNames(), ", "), ErrConfig)
	}
	if env.Groups == nil {
		return nil, nil
	}
	return b(env.Graph, env.Groups)
}

func minimalNames() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Sorted(maps.Keys(registry.minimals))
}

// ParsePolicies splits a comma-separated list of NAME[+VC] specs and
// checks the names.
func ParsePolicies(list string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		name, _, _ := strings.Cut(s, "+")
		registry.Lock()
		_, ok := registry.policies[name]
		registry.Unlock()
		if !ok {
			return nil, fmt.Errorf("flitsim: policy %q, expected one of %s (optionally +VC): %w", name, strings.Join(PolicyNames(), ", "), ErrConfig)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("flitsim: empty policy list: %w", ErrConfig)
	}
	return out, nil
}

// PolicySpec is one NAME[+VC] spec with the settings of its list.
type PolicySpec struct {
	Spec string
	// VC is the VC policy of a spec without "+VC" ("" for SL2VL).
	VC string
}

// Plain reports whether the spec leaves a network as it is: the LFT with
// SL2VL, byte-identical to no policy (Network.Bound walks its paths).
func (ps PolicySpec) Plain() bool { return ps.Spec == "lft" && ps.VC == "" }

// Apply returns n routed by the spec (n itself when Plain).
func (ps PolicySpec) Apply(n *Network, env PolicyEnv) (*Network, error) {
	if ps.Plain() {
		return n, nil
	}
	name, vc, hasVC := strings.Cut(ps.Spec, "+")
	if !hasVC {
		vc = ps.VC
	}
	if _, err := (PolicyEnv{MinimalName: env.MinimalName}).Minimal(); err != nil {
		return nil, err // a bad name is an error whether or not it is used
	}
	registry.Lock()
	b, ok := registry.policies[name]
	parse := registry.vc
	registry.Unlock()
	if !ok {
		return nil, fmt.Errorf("flitsim: policy %q, expected one of %s: %w", name, strings.Join(PolicyNames(), ", "), ErrConfig)
	}
	if env.Graph == nil {
		env.Graph = n.g
	}
	p, err := b(env)
	if err != nil {
		return nil, err
	}
	var v VCPolicy
	if vc != "" {
		if parse == nil {
			return nil, fmt.Errorf("flitsim: VC policy %q: no VC policies registered: %w", vc, ErrConfig)
		}
		if v, err = parse(vc); err != nil {
			return nil, err
		}
	}
	return n.WithRouting(p, v)
}
