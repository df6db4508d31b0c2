package sm

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/slurm"
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
	// TokenFile (or NUESM_TOKEN in the environment of nuesm serve) keeps
	// it out of the configuration file and the process list.
	Token     string `toml:"token"`
	TokenFile string `toml:"token_file"`
	// FabricPoll is how often the dump's size and modification time, and
	// the published files, are checked (default 2s, at least 100ms).
	FabricPoll Duration `toml:"fabric_poll"`
	// MaxDumpBytes bounds the dump the daemon reads (default 256 MiB): a
	// larger file, or one that is no regular file (a named pipe,
	// /dev/zero), fails the reroute with an error that says so.
	MaxDumpBytes int64 `toml:"max_dump_bytes"`
	// RerouteTimeout bounds one reroute (default 10m): a reroute past it is
	// cancelled, fails, and /healthz reports it while it lasts.
	RerouteTimeout Duration `toml:"reroute_timeout"`
	// Keep is how many published generations stay on disk (default 3).
	Keep int `toml:"keep"`
	// OpenSMDump says whether a generation holds opensm-lfts.dump, the
	// LFTs as OpenSM's file engine loads them (opensm -U
	// <output>/current/opensm-lfts.dump): "on", "off", or "auto" (the
	// default: on unless the [opensm] deployer runs, which stages
	// OpenSM's copy at a path of its own). It is by far the largest file;
	// every generation holds the LFTs as nuesm.lft, and a generation that
	// is no longer current loses its dump.
	OpenSMDump string `toml:"opensm_dump"`
	// SLURM configures the job source for scheduling-aware routing.
	SLURM SLURMConfig `toml:"slurm"`
	// OpenSM configures the deployer that rolls published generations out
	// through a running OpenSM (docs/deploy.md).
	OpenSM OpenSMConfig `toml:"opensm"`

	// from is where ParseConfig read the settings (nil: not from a
	// file), so that errors found later, in the engine chain, name the
	// file and line too.
	from *settingSource
}

// settingSource is a configuration file and the line of each setting
// (TOML key) read from it.
type settingSource struct {
	file  string
	lines map[string]int
}

// DiscoveryWritesFabric reports whether the deployer's discovery writes
// the dump the daemon routes ([opensm] discover, docs/deploy.md), so
// that a first start may find it missing.
func (c Config) DiscoveryWritesFabric() bool {
	return c.Fabric != "" && c.OpenSM.Enabled && c.OpenSM.Discover
}

