package routing

import (
	"fmt"
	"strings"
)

// DORConfig configures DOR ("dor:dims=8x8x8:torus=1x1x0"). The zero value
// takes the shape from the switches' coordinates and the cables.
type DORConfig struct {
	// Dims fixes the grid's sizes, dimension 0 first (dims=8x8x8). It is
	// needed when some switch has no coordinates: the switch order then
	// gives them, dimension 0 fastest.
	Dims []int32
	// Torus says which dimensions wrap, one flag per dimension
	// (torus=1x1x0; "1,1,0" in --param). Nil detects it: a dimension of
	// size >= 3 wraps when any of its wrap-around cables exists.
	Torus []bool
}

// Validate rejects sizes out of range and flag lists that do not match
// Dims.
func (c DORConfig) Validate() error {
	for _, k := range c.Dims {
		if k < 1 || k >= maxGridPoints {
			return fmt.Errorf("dims %s: size %d, expected 1..%d", fmtDims(c.Dims), k, maxGridPoints-1)
		}
	}
	if c.Dims != nil && c.Torus != nil && len(c.Torus) != len(c.Dims) {
		return fmt.Errorf("torus %s: %d flags for %d dimensions, expected one 0 or 1 per dimension", fmtWrap(c.Torus), len(c.Torus), len(c.Dims))
	}
	return nil
}

// Params lists DOR's parameters (Configurable).
func (e DOR) Params() []Param {
	return []Param{
		{Name: "dims", Doc: "grid sizes, dimension 0 first (8x8x8); needed when switches have no coordinates"},
		{Name: "torus", Doc: "which dimensions wrap, one 0/1 flag each (1x1x0); default: from the cables"},
		{Name: "dateline", Values: []string{"on", "off"}, Doc: "on for dor, off for dor-nodateline (the engine name decides)"},
	}
}

// Configure returns DOR with params applied (Configurable).
func (e DOR) Configure(params map[string]string) (Engine, error) {
	name := e.Name()
	if v, ok := params["dateline"]; ok {
		switch {
		case v == "on" && e.NoDateline:
			return nil, fmt.Errorf("%s: dateline=on: use engine \"dor\"", name)
		case v == "off" && !e.NoDateline:
			return nil, fmt.Errorf("%s: dateline=off would not be deadlock-free; use engine \"dor-nodateline\"", name)
		case v != "on" && v != "off":
			return nil, &ParamError{Engine: name, Name: "dateline", Value: v, Accepted: []string{"on", "off"}}
		}
	}
	if err := CheckParams(name, e.Params(), params); err != nil {
		return nil, err
	}
	if v, ok := params["dims"]; ok {
		d, err := parseDims(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		e.Config.Dims = d
	}
	if v, ok := params["torus"]; ok {
		w, err := parseWrap(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		e.Config.Torus = w
	}
	if err := e.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return e, nil
}

// fmtWrap writes wrap flags as "1x1x0".
func fmtWrap(w []bool) string {
	parts := make([]string, len(w))
	for i, b := range w {
		parts[i] = "0"
		if b {
			parts[i] = "1"
		}
	}
	return strings.Join(parts, "x")
}

// LASHConfig configures LASH ("lash:sources=all").
type LASHConfig struct {
	// AllSources layers the paths from every switch, not only from those
	// with terminals (sources=all; switch-originated traffic,
	// cdg.Options.SwitchSources).
	AllSources bool
}

// Validate accepts every LASHConfig: both settings are valid.
func (LASHConfig) Validate() error { return nil }

// Params lists LASH's parameters (Configurable).
func (LASH) Params() []Param {
	return []Param{{Name: "sources", Values: []string{"terminals", "all"},
		Doc: "paths layered: from switches with terminals, or from every switch"}}
}

// Configure returns LASH with params applied (Configurable).
func (e LASH) Configure(params map[string]string) (Engine, error) {
	if err := CheckParams(e.Name(), e.Params(), params); err != nil {
		return nil, err
	}
	if v, ok := params["sources"]; ok {
		e.Config.AllSources = v == "all"
	}
	return e, e.Config.Validate()
}
