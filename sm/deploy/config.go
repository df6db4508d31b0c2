package deploy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/umad"
	"github.com/nuesm/nuesm/lft"
)

// Config configures the OpenSM deployer. Paths are absolute or relative
// to the daemon's working directory. The zero value of each field means
// its default (see Defaults).
type Config struct {
	// StateDir holds the rollout state (state.json), the plan being
	// executed and the tables of the last proven state. Default:
	// <output>/opensm.
	StateDir string
	// LFTsFile is the stable path OpenSM's file routing engine reads
	// (opensm.conf: lfts_file, or opensm -U). Default: StateDir/opensm-lfts.dump.
	LFTsFile string
	// QoSPolicyFile is the stable path of the QoS policy OpenSM reads
	// (opensm.conf: qos_policy_file, or opensm -Y). Default:
	// StateDir/qos-policy.conf.
	QoSPolicyFile string
	// Conf is OpenSM's configuration file (opensm -F). The deployer checks
	// that it names LFTsFile and QoSPolicyFile, enables QoS, routes with
	// "file" without fallback, and maps SLs to VLs as the routing needs.
	Conf string
	// ManageConf lets the deployer write the SL2VL lines (qos_sl2vl and
	// the per-port-kind variants) into a marked block at the end of Conf;
	// without it a routing whose SL2VL differs from Conf is refused.
	ManageConf bool
	// LogFile is OpenSM's log (opensm.conf: log_file): the deployer reads
	// it to see a step applied ("file tables configured on all switches")
	// or rejected.
	LogFile string
	// DumpDir is OpenSM's dump_files_dir: OpenSM rewrites
	// opensm-subnet.lst there at the end of every heavy sweep, which
	// starts a rediscovery of the fabric. Empty: no such trigger.
	DumpDir string
	// PIDFile holds OpenSM's process id (opensm -B --pidfile). Empty: the
	// one process named "opensm" is signalled.
	PIDFile string
	// ToolsDir holds ibnetdiscover, iblinkinfo, dump_fts, ibroute, smpdump,
	// saquery and smpquery;
	// empty: $PATH, then /usr/sbin, /sbin, /usr/local/sbin.
	ToolsDir string
	// ToolEnv is extra environment for those programs (NAME=value).
	ToolEnv []string
	// ToolWorkDir is their working directory (default: the daemon's; a
	// simulated fabric's umad2sim leaves sys-<pid> directories there).
	ToolWorkDir string
	// ToolTimeout bounds one run of a program (default 60s).
	ToolTimeout time.Duration
	// ToolOutputLimit caps a program's standard output in bytes (default
	// 512 MiB).
	ToolOutputLimit int64
	// StepTimeout bounds one step: from the files staged until the
	// switches hold them (default 30s). A step that does not take stops
	// the rollout.
	StepTimeout time.Duration
	// Drain is how long a barrier or a drain (pause) waits for packets in
	// flight to leave the fabric: at least the switches' packet lifetime
	// (OpenSM's packet_life_time 0x12, about 1.07 s, by default). Default
	// 1.1s; negative: no wait (a fabric without traffic, tests).
	Drain time.Duration
	// Retry is how long a stopped rollout waits before it re-plans from
	// what the switches hold and tries again (default 30s).
	Retry time.Duration
	// Discover runs ibnetdiscover when OpenSM logs a link's trap, when it
	// finishes a heavy sweep (DumpDir) and every Rediscover, writes the dump to Fabric when the
	// fabric changed, and asks the daemon to reroute.
	Discover bool
	// Fabric is the daemon's fabric dump (written by discovery).
	Fabric string
	// DiscoverPoll is how often OpenSM's log and opensm-subnet.lst are
	// checked where inotify does not wake the deployer (default 200ms).
	DiscoverPoll time.Duration
	// Rediscover is the interval of discoveries without a trigger
	// (default 60s; negative: never).
	Rediscover time.Duration
	// MaxVLs is the daemon's VL limit; plans stay within it.
	MaxVLs int
	// SLChecks is how many changed path SLs a step asks OpenSM's SA for
	// (saquery) to prove the QoS policy took (default 16; negative: none).
	SLChecks int
	// SL2VLChecks is how many ports a step that changes the SL2VL mapping
	// reads back with smpquery (default 4; negative: none).
	SL2VLChecks int
	// Apply is how a step's LFT writes reach the switches: "sighup"
	// (OpenSM's heavy sweep loads the staged file) or "smp" (the
	// deployer writes the changed blocks with SMPs through its agent; SL
	// and SL2VL changes still go through SIGHUP, since OpenSM's SA and QoS
	// setup serve them). Default: ApplySMP (docs/deploy.md says why).
	Apply string
	// SMPAgent is the program run as "<SMPAgent> smp-agent" to send the
	// SMPs, with ToolEnv and in ToolWorkDir (default: this executable).
	SMPAgent string
	// SMPDevice is the umad device the SMPs leave from (default
	// /dev/infiniband/umad0).
	SMPDevice string
	// MKey is the M_Key sent with every SMP (OpenSM's m_key; default 0).
	MKey uint64
	// AfterStep, when set, is called after each proven write step, while
	// nothing else writes the switches (tests read them back then).
	AfterStep func(StepEvent)
	// BeforeStage, when set, is called in a step whose LFT blocks are
	// written before its file is staged (writesBeforeStage), after the
	// writes and before the staging (tests force a heavy sweep there).
	BeforeStage func(StepEvent)
}

