package dfsssp

import "github.com/nuesm/nuesm/routing"

// Config is DFSSSP's configuration,
// "dfsssp:vlcount=exact:vlbalance=off:switchsources=on:layering=firstfit".
// The zero value is OpenSM's behaviour.
type Config struct {
	// ExactVLCount keeps layering up to 15 layers to report the number of
	// VLs needed (vlcount=exact); by default the layering stops where
	// OpenSM stops and reports MaxVLs+1 on failure (vlcount=bound).
	ExactVLCount bool
	// NoVLBalance uses only the VLs the layering needs (vlbalance=off); by
	// default paths spread over the unused VLs as OpenSM does.
	NoVLBalance bool
	// SwitchSources puts the paths from switches without terminals into
	// the CDG too, so that traffic from every switch LID is deadlock-free
	// (switchsources=on; cdg.Options.SwitchSources checks it). By default,
	// as in OpenSM, the CDG holds the paths of terminal ports; a switch's
	// own traffic shares its terminals' paths and SLs, and a switch
	// without terminals sends on layer 0.
	SwitchSources bool
	// FirstFit replaces OpenSM's cycle breaking by first-fit layering
	// (layering=firstfit, firstfit.go): each path goes to the lowest layer
	// whose CDG stays acyclic with it. By default (layering=osm) the
	// layering is OpenSM's.
	FirstFit bool
}

// Validate accepts every Config: each setting is a choice of two.
func (Config) Validate() error { return nil }

var params = []routing.Param{
	{Name: "vlcount", Values: []string{"bound", "exact"}, Doc: "stop layering at the VL limit (OpenSM), or count the VLs needed up to 15"},
	{Name: "vlbalance", Values: []string{"on", "off"}, Doc: "spread paths over the unused VLs (OpenSM), or use only the VLs needed"},
	{Name: "switchsources", Values: []string{"off", "on"}, Doc: "whether paths from switches without terminals join the CDG"},
	{Name: "layering", Values: []string{"osm", "firstfit"}, Doc: "break CDG cycles as OpenSM does, or put each path in the lowest layer that stays acyclic"},
}

// ParseConfig reads name=value parameters into c; unknown names and
// values are errors naming the accepted ones.
func ParseConfig(c Config, kv map[string]string) (Config, error) {
	if err := routing.CheckParams("dfsssp", params, kv); err != nil {
		return c, err
	}
	set := func(name string, field *bool, on string) {
		if v, ok := kv[name]; ok {
			*field = v == on
		}
	}
	set("vlcount", &c.ExactVLCount, "exact")
	set("vlbalance", &c.NoVLBalance, "off")
	set("switchsources", &c.SwitchSources, "on")
	set("layering", &c.FirstFit, "firstfit")
	return c, c.Validate()
}

// Params lists DFSSSP's parameters (routing.Configurable).
func (DFSSSP) Params() []routing.Param { return append([]routing.Param(nil), params...) }

// Configure returns DFSSSP with kv applied (routing.Configurable).
func (e DFSSSP) Configure(kv map[string]string) (routing.Engine, error) {
	c, err := ParseConfig(e.Config, kv)
	if err != nil {
		return nil, err
	}
	return DFSSSP{Config: c}, nil
}
