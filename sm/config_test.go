package sm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigRangeErrors: settings out of range are errors naming the
// file and the line, never silently the default.
func TestConfigRangeErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"seed = -5\n", ":1: seed -5, expected 0 or more"},
		{"output = \"/o\"\n[slurm]\ntimeout = \"off\"\n", `:3: slurm.timeout "off": this setting cannot be turned off`},
		{"fabric_poll = \"1ns\"\n", ":1: fabric_poll 1ns, expected 100ms or more"},
		{"fabric_poll = \"0s\"\n", ":1: fabric_poll 0s, expected 100ms or more"},
		{"\nmax_vls = 0\n", ":2: max_vls 0, expected 1..15"},
		{"max_vls = 99\n", ":1: max_vls 99, expected 1..15"},
		{"keep = 0\n", ":1: keep 0, expected 1 or more"},
		{"opensm_dump = \"yes\"\n", `:1: opensm_dump "yes", expected auto, on or off`},
		{"[slurm]\npoll = \"10ms\"\n", ":2: slurm.poll 10ms, expected 1s or more"},
		{"reroute_timeout = \"off\"\n", `:1: reroute_timeout "off"`},
		{"max_dump_bytes = -1\n", ":1: max_dump_bytes -1"},
		{"[slurm]\nmax_answer_bytes = 0\n", ":2: slurm.max_answer_bytes 0, expected 1 or more"},
		{"listen = \"nope\"\n", `:1: listen "nope"`},
		{"\nlisten = \"127.0.0.1:99999\"\n", `:2: listen "127.0.0.1:99999": address 99999: invalid port`},
		{"\nkeep = \"three\"\n", `:2: keep: incompatible types`},
		{"[slurm]\nenabled = \"yes\"\n", `:2: slurm.enabled: incompatible types`},
		{"[slurm]\nenabeld = true\n", `:2: unknown key "slurm.enabeld"`},
		{"seed = \"x\"\n", ":1: seed: incompatible types"},
		{"\nmax_vls = 8 8\n", ":2: expected a top-level item to end"},
		{"\nlisteN = \"0\"\n", `:2: key "listeN": keys are lower case (listen)`},
		{"[Slurm]\ntimeout = \"off\"\n", `key "Slurm"`},
	} {
		p := filepath.Join(t.TempDir(), "nuesm.toml")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s%s", c.text, err, p, c.want)
		}
	}
	p := filepath.Join(t.TempDir(), "ok.toml")
	if err := os.WriteFile(p, []byte("seed = 5\nfabric_poll = \"100ms\"\n[slurm]\npoll = \"off\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadConfig(p); err != nil || c.Seed != 5 {
		t.Fatalf("valid file: %v %+v", err, c)
	}
}

// TestWritesOpenSMDump: "auto" writes the dump unless the deployer runs.
func TestWritesOpenSMDump(t *testing.T) {
	for _, c := range []struct {
		value    string
		deployer bool
		want     bool
	}{{"", false, true}, {"", true, false}, {"auto", true, false}, {"on", true, true}, {"off", false, false}} {
		cfg := Config{OpenSMDump: c.value}
		cfg.OpenSM.Enabled = c.deployer
		if got := cfg.Defaults().WritesOpenSMDump(); got != c.want {
			t.Errorf("opensm_dump %q, deployer %v: %v, want %v", c.value, c.deployer, got, c.want)
		}
	}
}

// TestConfigCheckKeys: Check checks the named settings as given (flags).
func TestConfigCheckKeys(t *testing.T) {
	c := Config{MaxVLs: 0, Keep: 0}
	if err := c.Check("max_vls"); err == nil || !strings.Contains(err.Error(), "max_vls 0") {
		t.Errorf("max_vls 0: %v", err)
	}
	if err := c.Check("output"); err != nil {
		t.Errorf("a key without a range: %v", err)
	}
	if err := (Config{MaxVLs: 15}).Check("max_vls"); err != nil {
		t.Error(err)
	}
}

// TestConfigChainErrors: a bad engine chain or engine parameter read from
// the configuration file is an error naming the file and the line, and
// not when a flag gave it.
func TestConfigChainErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text  string
		flags Config
		keys  []string
		want  string
	}{
		{"output = \"/o\"\n\nengines = \"nue,nosuch\"\n", Config{}, nil, `:3: routing: unknown engine "nosuch"`},
		{"output = \"/o\"\n[params]\nshare = \"bogus\"\n", Config{}, nil, `:3: nue: parameter share: unknown value "bogus"`},
		{"output = \"/o\"\nengines = \"nosuch\"\n", Config{Engines: "nue,bogus"}, []string{"engines"}, `sm: routing: unknown engine "bogus"`},
		{"output = \"/o\"\n[params]\nshare = \"none\"\n", Config{Params: map[string]string{"share": "x"}}, nil, `sm: nue: parameter share: unknown value "x"`},
	} {
		p := filepath.Join(dir, "nuesm.toml")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(p)
		if err == nil {
			cfg, err = cfg.Override(c.flags, c.keys...)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(cfg)
		fromFile := c.flags.Engines == "" && c.flags.Params == nil
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), p) != fromFile {
			t.Errorf("%q (flags %+v): %v, want %q, file named: %v", c.text, c.flags, err, c.want, fromFile)
		}
	}
}
