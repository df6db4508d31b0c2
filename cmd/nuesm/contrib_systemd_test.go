package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/sm"
)

// unitExecStart returns the words of a systemd unit's ExecStart.
func unitExecStart(t *testing.T, unit string) []string {
	t.Helper()
	f, err := os.Open(unit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "ExecStart="); ok {
			return strings.Fields(v)
		}
	}
	t.Fatalf("%s: no ExecStart", unit)
	return nil
}

// TestSystemdUnits: contrib/systemd/nuesm.service starts a nuesm command
// with flags it has, on a configuration like docs/deploy.md's (which must
// load and validate as written), and both units pass systemd-analyze
// verify with the programs they name present.
func TestSystemdUnits(t *testing.T) {
	dir := filepath.Join("..", "..", "contrib", "systemd")
	words := unitExecStart(t, filepath.Join(dir, "nuesm.service"))
	if len(words) < 2 || filepath.Base(words[0]) != "nuesm" {
		t.Fatalf("nuesm.service ExecStart %q: want nuesm SUBCOMMAND ...", words)
	}
	cmd, rest, err := newRootCmd().Find(words[1:])
	if err != nil || cmd.Name() != "serve" {
		t.Fatalf("nuesm.service runs %q: %v", words[1:], err)
	}
	for _, w := range rest {
		if name, ok := strings.CutPrefix(w, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("nuesm.service: nuesm serve has no flag --%s", name)
			}
		}
	}
	checkDeployTOML(t)

	ibtest.RequirePrograms(t, "systemd", "systemd-analyze")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	units, err := filepath.Glob(filepath.Join(dir, "*.service"))
	if err != nil || len(units) == 0 {
		t.Fatalf("units: %v %v", units, err)
	}
	var paths []string
	for _, u := range units {
		text, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		// The programs must exist for verify: nuesm is this test's
		// binary (installed where the unit says only on a real host).
		text = []byte(strings.ReplaceAll(string(text), words[0], self))
		if prog := unitExecStart(t, u)[0]; prog != words[0] {
			if _, err := os.Stat(prog); err != nil {
				t.Logf("%s: %s absent here; checked with %s in its place", filepath.Base(u), prog, self)
				text = []byte(strings.ReplaceAll(string(text), prog, self))
			}
		}
		p := filepath.Join(tmp, filepath.Base(u))
		if err := os.WriteFile(p, text, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := exec.Command("systemd-analyze", append([]string{"verify"}, paths...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// checkDeployTOML loads the nuesm.toml of docs/deploy.md, which the unit's
// --config names, and validates it.
func checkDeployTOML(t *testing.T) {
	t.Helper()
	doc := filepath.Join("..", "..", "docs", "deploy.md")
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## nuesm.toml\n\n```toml\n")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatalf("%s: no ```toml block under ## nuesm.toml", doc)
	}
	c, err := sm.ParseConfig([]byte(block), doc+" (nuesm.toml)")
	if err == nil {
		err = c.Defaults().Validate()
	}
	if err != nil {
		t.Errorf("%v", err)
	}
}
