package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
	"github.com/nuesm/nuesm/sm"
)

// adminCase is a bad command line an admin writes: the exit status it
// must end with and the words its error must hold.
type adminCase struct {
	args []string
	code int
	want []string
}

// checkAdminCases runs each case and checks its status and message.
func checkAdminCases(t *testing.T, cases []adminCase) {
	t.Helper()
	for _, c := range cases {
		_, _, err := run(t, c.args...)
		name := "nuesm " + strings.Join(c.args, " ")
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if got := exitCode(err); got != c.code {
			t.Errorf("%s: exit %d (%v), want %d", name, got, err, c.code)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}
}

// TestMissingTablesNamed: a table set that does not exist is an input
// error naming it, not the advice to name a fabric (its fabric.topo is
// missing only because the set is); a set without fabric.topo still gets
// that advice, in each command's own words.
func TestMissingTablesNamed(t *testing.T) {
	dir := t.TempDir()
	set := good(t, dir)
	nosuch := filepath.Join(dir, "nosuch")
	bare := filepath.Join(dir, "bare")
	if err := os.Mkdir(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	lfts, err := os.ReadFile(filepath.Join(set, "nuesm.lft"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "nuesm.lft"), lfts, 0o644); err != nil {
		t.Fatal(err)
	}
	checkAdminCases(t, []adminCase{
		{[]string{"verify", nosuch}, exitInput, []string{"TABLES", nosuch, "no such file"}},
		{[]string{"verify", filepath.Join(set, "nosuch.dump")}, exitInput, []string{"TABLES", "nosuch.dump", "no such file"}},
		{[]string{"diff", set, nosuch}, exitInput, []string{"NEW", nosuch, "no such file"}},
		{[]string{"plan", set, nosuch}, exitInput, []string{"NEW", nosuch, "no such file"}},
		{[]string{"export", nosuch, "-o", filepath.Join(dir, "x")}, exitInput, []string{"TABLES", nosuch, "no such file"}},
		{[]string{"verify", bare}, exitUsage, []string{"give FABRIC and TABLES, or --default", "fabric.topo", bare}},
		{[]string{"diff", set, bare}, exitUsage, []string{"give --fabric FILE or --default", "NEW has no fabric.topo", bare}},
		{[]string{"export", bare, "-o", filepath.Join(dir, "x")}, exitUsage, []string{"give --fabric FILE or --default", "TABLES has no fabric.topo", bare}},
	})
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a failed export left %s behind (%v)", filepath.Join(dir, "x"), err)
	}
}

// TestVerifyFtreeHint: ftree's tables leave two top switches without a
// route to each other (its promise is CA traffic, and route accepts them
// so); verify's default also checks the switches' own packets and fails
// them, saying that CA traffic alone is safe and which flag checks that.
// Tables that lose a CA pair get no such hint.
func TestVerifyFtreeHint(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "ft.topo")
	set := filepath.Join(dir, "ftree")
	if _, _, err := run(t, "gen", "fattree", "--k", "4", "--n", "3", "-o", fab); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "route", fab, "--engine", "ftree", "-q", "-o", set); err != nil {
		t.Fatal(err)
	}
	hint := "CA and router traffic alone is safe"
	checkAdminCases(t, []adminCase{{[]string{"verify", set}, exitUnsafe, []string{"not delivered", hint, "--switch-delivery=false"}}})
	if _, _, err := run(t, "verify", "--switch-delivery=false", set); err != nil {
		t.Errorf("ftree's tables without the switches' own packets: %v", err)
	}
	bad := dropLFTEntry(t, good(t, dir))
	_, _, err := run(t, "verify", "--default", bad)
	if exitCode(err) != exitUnsafe || strings.Contains(err.Error(), hint) {
		t.Errorf("tables losing a CA pair: exit %d, %v; want unsafe without the ftree hint", exitCode(err), err)
	}
}

