package vcpolicy

import "github.com/nuesm/nuesm/flitsim"

// The simulator side: a Policy as a flitsim.VCPolicy, and Parse as
// flitsim's VC policy parser (so --vc-policy reads this package's specs).

func init() {
	flitsim.RegisterVCParser(func(spec string) (flitsim.VCPolicy, error) {
		p, err := Parse(spec)
		if err != nil {
			return nil, err
		}
		return ForSim(p)
	})
}

// ForSim returns p as a flitsim.VCPolicy, after Validate.
func ForSim(p Policy) (flitsim.VCPolicy, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return simPolicy{p}, nil
}

// simPolicy adapts a Policy (Hop is flitsim.VCHop).
type simPolicy struct{ p Policy }

func (s simPolicy) Name() string { return s.p.Name }

func (s simPolicy) NumVCs() int { return s.p.VCs }

// HopVC returns Want clamped to the top VC; overflow unless Clamp.
func (s simPolicy) HopVC(h flitsim.VCHop) (int, bool) {
	v := s.p.Want(h)
	if v < s.p.VCs {
		return v, false
	}
	return s.p.VCs - 1, !s.p.Clamp
}
