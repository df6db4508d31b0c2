package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nuesm/nuesm/sm"
)

// TestServeDryRunFailsLikeTheDaemon: --dry-run fails on everything the
// real daemon would fail on before routing, with the exit status of its
// kind, and passes a good setup without routing anything.
func TestServeDryRunFailsLikeTheDaemon(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.topo", "this is no dump\n")
	binary := write("binary.topo", "\x00\x01\x02\x1f\x8b")
	fifo := filepath.Join(dir, "fifo.topo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgFile := func(name, text string) string { return write(name, "output = \""+dir+"/o\"\n"+text) }
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--fabric", filepath.Join(dir, "missing.topo")}, exitInput, "missing.topo"},
		{[]string{"--fabric", garbage}, exitInput, "garbage.topo"},
		{[]string{"--fabric", binary}, exitInput, "binary.topo"},
		{[]string{"--fabric", fifo}, exitInput, "not a regular file"},
		{[]string{"--default", "--engine", "nosuch"}, exitUsage, `unknown engine "nosuch"`},
		{[]string{"--default", "--engine", "nue:share=bogus"}, exitUsage, `unknown value "bogus"`},
		{[]string{"--default", "--param", "vlbalance=maybe", "--engine", "dfsssp"}, exitUsage, "vlbalance"},
		{[]string{"--default", "--vls", "0"}, exitUsage, "--vls 0, expected 1..15"},
		{[]string{"--default", "--vls", "16"}, exitUsage, "--vls 16"},
		{[]string{"--default", "--fabric-poll", "1ns"}, exitUsage, "--fabric-poll: fabric_poll 1ns, expected 100ms or more"},
		{[]string{"--default", "--token", "sekret"}, exitUsage, "--token-file"},
		{[]string{"--default", "--token-file", filepath.Join(dir, "nosuch")}, exitUsage, "token_file"},
		{[]string{"--default", "--config", cfgFile("a.toml", "[slurm]\ntimeout = \"off\"\n")}, exitUsage, "a.toml:3: slurm.timeout \"off\""},
		{[]string{"--default", "--config", cfgFile("b.toml", "fabric_poll = \"1ns\"\n")}, exitUsage, "b.toml:2: fabric_poll 1ns"},
		{[]string{"--default", "--config", cfgFile("c.toml", "seed = -5\n")}, exitUsage, "c.toml:2: seed -5"},
		{[]string{"--default", "--config", cfgFile("d.toml", "max_vls = 0\n")}, exitUsage, "d.toml:2: max_vls 0"},
	} {
		args := append([]string{"serve", "--dry-run", "-o", out}, c.args...)
		stdout, _, err := run(t, args...)
		if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want exit %d and %q", c.args, exitCode(err), err, c.code, c.want)
		}
		if strings.Contains(stdout, "valid") {
			t.Errorf("%v: %q", c.args, stdout)
		}
	}
	stdout, _, err := run(t, "serve", "--dry-run", "-o", out, "--default", "--engine", "nue:share=none,updn", "--vls", "4")
	if err != nil || !strings.Contains(stdout, "54 switches, 648 CA") || !strings.Contains(stdout, "nue, updn (max 4 VLs)") ||
		!strings.Contains(stdout, "nothing routed") {
		t.Fatalf("good dry run: %v\n%s", err, stdout)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("dry run published: %v", ents)
	}
}

// TestServeTokenFromEnvironment: $NUESM_TOKEN is taken, --token-file wins
// over it.
func TestServeTokenFromEnvironment(t *testing.T) {
	t.Setenv(tokenEnv, "from-env")
	fl := newServeCmd().Flags()
	sf := serveFlags{useDefault: true}
	sf.cfg.Output = t.TempDir()
	cfg, err := serveConfig(fl, sf)
	if err != nil || cfg.Token != "from-env" {
		t.Fatalf("token %q, %v", cfg.Token, err)
	}
	sf.cfg.TokenFile = "/run/secrets/token"
	if err := fl.Set("token-file", sf.cfg.TokenFile); err != nil {
		t.Fatal(err)
	}
	cfg, err = serveConfig(fl, sf)
	if err != nil || cfg.Token != "" || cfg.TokenFile != "/run/secrets/token" {
		t.Fatalf("token %q file %q, %v", cfg.Token, cfg.TokenFile, err)
	}
}

// TestBannerWithoutTables: the banner does not claim tables are
// published when there are none.
func TestBannerWithoutTables(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.topo")
	if err := os.WriteFile(garbage, []byte("no dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := sm.New(sm.Config{Fabric: garbage, Output: filepath.Join(dir, "out"), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var b strings.Builder
	printBanner(ctx, &b, srv, filepath.Join(dir, "out"))
	if !strings.Contains(b.String(), "(none published yet)") || strings.Contains(b.String(), "tables in") {
		t.Fatalf("banner %q", b.String())
	}
}
