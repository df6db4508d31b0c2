package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/sm"
)

func newServeCmd() *cobra.Command {
	var (
		configPath string
		useDefault bool
		dryRun     bool
		cfg        sm.Config
		fabricPoll time.Duration
		slurmPoll  time.Duration
		params     []string
	)
	c := &cobra.Command{
		Use:   "serve [--config FILE] [--fabric FILE | --default] -o DIR",
		Short: "Run the routing daemon: watch the fabric (and SLURM), reroute, verify, publish",
		Long: `Run the nuesm daemon. It routes the fabric dump with the engine chain,
verifies the tables, computes the update plan against what is published, and
publishes a complete set atomically under DIR/current/ (opensm-lfts.dump for
opensm -R file -U DIR/current/opensm-lfts.dump, nuesm.sl, opensm-sl2vl.dump,
qos-policy.conf, plan.json, status.json, fabric.topo). It reroutes when the
dump changes, on SIGHUP, on POST /reroute (loopback or --token; the SLURM
prolog/epilog hooks in contrib/slurm use it) and, with --slurm, when the
running multi-switch jobs change. HTTP (127.0.0.1:9716 by default):
/metrics, /healthz, /status, POST /reroute. Flags override the config file.`,
		Example: `  nuesm serve --default -o out/serve
  nuesm serve --fabric /etc/nuesm/fabric.topo --engine nue,dfsssp,updn -o /var/lib/nuesm
  nuesm serve --config /etc/nuesm/nuesm.toml
  nuesm serve --config /etc/nuesm/nuesm.toml --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			base := sm.Config{}
			if configPath != "" {
				var err error
				if base, err = sm.LoadConfig(configPath); err != nil {
					return err
				}
			}
			fl := cmd.Flags()
			if fl.Changed("fabric") {
				base.Fabric = cfg.Fabric
			}
			if fl.Changed("output") {
				base.Output = cfg.Output
			}
			if fl.Changed("engine") {
				base.Engines = cfg.Engines
			}
			if fl.Changed("vls") {
				base.MaxVLs = cfg.MaxVLs
			}
			if fl.Changed("seed") {
				base.Seed = cfg.Seed
			}
			if fl.Changed("listen") {
				base.Listen = cfg.Listen
			}
			if fl.Changed("token") {
				base.Token = cfg.Token
			}
			if fl.Changed("fabric-poll") {
				base.FabricPoll.Duration = fabricPoll
			}
			if fl.Changed("slurm") {
				base.SLURM.Enabled = cfg.SLURM.Enabled
			}
			if fl.Changed("slurm-source") {
				base.SLURM.Source = cfg.SLURM.Source
			}
			if fl.Changed("slurm-rest-url") {
				base.SLURM.RestURL = cfg.SLURM.RestURL
			}
			if fl.Changed("slurm-poll") {
				base.SLURM.Poll.Duration = slurmPoll
			}
			if fl.Changed("host-map") {
				base.SLURM.HostMap = cfg.SLURM.HostMap
			}
			for _, p := range params {
				k, v, ok := cutParam(p)
				if !ok {
					return fmt.Errorf("--param %q, expected name=value", p)
				}
				if base.Params == nil {
					base.Params = map[string]string{}
				}
				base.Params[k] = v
			}
			if useDefault && base.Fabric != "" {
				return fmt.Errorf("give --fabric or --default, not both")
			}
			if !useDefault && base.Fabric == "" {
				return fmt.Errorf("no fabric: give --fabric FILE, --default, or fabric in the config file")
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
			metrics := sm.NewMetrics()
			opts := []sm.Option{sm.WithLogger(log), sm.WithMetrics(metrics), sm.WithDefaultFabric(defaults.Name, defaults.Dump())}
			plugins, err := servePlugins(base)
			if err != nil {
				return err
			}
			opts = append(opts, plugins...)
			osm, err := opensmPlugin(base, log, metrics)
			if err != nil {
				return err
			}
			opts = append(opts, osm...)
			srv, err := sm.New(base, opts...)
			if err != nil {
				return err
			}
			if dryRun {
				fmt.Fprintf(cmd.OutOrStdout(), "configuration valid; would serve %s\n", srv.Status().Fabric)
				return nil
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go func() {
				for range hup {
					srv.Trigger("sighup")
				}
			}()
			go func() {
				for i := 0; i < 100 && srv.Addr() == ""; i++ {
					time.Sleep(50 * time.Millisecond)
				}
				abs, _ := filepath.Abs(filepath.Join(base.Output, "current"))
				fmt.Fprintf(cmd.OutOrStdout(), "nuesm serve: tables in %s, metrics at http://%s/metrics, status at http://%s/status (Ctrl-C stops)\n",
					abs, srv.Addr(), srv.Addr())
			}()
			return srv.Run(ctx)
		},
	}
	fl := c.Flags()
	fl.StringVar(&configPath, "config", "", "TOML configuration file (flags override it)")
	fl.StringVar(&cfg.Fabric, "fabric", "", "ibnetdiscover dump to route (re-read when it changes and on SIGHUP)")
	fl.BoolVar(&useDefault, "default", false, "route the embedded default fabric")
	fl.StringVarP(&cfg.Output, "output", "o", "", "directory to publish into (DIR/current/...)")
	fl.StringVar(&cfg.Engines, "engine", "nue", "engine chain, e.g. nue,dfsssp,updn (sar-nue uses the SLURM jobs)")
	fl.IntVar(&cfg.MaxVLs, "vls", 8, "maximum number of data VLs (1..15)")
	fl.Uint64Var(&cfg.Seed, "seed", 0, "seed for engines with random choices")
	fl.StringArrayVar(&params, "param", nil, "engine parameter name=value (repeatable)")
	fl.StringVar(&cfg.Listen, "listen", "127.0.0.1:9716", "HTTP address for /metrics, /healthz, /status, POST /reroute")
	fl.StringVar(&cfg.Token, "token", "", "bearer token allowing non-loopback POST /reroute")
	fl.DurationVar(&fabricPoll, "fabric-poll", 2*time.Second, "how often to check the dump for changes")
	fl.BoolVar(&cfg.SLURM.Enabled, "slurm", false, "follow SLURM's running multi-switch jobs (scheduling-aware routing)")
	fl.StringVar(&cfg.SLURM.Source, "slurm-source", "squeue", "squeue or rest (slurmrestd)")
	fl.StringVar(&cfg.SLURM.RestURL, "slurm-rest-url", "", "slurmrestd address: http://host:port or unix:///path")
	fl.DurationVar(&slurmPoll, "slurm-poll", 30*time.Second, "SLURM polling interval (hooks can POST /reroute in between)")
	fl.StringVar(&cfg.SLURM.HostMap, "host-map", "", "file overriding the host -> CA mapping")
	fl.BoolVar(&dryRun, "dry-run", false, "validate the configuration and inputs, then exit")
	return c
}

func cutParam(p string) (string, string, bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == '=' {
			return p[:i], p[i+1:], i > 0
		}
	}
	return "", "", false
}
