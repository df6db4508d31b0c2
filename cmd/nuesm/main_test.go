package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
)

// run executes the CLI in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestInfoDefault(t *testing.T) {
	out, _, err := run(t, "info", "--default")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"54 switches, 648 CAs", "connected, diameter 2", "warnings      0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("info --default lacks %q:\n%s", want, out)
		}
	}
}

func TestGenThenInfo(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"torus", "--dims", "4x4x4", "--hosts", "2"}, "64 switches, 128 CAs"},
		{[]string{"fattree", "--k", "4", "--n", "3"}, "48 switches, 64 CAs"},
		{[]string{"dragonfly", "--p", "2", "--a", "4", "--h", "2"}, "36 switches, 72 CAs"},
		{[]string{"ring", "--switches", "5", "--shortcut", "2,4"}, "5 switches, 5 CAs"},
		{[]string{"random", "--switches", "16", "--degree", "4", "--hosts", "2", "--seed", "3", "--fail-links", "2", "--fail-seed", "9"}, "16 switches, 32 CAs"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.args[0]+".topo")
		_, stderr, err := run(t, append(append([]string{"gen"}, c.args...), "-o", path)...)
		if err != nil {
			t.Fatalf("gen %v: %v", c.args, err)
		}
		if !strings.Contains(stderr, path) {
			t.Fatalf("gen %v: summary %q does not name the output", c.args, stderr)
		}
		out, _, err := run(t, "info", path)
		if err != nil {
			t.Fatalf("info %s: %v", path, err)
		}
		if !strings.Contains(out, c.want) {
			t.Fatalf("info %s lacks %q:\n%s", path, c.want, out)
		}
	}
	// Failure injection is reported, and the written fabric has fewer cables.
	path := filepath.Join(dir, "fail.topo")
	_, stderr, err := run(t, "gen", "torus", "--dims", "4x4", "--fail-links", "3", "-o", path)
	if err != nil || !strings.Contains(stderr, "3 failures injected") {
		t.Fatalf("failure injection: %v, %q", err, stderr)
	}
	res, err := ibnetdiscover.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Fabric.Links()); got != 32+16-3 {
		t.Fatalf("%d cables after 3 failures, want 45", got)
	}
}

func TestGenIBSimFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.net")
	if _, _, err := run(t, "gen", "ring", "--switches", "4", "--format", "ibsim", "-o", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte("Switch")) {
		t.Fatalf("ibsim net file: %v\n%s", err, b)
	}
}

func TestCLIErrors(t *testing.T) {
	for _, args := range [][]string{
		{"info"},
		{"info", "--default", "x.topo"},
		{"info", "/nonexistent/fabric.topo"},
		{"gen", "torus", "--dims", "4x4"},                        // no -o
		{"gen", "torus", "--dims", "4xq", "-o", "/tmp/x.topo"},   // bad dims
		{"gen", "torus", "--format", "xml", "-o", "/tmp/x.topo"}, // bad format
		{"gen", "torus", "--fail-link-fraction", "2", "-o", "/tmp/x.topo"},
		{"gen", "nosuchkind", "-o", "/tmp/x.topo"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("nuesm %v: no error", args)
		}
	}
}

