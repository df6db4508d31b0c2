package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/sm"
	"github.com/nuesm/nuesm/sm/deploy"
)

// serveFlags are serve's flags: the settings in cfg override the
// configuration file where given.
type serveFlags struct {
	configPath string
	useDefault bool
	dryRun     bool
	params     []string
	argvToken  string // refused: a token in argv shows in ps
	cfg        sm.Config
}

// serveKeys maps serve's flags to the configuration keys they override.
var serveKeys = map[string]string{
	"fabric": "fabric", "output": "output", "engine": "engines", "vls": "max_vls", "seed": "seed",
	"listen": "listen", "token-file": "token_file", "fabric-poll": "fabric_poll", "slurm": "slurm.enabled",
	"slurm-source": "slurm.source", "slurm-rest-url": "slurm.rest_url", "slurm-poll": "slurm.poll",
	"slurm-timeout": "slurm.timeout", "host-map": "slurm.host_map", "reroute-timeout": "reroute_timeout",
	"max-dump-bytes": "max_dump_bytes", "opensm-dump": "opensm_dump",
}

// serveKeysHelp lists the configuration key each flag overrides,
// wrapped for the help text; the [opensm] keys are in docs/deploy.md.
func serveKeysHelp() string {
	flags := slices.Sorted(maps.Keys(serveKeys))
	var b strings.Builder
	b.WriteString("Configuration keys the flags override (TOML; the [opensm] deployer's\nkeys: docs/deploy.md):")
	col := 80
	for i, f := range flags {
		item := fmt.Sprintf(" --%s %s", f, serveKeys[f])
		if i < len(flags)-1 {
			item += ","
		}
		if col+len(item) > 76 {
			b.WriteString("\n ")
			col = 1
		}
		b.WriteString(item)
		col += len(item)
	}
	return b.String() + "."
}

// tokenEnv names the environment variable that may hold the token.
const tokenEnv = "NUESM_TOKEN"

