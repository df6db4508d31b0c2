package deploy

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nuesm/nuesm/sm"
)

// ConfigFrom turns the daemon's [opensm] section into the deployer's
// configuration, defaults applied and validated (nil when the deployer
// is off).
func ConfigFrom(cfg sm.Config) (*Config, error) {
	o := cfg.OpenSM
	if !o.Enabled {
		return nil, nil
	}
	if o.Discover && cfg.Fabric == "" {
		return nil, fmt.Errorf("[opensm] discover = true needs fabric: the path discovery writes the dump to")
	}
	dc := Config{
		StateDir: o.StateDir, LFTsFile: o.LFTsFile, QoSPolicyFile: o.QoSPolicyFile, Conf: o.Conf, ManageConf: o.ManageConf,
		LogFile: o.LogFile, DumpDir: o.DumpDir, PIDFile: o.PIDFile, ToolsDir: o.ToolsDir, ToolEnv: o.ToolEnv,
		ToolOutputLimit: o.ToolOutputLimit, Discover: o.Discover, Fabric: cfg.Fabric,
		SLChecks: o.SLChecks, SL2VLChecks: o.SL2VLChecks, MaxVLs: cfg.MaxVLs,
		ToolTimeout: o.ToolTimeout.Duration, StepTimeout: o.StepTimeout.Duration, Drain: o.Drain.Duration,
		Retry: o.Retry.Duration, DiscoverPoll: o.DiscoverPoll.Duration, Rediscover: o.Rediscover.Duration,
		Apply: o.Apply, SMPAgent: o.SMPAgent, SMPDevice: o.SMPDevice, MKey: o.MKey,
	}
	out := dc.Defaults(cfg.Output)
	return &out, out.Validate()
}

// Plugin returns the daemon option installing a deployer for cfg's
// [opensm] section (none when it is off); metrics go to m's registry.
func Plugin(cfg sm.Config, log *slog.Logger, m *sm.Metrics) ([]sm.Option, error) {
	dc, err := ConfigFrom(cfg)
	if err != nil || dc == nil {
		return nil, err
	}
	d, err := New(*dc, log, m.Registry)
	if err != nil {
		return nil, err
	}
	if note := reorderNote(cfg); note != "" && log != nil {
		log.Info(note)
	}
	return []sm.Option{sm.WithDeployer(Adapter{d})}, nil
}

// reorderNote says that allow_reorder = false is ignored, to an admin
// who set it so (unset: nothing to say).
func reorderNote(cfg sm.Config) string {
	if r := cfg.OpenSM.AllowReorder; r == nil || *r {
		return ""
	}
	return "opensm.allow_reorder = false cannot be honoured: OpenSM cannot stop hosts injecting, so pairs whose path changes in a rollout may see packets out of order (every state is still proven loop- and deadlock-free)"
}

// Adapter makes a *Deployer an sm.Deployer.
type Adapter struct{ D *Deployer }

// Run implements sm.Deployer.
func (a Adapter) Run(ctx context.Context, trigger func(string)) error { return a.D.Run(ctx, trigger) }

// Publish implements sm.Deployer.
func (a Adapter) Publish(gen int, dir string) { a.D.Publish(gen, dir) }

// Handoff implements sm.DeployerHandoff.
func (a Adapter) Handoff(h sm.Handoff) { a.D.Handoff(h) }

// Status implements sm.Deployer.
func (a Adapter) Status() any { return a.D.Status() }

// Deployed implements sm.Deployer.
func (a Adapter) Deployed() int { return a.D.Status().Deployed }

// Problem implements sm.DeployerHealth.
func (a Adapter) Problem() string { return a.D.Problem() }
