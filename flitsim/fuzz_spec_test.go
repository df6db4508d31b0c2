package flitsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// roundTrip checks a name parser: an accepted name prints as a name that
// parses to the same value; a refusal wraps ErrConfig.
func roundTrip[T comparable](t *testing.T, what, s string, parse func(string) (T, error)) {
	v, err := parse(s)
	if err != nil {
		if !errors.Is(err, ErrConfig) {
			t.Fatalf("%s %q: error without ErrConfig: %v", what, s, err)
		}
		return
	}
	name := fmt.Sprint(v)
	back, err := parse(name)
	if err != nil || back != v {
		t.Fatalf("%s %q = %v, its name %q parses to %v, %v", what, s, v, name, back, err)
	}
}

// FuzzParseSpecs: the option parsers of the simulator (VL arbitration
// tables, patterns, arrival processes, switching, queueing, allocators,
// adaptive policies) never panic; accepted values print as specs that
// parse back to them.
func FuzzParseSpecs(f *testing.F) {
	for _, s := range []string{"0:4,1:64", "0:0", " 3 : 255 ,", "14:1", "15:1", "0:256", "-1:2", "1:2:3", "a:b", ",",
		"shift", "UNIFORM", "bitrev", "poisson", "weibull", "wormhole", "vct", "fifo", "islip", "rr", "ugal", "pora", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if w, err := ParseVLWeights(s); err == nil {
			parts := make([]string, len(w))
			for i, e := range w {
				if e.VL >= 15 {
					t.Fatalf("%q: VL %d", s, e.VL)
				}
				parts[i] = fmt.Sprintf("%d:%d", e.VL, e.Weight)
			}
			back, err := ParseVLWeights(strings.Join(parts, ","))
			if err != nil || !slices.Equal(back, w) {
				t.Fatalf("%q = %v, rewritten reads %v, %v", s, w, back, err)
			}
		} else if !errors.Is(err, ErrConfig) {
			t.Fatalf("VL weights %q: error without ErrConfig: %v", s, err)
		}
		roundTrip(t, "pattern", s, ParsePattern)
		roundTrip(t, "arrival", s, ParseArrival)
		roundTrip(t, "switching", s, ParseSwitching)
		roundTrip(t, "queueing", s, ParseQueueing)
		roundTrip(t, "allocator", s, ParseAllocator)
		roundTrip(t, "adaptive policy", s, ParseAdaptiveKind)
	})
}
