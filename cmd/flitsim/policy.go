package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/flitsim"

	// The studies register their per-hop policies with flitsim: LAR and
	// the two-level tables (rsi), PORA (novacube), the VC rules (vcpolicy).
	_ "github.com/nuesm/nuesm/studies/novacube"
	_ "github.com/nuesm/nuesm/studies/rsi"
	_ "github.com/nuesm/nuesm/studies/vcpolicy"
)

// policyFlags choose the per-hop routing policy (flitsim.PolicySpec).
type policyFlags struct {
	policy    string // a spec list
	vcPolicy  string
	threshold float64
	ugalBias  float64
	minimal   string
}

func (pf *policyFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&pf.policy, "policy", "lft", "per-hop routing policy: "+strings.Join(flitsim.PolicyNames(), ", ")+
		"; POLICY+VC sets its VC policy (e.g. lar+hops:7); sweep: a comma-separated list, each simulated with every engine")
	fl.StringVar(&pf.vcPolicy, "vc-policy", "", "VC policy of every hop (vcpolicy: one-vc, rsi-paper, phase, global-hops, df-2vc, df-per-class, hops:N or vcs=…); default SL2VL")
	fl.Float64Var(&pf.threshold, "lar-threshold", flitsim.DefaultThreshold, "LAR's Th and the conditional rules' pause level, fraction of an input buffer")
	fl.Float64Var(&pf.ugalBias, "ugal-bias", 0, "UGAL: flits added to the Valiant side")
	fl.StringVar(&pf.minimal, "minimal", "two-level", "minimal ports with switch groups: two-level (RSI tables, never through a third group) or shortest (every shortest path)")
}

// specs splits the --policy list.
func (pf *policyFlags) specs() ([]flitsim.PolicySpec, error) {
	list, err := flitsim.ParsePolicies(pf.policy)
	if err != nil {
		return nil, err
	}
	out := make([]flitsim.PolicySpec, len(list))
	for i, s := range list {
		out[i] = flitsim.PolicySpec{Spec: s, VC: pf.vcPolicy}
	}
	return out, nil
}

// env is what the policies of a loaded fabric are built from.
func (pf *policyFlags) env(l *loaded) flitsim.PolicyEnv {
	return flitsim.PolicyEnv{Graph: l.g, Groups: l.groups, Kind: l.kind, Coords: l.coords,
		Threshold: pf.threshold, UGALBias: pf.ugalBias, MinimalName: pf.minimal}
}