// TestRouteVLLimitSaid: a chain whose engines (on a fat tree with failed
// cables: dfsssp and lash need 2 VLs there) cannot meet the VL limit
// fails with one error listing each engine's reason once (not again on
// standard error, not "dfsssp: dfsssp:"), writes nothing, and a chain
// that falls back says once which engine failed and why.
func TestRouteVLLimitSaid(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "ft.topo")
	if _, _, err := run(t, "gen", "fattree", "--k", "4", "--n", "3", "--fail-link-fraction", "0.1", "--fail-seed", "1", "-o", fab); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, stderr, err := run(t, "route", fab, "--engine", "dfsssp,lash", "--vls", "1", "-q", "-o", out)
	if exitCode(err) != exitUnsafe || !strings.Contains(err.Error(), "dfsssp: needed 2 VLs, limit is 1") || !strings.Contains(err.Error(), "lash: needed 2 VLs, limit is 1") {
		t.Fatalf("dfsssp,lash at 1 VL: exit %d, %v", exitCode(err), err)
	}
	if strings.Contains(stderr, "needed") {
		t.Errorf("the failed chain's reasons are printed twice; standard error:\n%s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed route left %s (%v)", out, err)
	}
	_, stderr, err = run(t, "route", fab, "--engine", "dfsssp,nue", "--vls", "1", "-q", "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "note: dfsssp failed, the chain went on: needed 2 VLs, limit is 1\n"; stderr != want {
		t.Errorf("fallback note %q, want %q", stderr, want)
	}
}

// TestForeignTablesRefused: a table set of another fabric given to diff
// or plan as OLD (read leniently: OLD may name switches the fabric lost)
// is an input error, not a diff in which every entry is new; verify of
// such a set names the flag that would skip the unknown switches.
func TestForeignTablesRefused(t *testing.T) {
	dir := t.TempDir()
	set := good(t, dir) // the default fabric
	corpus := filepath.Join("..", "..", "..", "shared", "corpus", "ibnetdiscover", "hpc-cluster-2014-8sw-144ca.topo")
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("SAMPLE DUMP MISSING, test not run: %v", err)
	}
	other := filepath.Join(dir, "other")
	if _, _, err := run(t, "route", corpus, "-q", "-o", other); err != nil {
		t.Fatal(err)
	}
	// OLD the default fabric's set (more LIDs than other's fabric: its SLs
	// fit, only its switches are foreign); the other way round its SL file
	// is too short for the fabric.
	foreign := []string{"OLD " + set, "unknown switch", "tables only for switches the fabric", "another fabric"}
	checkAdminCases(t, []adminCase{
		{[]string{"diff", set, other}, exitInput, foreign},
		{[]string{"plan", set, other, "--verify"}, exitInput, foreign},
		{[]string{"diff", other, set}, exitInput, []string{"OLD", "expected at least the fabric's highest LID"}},
		{[]string{"verify", "--default", other}, exitInput, []string{"is not in the fabric", "--skip-unknown-switches"}},
	})
	if out, _, err := run(t, "diff", set, set); err != nil || !strings.Contains(out, "no changes") {
		t.Errorf("diff of a set with itself: %v\n%s", err, out)
	}
}

// TestGenUnwritableNamed: a dump gen cannot write is named in the error
// (not only the temporary file beside it), and nothing is left there.
func TestGenUnwritableNamed(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "nosuch", "ring.topo")
	checkAdminCases(t, []adminCase{{[]string{"gen", "ring", "--switches", "5", "-o", out}, exitFailure, []string{out + " not written"}}})
	if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
		t.Errorf("gen made %s (%v)", filepath.Dir(out), err)
	}
}

