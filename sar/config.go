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
	c, err := nue.ParseConfig(e.Config, kv)
	if err != nil {
		return nil, renamed(err, "sar-nue")
	}
	return NueEngine{Config: c}, nil
}

// Params lists sar-dfsssp's parameters: DFSSSP's (routing.Configurable).
func (DFSSSPEngine) Params() []routing.Param { return dfsssp.DFSSSP{}.Params() }

// Configure returns sar-dfsssp with DFSSSP's parameters kv applied
// (routing.Configurable).
func (e DFSSSPEngine) Configure(kv map[string]string) (routing.Engine, error) {
	c, err := dfsssp.ParseConfig(e.Config, kv)
	if err != nil {
		return nil, renamed(err, "sar-dfsssp")
	}
	return DFSSSPEngine{Config: c}, nil
}

// renamed names the engine the admin chose in a parameter error, not the
// one inside.
func renamed(err error, engine string) error {
	var pe *routing.ParamError
	if errors.As(err, &pe) {
		e := *pe
		e.Engine = engine
		return &e
	}
	return err
}
