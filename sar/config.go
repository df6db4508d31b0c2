package sar

import (
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
)

// passesParam is sar-nue's own parameter: the Nue passes of its
// job-aware routing (nue.Engine.RouteRefined).
var passesParam = routing.Param{Name: "passes", Doc: fmt.Sprintf("Nue passes of the job-aware routing, 1..%d (default %d)", MaxPasses, DefaultPasses)}

// spreadParam switches sar-nue's spreading of job destinations' paths
// (spread) on or off.
var spreadParam = routing.Param{Name: "spread", Doc: "spread each job destination's paths over several channels after routing: on (default), off, or all (also every terminal's paths when no job runs)", Values: []string{"on", "off", "all"}}

// Params lists sar-nue's parameters: Nue's, passes and spread
// (routing.Configurable).
func (NueEngine) Params() []routing.Param {
	return append(nue.Engine{}.Params(), passesParam, spreadParam)
}

// Configure returns sar-nue with Nue's parameters and passes from kv
// applied (routing.Configurable).
func (e NueEngine) Configure(kv map[string]string) (routing.Engine, error) {
	if err := routing.CheckParams("sar-nue", e.Params(), kv); err != nil {
		return nil, err
	}
	passes := e.Passes
	if v, ok := kv[passesParam.Name]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPasses {
			return nil, &routing.ParamError{Engine: "sar-nue", Name: passesParam.Name, Value: v, Accepted: []string{fmt.Sprintf("1..%d", MaxPasses)}}
		}
		passes = n
		kv = maps.Clone(kv)
		delete(kv, passesParam.Name)
	}
	noSpread, all := e.NoSpread, e.SpreadAll
	if v, ok := kv[spreadParam.Name]; ok {
		if v != "on" && v != "off" && v != "all" {
			return nil, &routing.ParamError{Engine: "sar-nue", Name: spreadParam.Name, Value: v, Accepted: spreadParam.Values}
		}
		noSpread, all = v == "off", v == "all"
		kv = maps.Clone(kv)
		delete(kv, spreadParam.Name)
	}
	return configure("sar-nue", e.Config, kv, nue.ParseConfig, func(c nue.Config) routing.Engine {
		return NueEngine{Config: c, Passes: passes, NoSpread: noSpread, SpreadAll: all}
	})
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
