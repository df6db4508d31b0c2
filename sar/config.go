package sar

import (
	"errors"

	"github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
)

// Params lists sar-nue's parameters: Nue's (routing.Configurable).
func (NueEngine) Params() []routing.Param { return nue.Engine{}.Params() }

// Configure returns sar-nue with Nue's parameters kv applied
// (routing.Configurable).
func (e NueEngine) Configure(kv map[string]string) (routing.Engine, error) {
	return configure("sar-nue", e.Config, kv, nue.ParseConfig, func(c nue.Config) routing.Engine { return NueEngine{Config: c} })
}

// Params lists sar-dfsssp's parameters: DFSSSP's (routing.Configurable).
func (DFSSSPEngine) Params() []routing.Param { return dfsssp.DFSSSP{}.Params() }

// Configure returns sar-dfsssp with DFSSSP's parameters kv applied
// (routing.Configurable).
func (e DFSSSPEngine) Configure(kv map[string]string) (routing.Engine, error) {
	return configure("sar-dfsssp", e.Config, kv, dfsssp.ParseConfig, func(c dfsssp.Config) routing.Engine { return DFSSSPEngine{Config: c} })
}

// configure parses kv into the base engine's config c and builds the sar
// engine with it. A parameter error names the engine the admin chose, not
// the one inside.
func configure[C any](name string, c C, kv map[string]string, parse func(C, map[string]string) (C, error), build func(C) routing.Engine) (routing.Engine, error) {
	c, err := parse(c, kv)
	var pe *routing.ParamError
	if errors.As(err, &pe) {
		renamed := *pe
		renamed.Engine = name
		return nil, &renamed
	}
	if err != nil {
		return nil, err
	}
	return build(c), nil
}