// TestDryRunDumpDiscovered: with the deployer's discovery on, the daemon
// starts without its dump (discovery writes it: docs/deploy.md's
// nuesm.toml), so --dry-run accepts a dump that does not exist yet and
// says so, writing nothing (not even the deployer's state directory);
// without discovery a missing dump stays an input error.
func TestDryRunDumpDiscovered(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "fabric.topo")
	cfg := func(discover bool) string {
		p := filepath.Join(dir, "nuesm.toml")
		text := "fabric = \"" + dump + "\"\noutput = \"" + filepath.Join(dir, "out") + "\"\nengines = \"nue,updn\"\n" +
			"[opensm]\nenabled = true\nconf = \"" + filepath.Join(dir, "opensm.conf") + "\"\nlog_file = \"" + filepath.Join(dir, "opensm.log") + "\"\n"
		if discover {
			text += "discover = true\n"
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, _, err := run(t, "serve", "--dry-run", "--config", cfg(true))
	if err != nil || !strings.Contains(out, dump+" does not exist yet: [opensm] discover writes it") ||
		!strings.Contains(out, "nue,updn (max 8 VLs)") || !strings.Contains(out, "configuration valid") {
		t.Errorf("dump to be discovered: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "out")); len(ents) != 0 {
		t.Errorf("a dry run with the deployer wrote %v", ents)
	}
	checkAdminCases(t, []adminCase{{[]string{"serve", "--dry-run", "--config", cfg(false)}, exitInput, []string{dump, "no such file"}}})
}

// TestFailExamplesRun: the --fail examples of "nuesm study rsi-fdfr
// --help" name elements the network has (a port number that is not
// cabled is a usage error, so a stale example fails an admin's first try).
func TestFailExamplesRun(t *testing.T) {
	n := 0
	for _, line := range strings.Split(newRSIFDFRCmd().Example, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "nuesm" || !strings.Contains(line, "--fail") {
			continue
		}
		n++
		if _, _, err := run(t, f[1:]...); err != nil {
			t.Errorf("%s: %v", strings.TrimSpace(line), err)
		}
	}
	if n == 0 {
		t.Fatal("rsi-fdfr's help has no --fail example")
	}
}

// TestPlanVLsBelowTables: --vls below the VLs the tables use makes them
// unsafe on their own: exit status 4 (unsafe tables, as exitHelp says),
// not 1, and the error names the flag and the VLs the tables use.
func TestPlanVLsBelowTables(t *testing.T) {
	set := good(t, t.TempDir()) // Nue on the default fabric: 8 VLs
	checkAdminCases(t, []adminCase{
		{[]string{"plan", set, set, "--vls", "1"}, exitUnsafe, []string{"tables unsafe on their own", "--vls 1: the tables use 8 VLs"}},
	})
	if _, _, err := run(t, "plan", set, set, "--vls", "8"); err != nil {
		t.Errorf("plan within the tables' VLs: %v", err)
	}
}

// lockedBuffer is a strings.Builder safe for the daemon's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeSaysStopped: Ctrl-C (the context's end) stops the daemon with
// status 0 and a last line saying where the published tables stay.
func TestServeSaysStopped(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var stdout, stderr lockedBuffer
	cmd := newRootCmd()
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"serve", "--default", "-o", out, "--listen", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	deadline := ibtest.Deadline(t)
	for !strings.Contains(stdout.String(), "nuesm serve: generation 1 published in ") && !strings.Contains(stdout.String(), "(generation 1)") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no banner and publication line before the test's deadline:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopped daemon: %v", err)
	}
	want := "nuesm serve: stopped; the tables published last stay in " + filepath.Join(out, "current") + "\n"
	if !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("standard output ends %q, want %q", stdout.String(), want)
	}
}

// TestRouteSaysDisconnected: a fabric split in two (a ring with two
// cables gone) routes what is connected, and route says that some pairs
// have no path instead of only "verified yes".
func TestRouteSaysDisconnected(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "split.topo")
	if _, _, err := run(t, "gen", "ring", "--switches", "6", "--fail-links", "2", "--fail-seed", "3", "-o", fab); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "route", fab, "-q", "-o", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "note: the fabric is not connected: 64 ordered pairs of ports have no path"; !strings.Contains(stderr, want) {
		t.Errorf("standard error %q lacks %q", stderr, want)
	}
	_, stderr, err = run(t, "route", "--default", "-q", "-o", filepath.Join(dir, "default"))
	if err != nil || strings.Contains(stderr, "not connected") {
		t.Errorf("the default fabric: %v, %q", err, stderr)
	}
}

// TestServePortTaken: a second daemon on a taken address fails at once
// (status 1) and says what to change.
func TestServePortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkAdminCases(t, []adminCase{{[]string{"serve", "--default", "-o", filepath.Join(t.TempDir(), "out"), "--listen", l.Addr().String()},
		exitFailure, []string{"address already in use", "--listen"}}})
}