func newServeCmd() *cobra.Command {
	var sf serveFlags
	c := &cobra.Command{
		Use:   "serve [--config FILE] [--fabric FILE | --default] -o DIR",
		Short: "Run the routing daemon: watch the fabric (and SLURM), reroute, verify, publish",
		Long: `Run the nuesm daemon. It routes the fabric dump with the engine chain,
verifies the tables (by the rule of "nuesm route"), computes the update plan
against what is published, and publishes a complete set atomically under
DIR/current/ (nuesm.lft, opensm-lfts.dump for opensm -R file -U
DIR/current/opensm-lfts.dump, nuesm.sl, nuesm.sl2vl, qos-policy.conf,
fabric.topo, plan.json, status.json); its table files are byte for byte
those "nuesm route" writes for the same fabric and engine chain. It
reroutes when the dump changes, on SIGHUP, on POST /reroute (loopback or
the token, with Content-Type: application/json; the SLURM prolog/epilog
hooks in contrib/slurm use it) and, with --slurm, when the running
multi-switch jobs change (SLURM is asked in the background; a hung squeue
never delays a fabric change). Each reroute has a deadline
(--reroute-timeout). HTTP (127.0.0.1:9716 by default): /metrics, /healthz
(503 with the reasons while nothing verified is published, a reroute runs
past its deadline, the dump or the output directory is gone, or published
files changed), /status, POST /reroute. The token comes from --token-file
or $NUESM_TOKEN, never from the command line (ps shows it). Flags override
the config file; --param adds to its [params] table. --dry-run reads and
loads the dump, builds the engine chain with its parameters and checks
every setting, routing nothing.

Output directory: DIR/gen-NNNNNN holds each published generation,
DIR/current is the symlink to the newest; the generation before it stays
(nuesm diff DIR/previous DIR/current shows the last change); the
configuration's keep (3) generations stay in all, fewer when the disk is
short. opensm-lfts.dump, nearly all of a generation's bytes on a large
fabric, is in the current generation only, and only with --opensm-dump on,
or auto (the default) without the [opensm] deployer, which stages OpenSM's
copy at its own path; "nuesm export DIR/gen-NNNNNN" writes it for any
generation. A fabric that did not change is linked from the previous
generation, not written again.

` + serveKeysHelp() + `

` + tableFilesHelp + `

` + engineHelp,
		Example: `  nuesm serve --default -o out/serve
  nuesm serve --fabric /etc/nuesm/fabric.topo --engine nue:share=none,dfsssp,updn -o /var/lib/nuesm
  nuesm serve --config /etc/nuesm/nuesm.toml
  nuesm serve --config /etc/nuesm/nuesm.toml --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, sf) },
	}
	fl := c.Flags()
	cfg := &sf.cfg
	fl.StringVar(&sf.configPath, "config", "", "TOML configuration file (flags override it)")
	fl.StringVar(&cfg.Fabric, "fabric", "", "ibnetdiscover dump to route (re-read when it changes and on SIGHUP)")
	fl.BoolVar(&sf.useDefault, "default", false, "route the embedded default fabric")
	fl.StringVarP(&cfg.Output, "output", "o", "", "directory to publish into (DIR/current/...)")
	fl.StringVar(&cfg.Engines, "engine", "nue", "engine chain, e.g. nue:share=none,dfsssp,updn (sar-nue uses the SLURM jobs)")
	fl.IntVar(&cfg.MaxVLs, "vls", 8, "maximum number of data VLs (1..15)")
	fl.Uint64Var(&cfg.Seed, "seed", 0, "seed of the engines' random choices (ties, partitions): the same seed, the same tables (0 unless given)")
	fl.StringArrayVar(&sf.params, "param", nil, "engine parameter name=value for every engine of the chain that takes it (repeatable)")
	fl.StringVar(&cfg.Listen, "listen", "127.0.0.1:9716", "HTTP address for /metrics, /healthz, /status, POST /reroute")
	fl.StringVar(&sf.argvToken, "token", "", "refused: use --token-file or $"+tokenEnv)
	_ = fl.MarkHidden("token")
	fl.StringVar(&cfg.TokenFile, "token-file", "", "file holding the bearer token that allows non-loopback POST /reroute (or $"+tokenEnv+")")
	fl.DurationVar(&cfg.FabricPoll.Duration, "fabric-poll", 2*time.Second, "how often to check the dump and the published files (100ms or more)")
	fl.DurationVar(&cfg.RerouteTimeout.Duration, "reroute-timeout", 10*time.Minute, "deadline of one reroute")
	fl.Int64Var(&cfg.MaxDumpBytes, "max-dump-bytes", sm.DefaultMaxDumpBytes, "largest dump read")
	fl.DurationVar(&cfg.SLURM.Timeout.Duration, "slurm-timeout", 10*time.Second, "deadline of one SLURM query")
	fl.BoolVar(&cfg.SLURM.Enabled, "slurm", false, "follow SLURM's running multi-switch jobs (scheduling-aware routing)")
	fl.StringVar(&cfg.SLURM.Source, "slurm-source", "squeue", "squeue or rest (slurmrestd)")
	fl.StringVar(&cfg.SLURM.RestURL, "slurm-rest-url", "", "slurmrestd address: http://host:port or unix:///path")
	fl.DurationVar(&cfg.SLURM.Poll.Duration, "slurm-poll", 30*time.Second, "SLURM polling interval (hooks can POST /reroute in between)")
	fl.StringVar(&cfg.SLURM.HostMap, "host-map", "", "file overriding the host -> CA mapping")
	fl.StringVar(&cfg.OpenSMDump, "opensm-dump", "auto", "opensm-lfts.dump in the current generation: on, off, or auto (on without the [opensm] deployer)")
	fl.BoolVar(&sf.dryRun, "dry-run", false, "load the dump, build the engine chain and check every setting, then exit (routes nothing)")
	return c
}

// serveConfig is the configuration file with the given flags and
// $NUESM_TOKEN over it. Settings given out of range are usage errors.
func serveConfig(fl *pflag.FlagSet, sf serveFlags) (sm.Config, error) {
	if sf.argvToken != "" {
		return sm.Config{}, usageError(fmt.Errorf("--token shows the token to every user (ps): put it in a file for --token-file, or in $%s", tokenEnv))
	}
	base := sm.Config{}
	if sf.configPath != "" {
		var err error
		if base, err = sm.LoadConfig(sf.configPath); err != nil {
			return base, usageError(err)
		}
	}
	var keys []string
	var errs []error
	fl.Visit(func(f *pflag.Flag) {
		if k, ok := serveKeys[f.Name]; ok {
			keys = append(keys, k)
			if err := sf.cfg.Check(k); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", f.Name, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return base, usageError(err)
	}
	var err error
	if sf.cfg.Params, err = paramFlags(sf.params); err != nil {
		return base, usageError(err)
	}
	if tok := os.Getenv(tokenEnv); tok != "" && !slices.Contains(keys, "token_file") {
		sf.cfg.Token, sf.cfg.TokenFile = tok, ""
		keys = append(keys, "token", "token_file")
	}
	if base, err = base.Override(sf.cfg, keys...); err != nil {
		return base, usageError(err)
	}
	if sf.useDefault && base.Fabric != "" {
		return base, usageError(fmt.Errorf("give --fabric or --default, not both"))
	}
	if !sf.useDefault && base.Fabric == "" {
		return base, usageError(fmt.Errorf("no fabric: give --fabric FILE, --default, or fabric in the config file"))
	}
	return base, nil
}

// serveOptions wires the daemon: logger (nil: none), default fabric, the
// update planner and, when enabled, the SLURM job source and the OpenSM
// deployer.
func serveOptions(cfg sm.Config, log *slog.Logger) ([]sm.Option, error) {
	opts := []sm.Option{sm.WithDefaultFabric(defaults.Name, defaults.Dump()), sm.WithPlanner(sm.NewPlanner(cfg.MaxVLs))}
	if log != nil {
		opts = append(opts, sm.WithLogger(log))
	}
	if cfg.SLURM.Enabled {
		src, err := sm.NewSLURMJobs(cfg.Defaults().SLURM)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sm.WithJobSource(src))
	}
	if cfg.OpenSM.Enabled {
		m := sm.NewMetrics()
		osm, err := deploy.Plugin(cfg, log, m)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sm.WithMetrics(m))
		opts = append(opts, osm...)
	}
	return opts, nil
}

func runServe(cmd *cobra.Command, sf serveFlags) error {
	cfg, err := serveConfig(cmd.Flags(), sf)
	if err != nil {
		return err
	}
	optCfg := cfg
	if sf.dryRun && cfg.OpenSM.Enabled {
		// Check the [opensm] section without a deployer, which would make
		// its state directory: a dry run writes nothing.
		if _, err := deploy.ConfigFrom(cfg); err != nil {
			return usageError(err)
		}
		optCfg.OpenSM.Enabled = false
	}
	opts, err := serveOptions(optCfg, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
	if err != nil {
		return usageError(err)
	}
	srv, err := sm.New(optCfg, opts...)
	if err != nil {
		return usageError(err)
	}
	if sf.dryRun {
		return dryRun(cmd.OutOrStdout(), srv, cfg)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			srv.Trigger("sighup")
		}
	}()
	banner := make(chan struct{})
	go func() {
		defer close(banner)
		if !printBanner(ctx, cmd.OutOrStdout(), srv, cfg.Output) {
			printPublished(ctx, cmd.OutOrStdout(), srv, cfg.Output)
		}
	}()
	err = srv.Run(ctx)
	stopped := ctx.Err() != nil
	stop()
	<-banner
	if err == nil && stopped {
		abs, _ := filepath.Abs(filepath.Join(cfg.Output, "current"))
		fmt.Fprintf(cmd.OutOrStdout(), "nuesm serve: stopped; the tables published last stay in %s\n", abs)
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		err = fmt.Errorf("%w (another nuesm serve? --listen or the configuration's listen names another address)", err)
	}
	return err
}

// dryRun loads what the daemon would route and says what it found.
func dryRun(w io.Writer, srv *sm.Server, cfg sm.Config) error {
	res, err := srv.DryRun()
	if errors.Is(err, fs.ErrNotExist) && cfg.DiscoveryWritesFabric() {
		// The daemon starts without it: discovery writes it first.
		fmt.Fprintf(w, "fabric:   %s does not exist yet: [opensm] discover writes it at the start\n", cfg.Fabric)
		fmt.Fprintf(w, "engines:  %s (max %d VLs)\noutput:   %s\n", cfg.Defaults().Engines, cfg.Defaults().MaxVLs, cfg.Output)
		fmt.Fprintln(w, "configuration valid; nothing routed (dry run)")
		return nil
	}
	if err != nil {
		return inputError(err)
	}
	fmt.Fprintf(w, "fabric:   %s: %d switches, %d CA and router ports", res.Fabric, res.Switches, res.Terminals)
	if res.AssignedLIDs > 0 {
		fmt.Fprintf(w, " (%d without a LID: they get LIDs in port GUID order)", res.AssignedLIDs)
	}
	fmt.Fprintf(w, "\nengines:  %s (max %d VLs)\noutput:   %s\n", strings.Join(res.Engines, ", "), cfg.Defaults().MaxVLs, cfg.Output)
	fmt.Fprintln(w, "configuration valid; nothing routed (dry run)")
	return nil
}

// printBanner says where the daemon publishes and serves, once it
// listens, and whether tables are published there yet.
func printBanner(ctx context.Context, w io.Writer, srv *sm.Server, out string) (published bool) {
	for srv.Addr() == "" {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	abs, _ := filepath.Abs(filepath.Join(out, "current"))
	tables := "tables go to " + abs + " (none published yet)"
	p := srv.Status().Published
	if p != nil {
		tables = fmt.Sprintf("tables in %s (generation %d)", abs, p.Generation)
	}
	fmt.Fprintf(w, "nuesm serve: %s, metrics at http://%s/metrics, status at http://%s/status (Ctrl-C stops)\n",
		tables, srv.Addr(), srv.Addr())
	return p != nil
}

// printPublished says when the first tables are published, after a
// banner that said none were.
func printPublished(ctx context.Context, w io.Writer, srv *sm.Server, out string) {
	abs, _ := filepath.Abs(filepath.Join(out, "current"))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if p := srv.Status().Published; p != nil {
			fmt.Fprintf(w, "nuesm serve: generation %d published in %s\n", p.Generation, abs)
			return
		}
	}
}