// settingError returns err, about the setting key, as a SettingError
// naming the file and line the setting was read from, if it was.
func (c Config) settingError(key string, err error) error {
	if c.from == nil {
		return err
	}
	line, ok := c.from.lines[key]
	if !ok {
		return err
	}
	return &SettingError{Key: key, File: c.from.file, Line: line, Err: err}
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
	AllowReorder    *bool    `toml:"allow_reorder"` // ignored (docs/deploy.md); nil: not set
	SLChecks        int      `toml:"sl_checks"`
	SL2VLChecks     int      `toml:"sl2vl_checks"`
	Apply           string   `toml:"apply"`
	SMPAgent        string   `toml:"smp_agent"`
	SMPDevice       string   `toml:"smp_device"`
	MKey            uint64   `toml:"mkey"`
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
	// RestAllowHTTPToken lets rest_token go over a plain http:// URL (a
	// token on the wire in clear text; off by default: use https:// or
	// unix://).
	RestAllowHTTPToken bool `toml:"rest_allow_http_token"`
	// MaxAnswerBytes bounds one answer of squeue or slurmrestd (default
	// 16 MiB for squeue, 256 MiB for slurmrestd).
	MaxAnswerBytes int64 `toml:"max_answer_bytes"`
	// Poll is the polling interval (default 30s, at least 1s; "off"
	// disables polling: only the hooks' POST /reroute and the daemon's
	// own reroutes ask SLURM).
	Poll Duration `toml:"poll"`
	// Timeout bounds one query (default 10s; it cannot be "off").
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

// Limits of the settings: polling faster than this only burns CPU.
const (
	MinFabricPoll     = 100 * time.Millisecond
	MinSLURMPoll      = time.Second
	MinRerouteTimeout = time.Second
	// DefaultMaxDumpBytes fits any real fabric (about 100 bytes per port
	// line: millions of ports).
	DefaultMaxDumpBytes = ibnetdiscover.DefaultMaxBytes
)

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
	if c.MaxDumpBytes == 0 {
		c.MaxDumpBytes = DefaultMaxDumpBytes
	}
	if c.RerouteTimeout.Duration == 0 {
		c.RerouteTimeout.Duration = 10 * time.Minute
	}
	if c.Keep == 0 {
		c.Keep = 3
	}
	if c.OpenSMDump == "" {
		c.OpenSMDump = "auto"
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
	if s.MaxAnswerBytes == 0 {
		s.MaxAnswerBytes = slurm.DefaultSqueueMaxBytes
		if s.Source == "rest" {
			s.MaxAnswerBytes = slurm.DefaultRESTMaxBytes
		}
	}
	return c
}

// rangeChecks check one setting each, by its TOML key, as given: a zero
// value, which Defaults would replace, is an error here, so that a
// setting written out ("max_vls = 0", "--vls 0") never silently means the
// default.
var rangeChecks = map[string]func(c Config) error{
	"max_vls": func(c Config) error {
		if c.MaxVLs < 1 || c.MaxVLs > lft.MaxVLs {
			return fmt.Errorf("max_vls %d, expected 1..%d", c.MaxVLs, lft.MaxVLs)
		}
		return nil
	},
	"keep": func(c Config) error {
		if c.Keep < 1 {
			return fmt.Errorf("keep %d, expected 1 or more", c.Keep)
		}
		return nil
	},
	"fabric_poll":     durationCheck("fabric_poll", func(c Config) Duration { return c.FabricPoll }, MinFabricPoll, false),
	"reroute_timeout": durationCheck("reroute_timeout", func(c Config) Duration { return c.RerouteTimeout }, MinRerouteTimeout, false),
	"slurm.poll":      durationCheck("slurm.poll", func(c Config) Duration { return c.SLURM.Poll }, MinSLURMPoll, true),
	"slurm.timeout":   durationCheck("slurm.timeout", func(c Config) Duration { return c.SLURM.Timeout }, time.Millisecond, false),
	"opensm_dump": func(c Config) error {
		switch c.OpenSMDump {
		case "auto", "on", "off":
			return nil
		}
		return fmt.Errorf("opensm_dump %q, expected auto, on or off", c.OpenSMDump)
	},
	"max_dump_bytes": func(c Config) error {
		if c.MaxDumpBytes < 1 {
			return fmt.Errorf("max_dump_bytes %d, expected 1 or more", c.MaxDumpBytes)
		}
		return nil
	},
	"slurm.max_answer_bytes": func(c Config) error {
		if c.SLURM.MaxAnswerBytes < 1 {
			return fmt.Errorf("slurm.max_answer_bytes %d, expected 1 or more", c.SLURM.MaxAnswerBytes)
		}
		return nil
	},
	"listen": func(c Config) error {
		_, port, err := net.SplitHostPort(c.Listen)
		if err == nil {
			// The port is checked here, not at the bind after routing
			// started ("127.0.0.1:99999" passed --dry-run).
			_, err = net.LookupPort("tcp", port)
		}
		if err != nil {
			return fmt.Errorf("listen %q: %w", c.Listen, err)
		}
		return nil
	},
}

// durationCheck checks a duration setting: at least min, "off" only when
// off is allowed.
func durationCheck(key string, get func(Config) Duration, min time.Duration, off bool) func(Config) error {
	return func(c Config) error {
		d := get(c).Duration
		switch {
		case d == -1 && off:
			return nil
		case d == -1:
			return fmt.Errorf("%s \"off\": this setting cannot be turned off, expected a duration of %s or more", key, min)
		case d < min:
			return fmt.Errorf("%s %s, expected %s or more", key, d, min)
		}
		return nil
	}
}

// Check checks the settings named by keys (TOML keys, as Override takes)
// as they are, before defaults: each error names its key. Keys without a
// range are not checked.
func (c Config) Check(keys ...string) error {
	var errs []error
	for _, k := range keys {
		if err := c.check(k); err != nil {
			errs = append(errs, &SettingError{Key: k, Err: err})
		}
	}
	return errors.Join(errs...)
}

// check checks one setting (nil for a key without a range).
func (c Config) check(key string) error {
	if f, ok := rangeChecks[key]; ok {
		return f(c)
	}
	return nil
}

// SettingError is a setting out of range; File and Line say where it was
// set when it came from a configuration file.
type SettingError struct {
	Key  string
	File string
	Line int
	Err  error
}

func (e *SettingError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("config %s:%d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("config %s: %v", e.File, e.Err)
	}
	return e.Err.Error()
}

func (e *SettingError) Unwrap() error { return e.Err }

// Validate rejects configurations the daemon cannot run with (after
// Defaults).
func (c Config) Validate() error {
	var errs []error
	if c.Output == "" {
		errs = append(errs, errors.New("output directory is required"))
	}
	if err := c.Check(slices.Sorted(maps.Keys(rangeChecks))...); err != nil {
		errs = append(errs, err)
	}
	if c.Token != "" && c.TokenFile != "" {
		errs = append(errs, errors.New("token and token_file: give one"))
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

// LoadConfig reads a TOML configuration file; unknown keys and settings
// out of range are errors naming the file and, where known, the line.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(b, path)
}

// ParseConfig reads a configuration from TOML text; path names it in
// errors (see LoadConfig).
func ParseConfig(b []byte, path string) (Config, error) {
	var c Config
	md, err := toml.Decode(string(b), &c)
	if pe := (toml.ParseError{}); errors.As(err, &pe) {
		return c, &SettingError{Key: pe.LastKey, File: path, Line: pe.Position.Line, Err: decodeError(pe)}
	}
	if m := typeErrorRE.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		// A value of the wrong type: the decoder names the line only in
		// its message ("toml: line 3 (last key "keep"): incompatible
		// types: ..."), rewritten to the file:line of every setting error.
		line, _ := strconv.Atoi(m[1])
		return c, &SettingError{Key: m[2], File: path, Line: line, Err: fmt.Errorf("%s: %s", m[2], m[3])}
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	for _, k := range md.Keys() {
		ks := k.String()
		if ks != strings.ToLower(ks) && k[0] != "params" {
			// The decoder matches fields regardless of case; the file
			// means what it says only in lower case.
			return c, &SettingError{Key: ks, File: path, Line: keyLine(b, ks), Err: fmt.Errorf("key %q: keys are lower case (%s)", ks, strings.ToLower(ks))}
		}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return c, &SettingError{Key: k, File: path, Line: keyLine(b, k), Err: fmt.Errorf("unknown key %q", k)}
	}
	c.from = &settingSource{file: path, lines: map[string]int{}}
	for _, k := range md.Keys() {
		c.from.lines[k.String()] = keyLine(b, k.String())
	}
	var errs []error
	if err := negativeSeed(b); err != nil {
		errs = append(errs, &SettingError{Key: "seed", File: path, Line: keyLine(b, "seed"), Err: err})
	}
	for _, k := range slices.Sorted(maps.Keys(rangeChecks)) {
		if !md.IsDefined(strings.Split(k, ".")...) {
			continue
		}
		if err := c.check(k); err != nil {
			errs = append(errs, &SettingError{Key: k, File: path, Line: keyLine(b, k), Err: err})
		}
	}
	return c, errors.Join(errs...)
}

// typeErrorRE matches the TOML decoder's message for a value of the
// wrong type.
var typeErrorRE = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// decodeError is the message of a TOML syntax or type error, naming the
// key it concerns.
func decodeError(pe toml.ParseError) error {
	if pe.LastKey != "" {
		return fmt.Errorf("%s: %s", pe.LastKey, pe.Message)
	}
	return errors.New(pe.Message)
}

// negativeSeed rejects a negative seed, which the TOML decoder would
// wrap around into a large unsigned number.
func negativeSeed(text []byte) error {
	var raw struct {
		Seed any `toml:"seed"`
	}
	if _, err := toml.Decode(string(text), &raw); err != nil {
		return nil // the real decode reports it
	}
	if v, ok := raw.Seed.(int64); ok && v < 0 {
		return fmt.Errorf("seed %d, expected 0 or more", v)
	}
	return nil
}

// keyLine returns the line of text where the dotted key ("slurm.poll")
// is set, or 0: the TOML decoder reports lines for syntax errors only.
func keyLine(text []byte, key string) int {
	table, name := "", key
	if i := strings.LastIndex(key, "."); i >= 0 {
		table, name = key[:i], key[i+1:]
	}
	cur := ""
	for i, line := range strings.Split(string(text), "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			cur = strings.TrimSpace(strings.Trim(l, "[]"))
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if ok && cur == table && strings.Trim(strings.TrimSpace(k), `"'`) == name {
			return i + 1
		}
	}
	return 0
}

// overrides copies one setting, named by its TOML key, from src to dst.
var overrides = map[string]func(dst *Config, src Config){
	"fabric":          func(d *Config, s Config) { d.Fabric = s.Fabric },
	"output":          func(d *Config, s Config) { d.Output = s.Output },
	"engines":         func(d *Config, s Config) { d.Engines = s.Engines },
	"max_vls":         func(d *Config, s Config) { d.MaxVLs = s.MaxVLs },
	"seed":            func(d *Config, s Config) { d.Seed = s.Seed },
	"listen":          func(d *Config, s Config) { d.Listen = s.Listen },
	"token":           func(d *Config, s Config) { d.Token = s.Token },
	"token_file":      func(d *Config, s Config) { d.TokenFile = s.TokenFile },
	"fabric_poll":     func(d *Config, s Config) { d.FabricPoll = s.FabricPoll },
	"max_dump_bytes":  func(d *Config, s Config) { d.MaxDumpBytes = s.MaxDumpBytes },
	"reroute_timeout": func(d *Config, s Config) { d.RerouteTimeout = s.RerouteTimeout },
	"keep":            func(d *Config, s Config) { d.Keep = s.Keep },
	"opensm_dump":     func(d *Config, s Config) { d.OpenSMDump = s.OpenSMDump },
	"slurm.enabled":   func(d *Config, s Config) { d.SLURM.Enabled = s.SLURM.Enabled },
	"slurm.source":    func(d *Config, s Config) { d.SLURM.Source = s.SLURM.Source },
	"slurm.squeue":    func(d *Config, s Config) { d.SLURM.Squeue = s.SLURM.Squeue },
	"slurm.rest_url":  func(d *Config, s Config) { d.SLURM.RestURL = s.SLURM.RestURL },
	"slurm.poll":      func(d *Config, s Config) { d.SLURM.Poll = s.SLURM.Poll },
	"slurm.timeout":   func(d *Config, s Config) { d.SLURM.Timeout = s.SLURM.Timeout },
	"slurm.host_map":  func(d *Config, s Config) { d.SLURM.HostMap = s.SLURM.HostMap },
}

// WritesOpenSMDump reports whether generations hold opensm-lfts.dump
// (OpenSMDump, after Defaults).
func (c Config) WritesOpenSMDump() bool {
	return c.OpenSMDump == "on" || (c.OpenSMDump == "auto" && !c.OpenSM.Enabled)
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
		if c.from != nil { // the setting no longer comes from the file
			from := &settingSource{file: c.from.file, lines: maps.Clone(c.from.lines)}
			delete(from.lines, k)
			c.from = from
		}
	}
	if len(o.Params) > 0 {
		if c.from != nil {
			from := &settingSource{file: c.from.file, lines: maps.Clone(c.from.lines)}
			for k := range o.Params {
				delete(from.lines, "params."+k)
			}
			c.from = from
		}
		params := make(map[string]string, len(c.Params)+len(o.Params))
		maps.Copy(params, c.Params)
		maps.Copy(params, o.Params)
		c.Params = params
	}
	return c, nil
}
