package flitsim

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/internal/simtest"
)

// pinnedCase is a run whose result is pinned byte for byte.
type pinnedCase struct {
	name string
	net  func(t *testing.T) *Network
	tr   Traffic
	opt  RunOptions
	want string // SHA-256 of the Result's JSON, hex
}

// bookSimRouter is the router of BookSim2's defaults (bench/flitsim/booksim).
var bookSimRouter = Config{Switching: Wormhole, Queueing: FIFO, Allocator: ISLIP, Iterations: 1,
	RouteStall: 2, PipelineDelay: 3, PacketFlits: 8, BufferFlits: 32, VLs: 2}

func pinnedCases() []pinnedCase {
	torus8 := func(cfg Config) func(t *testing.T) *Network {
		return func(t *testing.T) *Network { return network(t, torus(t, 8, "dor"), cfg) }
	}
	with := func(c Config, f func(*Config)) Config { f(&c); return c }
	window := RunOptions{Seed: 1, Warmup: 500, Measure: 3000, Drain: 1000}
	ugal := func(t *testing.T) *Network {
		f := fixtureOf(simtest.RSIBR(t, 3))
		return withRouting(t, network(t, f, Config{}), adaptivePolicy(t, f, Adaptive{Kind: UGAL}), hopsVC{7})
	}
	return []pinnedCase{
		{"torus8/booksim/0.10", torus8(bookSimRouter), Traffic{Pattern: Uniform, Load: 0.1}, window, "7f09ef3b301a3946273f3df18380d39dd1d4aae9e13f5e24339406cca7543384"},
		{"torus8/booksim/0.25", torus8(bookSimRouter), Traffic{Pattern: Uniform, Load: 0.25}, window, "d39b9814971bb28ad946ab14005af4b7030df25de63f59c474f0eaecc43b9dc0"},
		{"torus8/booksim/0.45", torus8(bookSimRouter), Traffic{Pattern: Uniform, Load: 0.45}, window, "5e5a3641b4c0f804027357875dc00af94a229eaa1152faee68d3c52f972d8c06"},
		{"torus8/booksim/pool2", torus8(with(bookSimRouter, func(c *Config) { c.VCsPerVL = 2 })), Traffic{Pattern: Uniform, Load: 0.3}, window, "99c939857309bc2d32fe8333a45906a86dca16e63ff1d0bc141d297554ecf2e5"},
		{"torus8/booksim/vct-voq", torus8(with(bookSimRouter, func(c *Config) { c.Switching, c.Queueing = VirtualCutThrough, VOQ })), Traffic{Pattern: Uniform, Load: 0.3}, window, "40a794bc49a264bddaa8686fe3415d3a03d91f516c50d9f95e77c13cbde93c46"},
		{"torus8/booksim/rr", torus8(with(bookSimRouter, func(c *Config) { c.Allocator = RoundRobin })), Traffic{Pattern: Uniform, Load: 0.3}, window, "ea4be2dda6f4b469a3b2c01e7c8d43b8cc1e752c549af001442d6cfc5bb7d47a"},
		{"torus8/default", torus8(Config{}), Traffic{Pattern: Uniform, Load: 0.5, Arrival: Exponential}, window, "871bd46076900950fd0ac83df0afe642b312a663c419ef946d49adb459e7dd19"},
		{"torus8/stall-halfbw", torus8(Config{RouteStall: 3, LinkBandwidth: 0.5, VCsPerVL: 2}), Traffic{Pattern: Transpose, Load: 0.4}, window, "bf1c2e400ca484b979dc216cecb17489cc3a525272e28b66277341dc7d514d76"},
		{"fattree/shift", func(t *testing.T) *Network { return network(t, fatTree(t, "ftree"), Config{}) },
			Traffic{Pattern: Shift, MessagePackets: 4}, RunOptions{Seed: 1}, "fe0cd8a092390d064bbc745a4c839a758d07f0267261af540ddf79f251f6e45c"},
		{"fattree/shift-sync-wormhole", func(t *testing.T) *Network {
			return network(t, fatTree(t, "ftree"), Config{Switching: Wormhole, RouteStall: 2, Allocator: ISLIP})
		}, Traffic{Pattern: Shift, MessagePackets: 2, ShiftSync: true}, RunOptions{Seed: 1}, "92b393bb169f64640542e9bf8da348201bc1577684e47ddc3dd6db9ec876d94f"},
		{"rsi/ugal", ugal, Traffic{Pattern: Uniform, Load: 0.5}, window, "c9f4457f031ab9d2175ada1f23a49773db9182f9e440af702cf30ab68a6d59bc"},
		{"torus4/deadlock", func(t *testing.T) *Network { return network(t, torus(t, 4, "dor-nodateline"), deadlockConfigs[1]) },
			Traffic{Pattern: Uniform, Load: 1}, window, "f70dc4ebba385a1775f88ce4082c85fdb957b7c3cab7df2c3baf43ef4014bba0"},
	}
}

// TestPinnedResults: the results of fixed runs never change, byte for
// byte as JSON. A change to the simulation loop that is meant to be a pure
// speed-up must keep every hash; a change of the model updates them (and
// says why in its commit).
func TestPinnedResults(t *testing.T) {
	for _, c := range pinnedCases() {
		t.Run(c.name, func(t *testing.T) {
			n := c.net(t)
			res, err := n.Run(context.Background(), c.tr, c.opt)
			if res == nil {
				t.Fatal(err)
			}
			j, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%x", sha256.Sum256(j))
			if got != c.want {
				t.Errorf("result hash %s, want %s (verdict %s, accepted %.5f, latency %.3f, flit-hops %d)",
					got, c.want, res.Verdict, res.Accepted, res.Latency.Mean, res.FlitHops)
			}
		})
	}
}
