package nue

import (
	"slices"
	"strconv"

	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// Config is Nue's configuration, "nue:partition=…:schedule=…:share=…".
// The zero value means the defaults (DefaultPartition, DefaultSchedule,
// DefaultShare).
type Config struct {
	// Partition spreads the destinations over the layers.
	Partition Partition
	// Schedule says how the layers share the channel weights.
	Schedule Schedule
	// Share says which destinations share one search.
	Share Share
	// Layers routes on this many layers when below the VL limit and
	// spreads them over all VLs (SpreadVLs); 0: one layer per VL.
	Layers int
	// KeepLayerVLs leaves the SLs one per layer when Layers is set (sar-nue,
	// whose spreading of paths needs them, spreads the VLs after it).
	KeepLayerVLs bool
}

// withDefaults fills the empty fields.
func (c Config) withDefaults() Config {
	if c.Partition == "" {
		c.Partition = DefaultPartition
	}
	if c.Schedule == "" {
		c.Schedule = DefaultSchedule
	}
	if c.Share == "" {
		c.Share = DefaultShare
	}
	return c
}

// Validate rejects unknown values, naming the accepted ones.
func (c Config) Validate() error {
	c = c.withDefaults()
	for _, p := range params {
		if v := p.get(c); !slices.Contains(p.Values, v) {
			return &routing.ParamError{Engine: "nue", Name: p.Name, Value: v, Accepted: p.Values}
		}
	}
	return nil
}

// param is a routing.Param with the Config field it sets.
type param struct {
	routing.Param
	get func(Config) string
	set func(*Config, string)
}

var params = []param{
	{routing.Param{Name: "partition", Values: []string{string(Auto), string(RoundRobin), string(Locality), string(Switches)},
		Doc: "how destinations are dealt to layers"},
		func(c Config) string { return string(c.Partition) }, func(c *Config, v string) { c.Partition = Partition(v) }},
	{routing.Param{Name: "schedule", Values: []string{string(Sequential), string(LockStep)},
		Doc: "how layers share the channel weights"},
		func(c Config) string { return string(c.Schedule) }, func(c *Config, v string) { c.Schedule = Schedule(v) }},
	{routing.Param{Name: "share", Values: []string{string(ShareAuto), string(ShareSwitch), string(ShareSwitchLID), string(ShareNone)},
		Doc: "which of a switch's LIDs share one search in a layer"},
		func(c Config) string { return string(c.Share) }, func(c *Config, v string) { c.Share = Share(v) }},
	{routing.Param{Name: "layers", Values: layerValues(),
		Doc: "layers to route on, each spread over the VLs the limit leaves (all: one per VL)"},
		func(c Config) string { return layersString(c.Layers) }, func(c *Config, v string) { c.Layers = parseLayers(v) }},
}

// layerValues lists "all" and 1..lft.NumSLs−1 (the most data VLs).
func layerValues() []string {
	v := []string{"all"}
	for k := 1; k < lft.NumSLs; k++ {
		v = append(v, strconv.Itoa(k))
	}
	return v
}

func layersString(k int) string {
	if k == 0 {
		return "all"
	}
	return strconv.Itoa(k)
}

// parseLayers reads a layer count; what it cannot read becomes −1, which
// Validate rejects naming the accepted values.
func parseLayers(v string) int {
	if v == "all" {
		return 0
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		return -1
	}
	return k
}

// Params lists Nue's parameters (routing.Configurable).
func (Engine) Params() []routing.Param { return paramList() }

func paramList() []routing.Param {
	out := make([]routing.Param, len(params))
	for i, p := range params {
		out[i] = p.Param
	}
	return out
}

// ParseConfig reads name=value parameters into c; unknown names and
// values are errors naming the accepted ones.
func ParseConfig(c Config, kv map[string]string) (Config, error) {
	if err := routing.CheckParams("nue", paramList(), kv); err != nil {
		return c, err
	}
	for _, p := range params {
		if v, ok := kv[p.Name]; ok {
			p.set(&c, v)
		}
	}
	return c, c.Validate()
}

// Configure returns Nue with kv applied (routing.Configurable).
func (e Engine) Configure(kv map[string]string) (routing.Engine, error) {
	c, err := ParseConfig(e.Config, kv)
	if err != nil {
		return nil, err
	}
	return Engine{Config: c}, nil
}
