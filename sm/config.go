package sm

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/nuesm/nuesm/lft"
)

// Config configures the daemon. Durations are TOML strings ("2s", "10m").
// The zero value of each field means its default (see Defaults).
type Config struct {
	// Fabric is the ibnetdiscover dump to route; re-read when it changes
	// and on SIGHUP. Empty means the embedded default fabric.
	Fabric string `toml:"fabric"`
	// Output is the directory tables are published into
	// (<output>/current/…).
	Output string `toml:"output"`
	// Engines is the engine chain, e.g. "nue:share=none,dfsssp,updn"
	// (routing.ParseSpec).
	Engines string `toml:"engines"`
	// MaxVLs is the VL limit (1..15; default 8).
	MaxVLs int `toml:"max_vls"`
	// Seed is passed to the engines.
	Seed uint64 `toml:"seed"`
	// Params are engine parameters (name = value) for every engine of the
	// chain that takes the name (routing.NewChain); a name no engine takes
	// is an error.
	Params map[string]string `toml:"params"`
	// Listen is the HTTP address (default 127.0.0.1:9716).
	Listen string `toml:"listen"`
	// Token, when set, lets non-loopback clients POST /reroute with
	// "Authorization: Bearer <token>". Loopback clients never need it.
	Token string `toml:"token"`
	// FabricPoll is how often the dump's size and modification time are
	// checked (default 2s).
	FabricPoll Duration `toml:"fabric_poll"`
	// Keep is how many published generations stay on disk (default 3).
	Keep int `toml:"keep"`
	// SLURM configures the job source for scheduling-aware routing.
	SLURM SLURMConfig `toml:"slurm"`
	// OpenSM configures the deployer that rolls published generations out
	// through a running OpenSM (docs/deploy.md).
	OpenSM OpenSMConfig `toml:"opensm"`
}

// OpenSMConfig is the [opensm] section: the deployer's settings (package
// sm/deploy documents each; zero values mean its defaults).
type OpenSMConfig struct {
	Enabled         bool     `toml:"enabled"`
	StateDir        string   `toml:"state_dir"`
	LFTsFile        string   `toml:"lfts_file"`
	QoSPolicyFile   string   `toml:"qos_policy_file"`
	Conf            string   `toml:"conf"`
	ManageConf      bool     `toml:"manage_conf"`
	LogFile         string   `toml:"log_file"`
	DumpDir         string   `toml:"dump_dir"`
	PIDFile         string   `toml:"pid_file"`
	ToolsDir        string   `toml:"tools_dir"`
	ToolEnv         []string `toml:"tool_env"`
	ToolTimeout     Duration `toml:"tool_timeout"`
	ToolOutputLimit int64    `toml:"tool_output_limit"`
	StepTimeout     Duration `toml:"step_timeout"`
	Drain           Duration `toml:"drain"`
	Retry           Duration `toml:"retry"`
	Discover        bool     `toml:"discover"`
	DiscoverPoll    Duration `toml:"discover_poll"`
	Rediscover      Duration `toml:"rediscover"`
	AllowReorder    bool     `toml:"allow_reorder"`
	SLChecks        int      `toml:"sl_checks"`
	SL2VLChecks     int      `toml:"sl2vl_checks"`
}

// SLURMConfig configures where running jobs come from.
type SLURMConfig struct {
	Enabled bool `toml:"enabled"`
	// Source is "squeue" (default) or "rest" (slurmrestd).
	Source string `toml:"source"`
	// Squeue is the squeue binary (default "squeue" on $PATH).
	Squeue string `toml:"squeue"`
	// RestURL is slurmrestd's address: http://host:port or unix:///path.
	RestURL string `toml:"rest_url"`
	// RestToken and RestUser authenticate to slurmrestd (JWT).
	RestToken string `toml:"rest_token"`
	RestUser  string `toml:"rest_user"`
	// Poll is the polling interval (default 30s; 0 in the file = default,
	// "off" disables polling: only POST /reroute from the hooks).
	Poll Duration `toml:"poll"`
	// Timeout bounds one query (default 10s).
	Timeout Duration `toml:"timeout"`
	// MinTimeLimit drops jobs with a shorter time limit (default 10m, as
	// the SAR filter did).
	MinTimeLimit Duration `toml:"min_time_limit"`
	// ExcludePartitions drops jobs in these partitions (default: debug).
	ExcludePartitions []string `toml:"exclude_partitions"`
	// HostMap is an optional file overriding the host → CA mapping.
	HostMap string `toml:"host_map"`
}

// Duration is a time.Duration read from TOML text.
type Duration struct{ time.Duration }