// TestRootUnknown: a --root that names no switch is a usage error named
// after the flag, before anything is routed (not "no engine produced a
// verified routing", exit 4); a root for a chain without updn or ftree is
// noted as ignored.
func TestRootUnknown(t *testing.T) {
	dir := t.TempDir()
	checkAdminCases(t, []adminCase{
		{[]string{"route", "--default", "--engine", "updn", "--root", "nosuch", "-q", "-o", filepath.Join(dir, "out")}, exitUsage, []string{"--root", `"nosuch"`}},
	})
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a refused route made its output directory (%v)", err)
	}
	if _, stderr, err := run(t, "route", "--default", "--engine", "updn", "--root", "0x0002c90000000001", "-q", "-o", filepath.Join(dir, "ok")); err != nil || stderr != "" {
		t.Errorf("a root by GUID: %v, %q", err, stderr)
	}
	// An engine that takes no root: routed, and said so.
	_, stderr, err := run(t, "route", "--default", "--engine", "nue", "--root", "0x0002c90000000001", "-q", "-o", filepath.Join(dir, "nue"))
	if want := "note: --root is for updn and ftree; nue ignores it\n"; err != nil || stderr != want {
		t.Errorf("--root with nue: %v, %q, want %q", err, stderr, want)
	}
}

// TestBannerThenPublished: a banner that said no tables were published
// yet is followed by a line when the first generation is.
func TestBannerThenPublished(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "fabric.topo")
	if err := os.WriteFile(dump, []byte("no dump yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	srv, err := sm.New(sm.Config{Fabric: dump, Output: out, Listen: "127.0.0.1:0", FabricPoll: sm.Duration{Duration: sm.MinFabricPoll}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var b lockedBuffer
	banner := make(chan struct{})
	go func() {
		defer close(banner)
		if !printBanner(ctx, &b, srv, out) {
			printPublished(ctx, &b, srv, out)
		}
	}()
	defer func() { cancel(); <-done; <-banner }()
	deadline := ibtest.Deadline(t)
	wait := func(what string) {
		t.Helper()
		for !strings.Contains(b.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q before the test's deadline:\n%s", what, b.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("(none published yet)")
	if _, _, err := run(t, "gen", "ring", "--switches", "4", "-o", dump); err != nil {
		t.Fatal(err)
	}
	wait("nuesm serve: generation 1 published in " + filepath.Join(out, "current"))
}

// TestServeHelpNamesKeys: serve --help names the configuration key of
// every flag that overrides one.
func TestServeHelpNamesKeys(t *testing.T) {
	out, _, err := run(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	help := strings.Join(strings.Fields(out), " ")
	for f, k := range serveKeys {
		if !strings.Contains(help, "--"+f+" "+k) {
			t.Errorf("serve --help does not say that --%s overrides %s", f, k)
		}
	}
}

// TestRouteOverSetKeepsItWhole: a route that cannot write its set into a
// directory holding an earlier one leaves the earlier set whole (not new
// LFTs beside old SLs and summary), so that verify, diff and plan read
// one routing or none.
func TestRouteOverSetKeepsItWhole(t *testing.T) {
	dir := t.TempDir()
	fab := filepath.Join(dir, "ft.topo")
	if _, _, err := run(t, "gen", "fattree", "--k", "4", "--n", "2", "-o", fab); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "set")
	if _, _, err := run(t, "route", fab, "--engine", "updn", "--compact", "-q", "-o", set); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(set, "nuesm.lft"))
	if err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(set, "opensm-lfts.dump")
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "route", fab, "--engine", "nue", "-q", "-o", set); err == nil {
		t.Fatal("route over a directory in the way of opensm-lfts.dump: no error")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(set, "nuesm.lft"))
	if err != nil || string(after) != string(before) {
		t.Fatalf("the earlier set's nuesm.lft changed (%v)", err)
	}
	if out, _, err := run(t, "verify", set); err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("verify of the earlier set: %v\n%s", err, out)
	}
}
