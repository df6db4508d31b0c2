package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
)

// opensmPlugin returns the daemon options installing the OpenSM deployer
// ([opensm] enabled = true); its metrics go to m's registry.
func opensmPlugin(cfg sm.Config, log *slog.Logger, m *sm.Metrics) ([]sm.Option, error) {
	dc, err := deployConfig(cfg)
	if err != nil || dc == nil {
		return nil, err
	}
	d, err := deploy.New(*dc, log, m.Registry)
	if err != nil {
		return nil, err
	}
	return []sm.Option{sm.WithDeployer(deployer{d})}, nil
}

// deployConfig turns the [opensm] section into the deployer's
// configuration (nil when the deployer is off).
func deployConfig(cfg sm.Config) (*deploy.Config, error) {
	o := cfg.OpenSM
	if !o.Enabled {
		return nil, nil
	}
	if o.Discover && cfg.Fabric == "" {
		return nil, fmt.Errorf("[opensm] discover = true needs fabric: the path discovery writes the dump to")
	}
	dc := deploy.Config{
		StateDir: o.StateDir, LFTsFile: o.LFTsFile, QoSPolicyFile: o.QoSPolicyFile, Conf: o.Conf, ManageConf: o.ManageConf,
		LogFile: o.LogFile, DumpDir: o.DumpDir, PIDFile: o.PIDFile, ToolsDir: o.ToolsDir, ToolEnv: o.ToolEnv,
		ToolOutputLimit: o.ToolOutputLimit, Discover: o.Discover, Fabric: cfg.Fabric, AllowReorder: o.AllowReorder,
		SLChecks: o.SLChecks, SL2VLChecks: o.SL2VLChecks, MaxVLs: cfg.MaxVLs,
	}
	dc.ToolTimeout = o.ToolTimeout.Duration
	dc.StepTimeout = o.StepTimeout.Duration
	dc.Drain = o.Drain.Duration
	dc.Retry = o.Retry.Duration
	dc.DiscoverPoll = o.DiscoverPoll.Duration
	dc.Rediscover = o.Rediscover.Duration
	out := dc.Defaults(cfg.Output)
	return &out, out.Validate()
}

// deployer adapts *deploy.Deployer to sm.Deployer.
type deployer struct{ d *deploy.Deployer }

func (p deployer) Run(ctx context.Context, trigger func(string)) error { return p.d.Run(ctx, trigger) }
func (p deployer) Publish(gen int, dir string)                         { p.d.Publish(gen, dir) }
func (p deployer) Status() any                                         { return p.d.Status() }
