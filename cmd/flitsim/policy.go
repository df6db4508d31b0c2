package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/studies/novacube"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// policyFlags choose the per-hop routing policy (flitsim.RoutingPolicy).
type policyFlags struct {
	policy    string // a spec list, see policyNames
	vcPolicy  string
	threshold float64
	ugalBias  float64
	minimal   string
}

// policyNames are the routing policies a spec may name.
var policyNames = []string{"lft", "min", "lar", "lar-toward", "val", "ugal", "conditional", "pora-literal", "pora-minimal"}

func (pf *policyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&pf.policy, "policy", "lft", "per-hop routing policy: "+strings.Join(policyNames, ", ")+
		"; POLICY+VC sets its VC policy (e.g. lar+hops:7); sweep: a comma-separated list, each simulated with every engine")
	fl.StringVar(&pf.vcPolicy, "vc-policy", "", "VC policy of every hop (vcpolicy: one-vc, rsi-paper, phase, global-hops, df-2vc, df-per-class, hops:N or vcs=…); default SL2VL")
	fl.Float64Var(&pf.threshold, "lar-threshold", 0.6, "LAR's Th and the conditional rules' pause level, fraction of an input buffer")
	fl.Float64Var(&pf.ugalBias, "ugal-bias", 0, "UGAL: flits added to the Valiant side")
	fl.StringVar(&pf.minimal, "minimal", "two-level", "minimal ports with switch groups: two-level (RSI tables, never through a third group) or shortest (every shortest path)")
}

// specs splits the --policy list.
func (pf *policyFlags) specs() ([]string, error) {
	var out []string
	for _, s := range strings.Split(pf.policy, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		name, _, _ := strings.Cut(s, "+")
		ok := false
		for _, n := range policyNames {
			ok = ok || n == name
		}
		if !ok {
			return nil, fmt.Errorf("--policy %q, expected one of %s (optionally +VC)", name, strings.Join(policyNames, ", "))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--policy: empty")
	}
	return out, nil
}

// plain reports whether spec leaves the network as it is (the LFT with
// SL2VL, byte-identical to no policy).
func (pf *policyFlags) plain(spec string) bool { return spec == "lft" && pf.vcPolicy == "" }

// apply returns n routed by spec.
func (pf *policyFlags) apply(n *flitsim.Network, l *loaded, spec string) (*flitsim.Network, error) {
	if pf.plain(spec) {
		return n, nil
	}
	name, vc, hasVC := strings.Cut(spec, "+")
	if !hasVC {
		vc = pf.vcPolicy
	}
	p := flitsim.RoutingPolicy{Groups: l.groups, Threshold: pf.threshold, UGALBias: pf.ugalBias}
	switch name {
	case "lar-toward":
		p.Kind, p.LARToward = flitsim.RouteLAR, true
	case "pora-literal", "pora-minimal":
		p.Kind, p.Variant = flitsim.RoutePORA, novacube.Variant(strings.TrimPrefix(name, "pora-"))
		c, err := cubeOf(l)
		if err != nil {
			return nil, err
		}
		p.Cube = c
	default:
		k, err := flitsim.ParseRoutingKind(name)
		if err != nil {
			return nil, err
		}
		p.Kind = k
	}
	if vc != "" {
		v, err := vcpolicy.Parse(vc)
		if err != nil {
			return nil, err
		}
		p.VC = &v
	}
	switch pf.minimal {
	case "shortest":
	case "two-level":
		if l.groups != nil && p.Kind != flitsim.RoutePORA && p.Kind != flitsim.RouteLFT {
			t, err := rsi.Build(l.g, l.groups)
			if err != nil {
				return nil, err
			}
			p.Tables = t
		}
	default:
		return nil, fmt.Errorf("--minimal %q, expected two-level or shortest", pf.minimal)
	}
	return n.WithRouting(p)
}

// cubeOf returns the NovaCube a generated novacube fabric is.
func cubeOf(l *loaded) (*novacube.Cube, error) {
	if l.kind != "novacube" || len(l.coords) == 0 {
		return nil, fmt.Errorf("PORA needs a fabric made by --gen novacube")
	}
	k := 0
	for _, c := range l.coords {
		for _, x := range c {
			k = max(k, x+1)
		}
	}
	return novacube.NewCube(k, len(l.coords[0]), true)
}