func TestRouteAndVerify(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "route", "--default", "--engine", "nue", "--vls", "4", "--stats", "-q", "-o", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"nue", "yes", "layer", "searches", "sweeps", "tables written"} {
		if !strings.Contains(out, want) {
			t.Fatalf("route output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"nuesm.lft", "opensm-lfts.dump", "nuesm.sl", "nuesm.sl2vl", "qos-policy.conf", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	// The summary splits the chain's time into routing and verification.
	var sum routeSummary
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if sum.EngineSeconds <= 0 || sum.VerifySeconds <= 0 || sum.EngineSeconds+sum.VerifySeconds > sum.Seconds ||
		len(sum.Attempts) != 1 || sum.Attempts[0].EngineSeconds != sum.EngineSeconds {
		t.Errorf("summary times: route %g, engine %g, verify %g, attempts %+v", sum.Seconds, sum.EngineSeconds, sum.VerifySeconds, sum.Attempts)
	}
	out, _, err = run(t, "verify", "--default", filepath.Join(dir, "opensm-lfts.dump"), "--sl", filepath.Join(dir, "nuesm.sl"), "--sl2vl", filepath.Join(dir, "nuesm.sl2vl"))
	if err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// Without the SL file all paths share VL 0: Nue's layers then collide
	// only if their union is cyclic; on this fat tree it is not, so a
	// corrupted table is what must fail: drop one entry.
	bad := dropLFTEntry(t, dir)
	out, _, err = run(t, "verify", "--default", bad)
	if err == nil || !strings.Contains(out, "FAIL") || !strings.Contains(out, "no route") {
		t.Fatalf("corrupted tables: err=%v\n%s", err, out)
	}
	// A chain falls back past an engine that refuses the fabric.
	out, stderr, err := run(t, "route", "--default", "--engine", "dor,updn", "-q", "-o", dir)
	if err != nil || !strings.Contains(out, "updn") || !strings.Contains(stderr, "not applicable") {
		t.Fatalf("chain: %v\n%s\n%s", err, out, stderr)
	}
	if _, _, err := run(t, "route", "--default", "--engine", "nosuch", "-o", dir); err == nil {
		t.Fatal("unknown engine accepted")
	}
	if _, _, err := run(t, "route", "--default", "--param", "noequals", "-o", dir); err == nil {
		t.Fatal("bad --param accepted")
	}
	// Engine specs: parameters per engine; bad ones fail before routing.
	for _, c := range []struct{ args, want string }{
		{"--engine nue:partition=metis", `nue: parameter partition: unknown value "metis", expected auto, roundrobin, locality or switches`},
		{"--engine updn:share=none", `updn: unknown parameter "share": the engine takes no parameters`},
		{"--engine nue,updn --param sources=all", `no engine of the chain "nue,updn" takes "sources" (nue takes partition, schedule, share, layers)`},
		{"--engine dor:torus=1,1", `unknown engine "1"`},
	} {
		args := append([]string{"route", "--default", "-q", "-o", dir}, strings.Fields(c.args)...)
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.args, err, c.want)
		}
	}
	if out, _, err := run(t, "route", "--default", "-q", "-o", dir, "--engine", "nue:share=none:partition=switches,updn"); err != nil || !strings.Contains(out, "nue") {
		t.Fatalf("engine spec with parameters: %v\n%s", err, out)
	}
}

func TestServeDryRun(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "serve", "--default", "--dry-run", "-o", dir)
	if err != nil || !strings.Contains(out, "configuration valid") {
		t.Fatalf("dry run: %v %q", err, out)
	}
	if _, _, err := run(t, "serve", "--dry-run", "-o", dir); err == nil {
		t.Fatal("serve without a fabric accepted")
	}
	cfg := filepath.Join(dir, "nuesm.toml")
	if err := os.WriteFile(cfg, []byte("output = \""+dir+"\"\nmax_vls = 99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "serve", "--default", "--dry-run", "--config", cfg); err == nil || !strings.Contains(err.Error(), "max_vls") {
		t.Fatalf("bad config: %v", err)
	}
}

// TestServeFlagsOverrideConfig: flags win over the configuration file,
// --param over its [params]; a bad engine or parameter fails the dry run.
func TestServeFlagsOverrideConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "nuesm.toml")
	if err := os.WriteFile(cfg, []byte("output = \""+dir+"\"\nengines = \"nosuch\"\n[params]\nshare = \"bogus\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "serve", "--default", "--dry-run", "--config", cfg); err == nil || !strings.Contains(err.Error(), `unknown engine "nosuch"`) {
		t.Fatalf("engine from the file: %v", err)
	}
	if _, _, err := run(t, "serve", "--default", "--dry-run", "--config", cfg, "--engine", "nue"); err == nil ||
		!strings.Contains(err.Error(), `nue: parameter share: unknown value "bogus"`) {
		t.Fatalf("parameter from the file: %v", err)
	}
	out, _, err := run(t, "serve", "--default", "--dry-run", "--config", cfg, "--engine", "nue,updn", "--param", "share=none")
	if err != nil || !strings.Contains(out, "configuration valid") {
		t.Fatalf("flags over the file: %v %q", err, out)
	}
	if _, _, err := run(t, "serve", "--default", "--dry-run", "-o", dir, "--engine", "updn", "--param", "share=none"); err == nil ||
		!strings.Contains(err.Error(), `no engine of the chain "updn" takes "share"`) {
		t.Fatalf("parameter no engine takes: %v", err)
	}
}

// dropLFTEntry writes dir/bad.dump: dir's opensm-lfts.dump without the
// first switch's route to LID 1, tables that lose a destination.
func dropLFTEntry(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "opensm-lfts.dump"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "0x0001 ") {
			lines = append(lines[:i], lines[i+1:]...)
			break
		}
	}
	bad := filepath.Join(dir, "bad.dump")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return bad
}