// UnmarshalText parses "2s", "10m", or "off" (= -1, disabled).
func (d *Duration) UnmarshalText(b []byte) error {
	if string(b) == "off" {
		d.Duration = -1
		return nil
	}
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText formats the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Defaults fills zero fields with defaults.
func (c Config) Defaults() Config {
	if c.Engines == "" {
		c.Engines = "nue"
	}
	if c.MaxVLs == 0 {
		c.MaxVLs = 8
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:9716"
	}
	if c.FabricPoll.Duration == 0 {
		c.FabricPoll.Duration = 2 * time.Second
	}
	if c.Keep == 0 {
		c.Keep = 3
	}
	s := &c.SLURM
	if s.Source == "" {
		s.Source = "squeue"
	}
	if s.Squeue == "" {
		s.Squeue = "squeue"
	}
	if s.Poll.Duration == 0 {
		s.Poll.Duration = 30 * time.Second
	}
	if s.Timeout.Duration == 0 {
		s.Timeout.Duration = 10 * time.Second
	}
	if s.MinTimeLimit.Duration == 0 {
		s.MinTimeLimit.Duration = 10 * time.Minute
	}
	if s.ExcludePartitions == nil {
		s.ExcludePartitions = []string{"debug"}
	}
	return c
}

// Validate rejects configurations the daemon cannot run with.
func (c Config) Validate() error {
	var errs []error
	if c.Output == "" {
		errs = append(errs, errors.New("output directory is required"))
	}
	if c.MaxVLs < 1 || c.MaxVLs > lft.MaxVLs {
		errs = append(errs, fmt.Errorf("max_vls %d, expected 1..%d", c.MaxVLs, lft.MaxVLs))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen %q: %w", c.Listen, err))
	}
	if c.Keep < 1 {
		errs = append(errs, fmt.Errorf("keep %d, expected >= 1", c.Keep))
	}
	if c.FabricPoll.Duration < 0 {
		errs = append(errs, errors.New("fabric_poll must be positive"))
	}
	if c.SLURM.Enabled {
		switch c.SLURM.Source {
		case "squeue":
		case "rest":
			if c.SLURM.RestURL == "" {
				errs = append(errs, errors.New("slurm.source = rest needs slurm.rest_url"))
			}
		default:
			errs = append(errs, fmt.Errorf("slurm.source %q, expected squeue or rest", c.SLURM.Source))
		}
	}
	return errors.Join(errs...)
}

// LoadConfig reads a TOML configuration file; unknown keys are errors.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	md, err := toml.Decode(string(b), &c)
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return c, fmt.Errorf("config %s: unknown key %q", path, und[0].String())
	}
	return c, nil
}

// overrides copies one setting, named by its TOML key, from src to dst.
var overrides = map[string]func(dst *Config, src Config){
	"fabric":         func(d *Config, s Config) { d.Fabric = s.Fabric },
	"output":         func(d *Config, s Config) { d.Output = s.Output },
	"engines":        func(d *Config, s Config) { d.Engines = s.Engines },
	"max_vls":        func(d *Config, s Config) { d.MaxVLs = s.MaxVLs },
	"seed":           func(d *Config, s Config) { d.Seed = s.Seed },
	"listen":         func(d *Config, s Config) { d.Listen = s.Listen },
	"token":          func(d *Config, s Config) { d.Token = s.Token },
	"fabric_poll":    func(d *Config, s Config) { d.FabricPoll = s.FabricPoll },
	"keep":           func(d *Config, s Config) { d.Keep = s.Keep },
	"slurm.enabled":  func(d *Config, s Config) { d.SLURM.Enabled = s.SLURM.Enabled },
	"slurm.source":   func(d *Config, s Config) { d.SLURM.Source = s.SLURM.Source },
	"slurm.squeue":   func(d *Config, s Config) { d.SLURM.Squeue = s.SLURM.Squeue },
	"slurm.rest_url": func(d *Config, s Config) { d.SLURM.RestURL = s.SLURM.RestURL },
	"slurm.poll":     func(d *Config, s Config) { d.SLURM.Poll = s.SLURM.Poll },
	"slurm.timeout":  func(d *Config, s Config) { d.SLURM.Timeout = s.SLURM.Timeout },
	"slurm.host_map": func(d *Config, s Config) { d.SLURM.HostMap = s.SLURM.HostMap },
}

// Override returns c with the settings of o named in keys (TOML keys:
// "max_vls", "slurm.poll"…) taken from o, as command-line flags override
// the configuration file. o's Params are added to c's, o's value winning
// for a name both give. An unknown key is an error.
func (c Config) Override(o Config, keys ...string) (Config, error) {
	for _, k := range keys {
		set, ok := overrides[k]
		if !ok {
			return c, fmt.Errorf("config: no setting %q to override", k)
		}
		set(&c, o)
	}
	if len(o.Params) > 0 {
		params := make(map[string]string, len(c.Params)+len(o.Params))
		maps.Copy(params, c.Params)
		maps.Copy(params, o.Params)
		c.Params = params
	}
	return c, nil
}
