package vcpolicy

import (
	"reflect"
	"testing"
)

// FuzzParse: the policy parser never panics; what it accepts is valid and
// its name parses to the same policy.
func FuzzParse(f *testing.F) {
	for _, p := range Presets() {
		f.Add(p.Name)
	}
	for _, s := range []string{"hops:3", "hops:0", "hops:-1", "hops:99999999999", "vcs=2,local=hops,global=hops,clamp",
		"vcs=3,local=global+1,global=hops", "vcs=x", "local=,global=", "vcs=2,local=nope,global=hops", "=,="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q accepted but invalid: %v", s, err)
		}
		back, err := Parse(p.Name)
		if err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("%q = %+v, its name %q parses to %+v, %v", s, p, p.Name, back, err)
		}
	})
}