// StepEvent describes a write step the switches were proven to hold.
type StepEvent struct {
	Generation, Step, Steps int
	Graph                   *fabric.Graph
	Tables                  *lft.Routing // the step's tables (LFTs, SLs, SL2VL)
	From                    *lft.Routing // the tables the step starts from (BeforeStage)
}

// Defaults fills zero fields; output is the daemon's output directory.
func (c Config) Defaults(output string) Config {
	if c.StateDir == "" {
		c.StateDir = filepath.Join(output, "opensm")
	}
	if c.LFTsFile == "" {
		c.LFTsFile = filepath.Join(c.StateDir, "opensm-lfts.dump")
	}
	if c.QoSPolicyFile == "" {
		c.QoSPolicyFile = filepath.Join(c.StateDir, "qos-policy.conf")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ToolTimeout, 60*time.Second)
	def(&c.StepTimeout, 30*time.Second)
	def(&c.Drain, 1100*time.Millisecond)
	def(&c.Retry, 30*time.Second)
	def(&c.DiscoverPoll, 200*time.Millisecond)
	def(&c.Rediscover, 60*time.Second)
	if c.ToolOutputLimit == 0 {
		c.ToolOutputLimit = 512 << 20
	}
	if c.SLChecks == 0 {
		c.SLChecks = 16
	}
	if c.SL2VLChecks == 0 {
		c.SL2VLChecks = 4
	}
	if c.MaxVLs == 0 {
		c.MaxVLs = 8
	}
	if c.Apply == "" {
		c.Apply = ApplySMP
	}
	if c.SMPAgent == "" {
		c.SMPAgent, _ = os.Executable()
	}
	if c.SMPDevice == "" {
		c.SMPDevice = "/dev/infiniband/umad0"
	}
	return c
}

// Validate rejects configurations the deployer cannot work with.
func (c Config) Validate() error {
	var errs []error
	if c.Conf == "" {
		errs = append(errs, errors.New("opensm.conf is required: the deployer checks OpenSM's configuration (routing_engine, lfts_file, qos, SL2VL)"))
	}
	if c.LogFile == "" {
		errs = append(errs, errors.New("opensm.log_file is required: the deployer reads OpenSM's log to see a step applied"))
	}
	if c.Discover && c.Fabric == "" {
		errs = append(errs, errors.New("opensm.discover needs the daemon's fabric path (discovery writes the dump there)"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"tool_timeout", c.ToolTimeout}, {"step_timeout", c.StepTimeout}, {"retry", c.Retry}, {"discover_poll", c.DiscoverPoll}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("opensm.%s %v, expected a positive duration", d.name, d.v))
		}
	}
	if c.ToolOutputLimit < 4096 {
		errs = append(errs, fmt.Errorf("opensm.tool_output_limit %d bytes, expected >= 4096", c.ToolOutputLimit))
	}
	if c.Apply != ApplySIGHUP && c.Apply != ApplySMP {
		errs = append(errs, fmt.Errorf("opensm.apply %q, expected %q or %q", c.Apply, ApplySIGHUP, ApplySMP))
	}
	if c.Apply == ApplySMP && c.SMPAgent == "" {
		errs = append(errs, errors.New("opensm.apply = \"smp\" needs opensm.smp_agent (the nuesm executable could not be found)"))
	}
	if self, err := os.Executable(); c.Apply == ApplySMP && !umad.Supported && err == nil && c.SMPAgent == self {
		errs = append(errs, errors.New("opensm.apply = \"smp\": this nuesm was built without cgo and cannot send SMPs; set opensm.apply = \"sighup\" or opensm.smp_agent to a nuesm built with cgo"))
	}
	if c.MaxVLs < 1 || c.MaxVLs > 15 {
		errs = append(errs, fmt.Errorf("max_vls %d, expected 1..15", c.MaxVLs))
	}
	return errors.Join(errs...)
}
