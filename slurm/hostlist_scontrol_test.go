package slurm

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// scontrol runs the real `scontrol show <what> <arg>`. It needs only a
// slurm.conf naming a controller, no daemon: hostlist commands are local.
type scontrol struct {
	t    *testing.T
	conf string
}

func newScontrol(t *testing.T) *scontrol {
	t.Helper()
	ibtest.RequirePrograms(t, "slurm-client", "scontrol")
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=hostlist\nSlurmctldHost=localhost\nNodeName=x\nPartitionName=x Nodes=ALL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &scontrol{t: t, conf: conf}
}

// show returns scontrol's output lines, or ok=false if it called the
// hostlist invalid.
func (s *scontrol) show(what, arg string) (lines []string, ok bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ibtest.Budget(s.t))
	defer cancel()
	cmd := exec.CommandContext(ctx, "scontrol", "show", what, arg)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("scontrol show %s %q: %v: %s", what, arg, err, stderr.String())
	}
	// scontrol exits 0 on invalid hostlists and says so on stderr
	if strings.Contains(stderr.String(), "Invalid hostlist") || strings.Contains(stdout.String(), "Invalid hostlist") {
		return nil, false
	}
	if stderr.Len() > 0 {
		s.t.Fatalf("scontrol show %s %q: unexpected stderr %q", what, arg, stderr.String())
	}
	return strings.Fields(stdout.String()), true
}

// randomText is a piece of a name: letters, digits and punctuation SLURM
// allows, never starting with '-' (scontrol would take it for an option).
func randomText(r *rand.Rand, maxLen int) string {
	const alphabet = "abnxz_.-0123456789"
	n := r.IntN(maxLen + 1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
		for i == 0 && b[i] == '-' {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

// randomNumber writes v naturally or zero-padded to a random width.
func randomNumber(r *rand.Rand, v int) string {
	if r.IntN(2) == 0 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%0*d", 1+r.IntN(4), v)
}

// randomGroup is a bracket group of 1-3 numbers and ranges.
func randomGroup(r *rand.Rand) string {
	var parts []string
	for range 1 + r.IntN(3) {
		lo := r.IntN(12) + []int{0, 0, 95, 995}[r.IntN(4)]
		if r.IntN(3) == 0 {
			parts = append(parts, randomNumber(r, lo))
			continue
		}
		parts = append(parts, randomNumber(r, lo)+"-"+randomNumber(r, lo+r.IntN(5)))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// randomExpr is a valid SLURM 22.05 hostlist expression.
func randomExpr(r *rand.Rand) string {
	var items []string
	for range 1 + r.IntN(3) {
		groups := r.IntN(4)
		if groups == 0 {
			items = append(items, randomHost(r))
			continue
		}
		var b strings.Builder
		for g := range groups {
			b.WriteString(randomText(r, 3))
			if g == 0 && b.Len() == 0 && r.IntN(2) == 0 {
				b.WriteString("n")
			}
			b.WriteString(randomGroup(r))
		}
		items = append(items, b.String())
	}
	seps := []string{",", ",", ",", " ", ",,"}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(seps[r.IntN(len(seps))])
		}
		b.WriteString(it)
	}
	return b.String()
}

// breakExpr makes expr invalid in a way SLURM 22.05 rejects as well.
func breakExpr(r *rand.Rand) string {
	base := "n" + randomGroup(r)
	switch r.IntN(6) {
	case 0:
		return "n[" + fmt.Sprint(5+r.IntN(5)) + "-" + fmt.Sprint(r.IntN(5)) + "]" // decreasing
	case 1:
		return base + randomText(r, 2) + "x" // text after the last group
	case 2:
		return "n[1-" + fmt.Sprint(3+r.IntN(9)) + ":2]" // stepped
	case 3:
		return base + ",m[]" // empty
	case 4:
		return "n[1-" + string(rune('a'+r.IntN(6))) + "]" // not a number
	}
	return "n[1-2]]" // stray ']'
}

// TestExpandMatchesScontrol compares Expand with `scontrol show hostnames`
// on random valid expressions and on invalid ones both reject.
func TestExpandMatchesScontrol(t *testing.T) {
	sc := newScontrol(t)
	n := 400
	if testing.Short() {
		n = 40
	}
	r := rand.New(rand.NewPCG(22, 5))
	for i := 0; i < n; i++ {
		expr := randomExpr(r)
		want, ok := sc.show("hostnames", expr)
		got, err := Expand(expr)
		if !ok || err != nil {
			t.Fatalf("%q: scontrol valid=%v, Expand error %v", expr, ok, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Expand(%q)\n got %q\nwant %q (scontrol show hostnames)", expr, got, want)
		}
	}
	for i := 0; i < n/4; i++ {
		expr := breakExpr(r)
		if _, ok := sc.show("hostnames", expr); ok {
			t.Fatalf("scontrol accepts %q; the generator should only make what it rejects", expr)
		}
		if _, err := Expand(expr); err == nil {
			t.Fatalf("Expand(%q): no error, scontrol rejects it", expr)
		}
	}
}

// TestCompressMatchesScontrol compares Compress with `scontrol show
// hostlist` on random host lists (duplicates and clashing paddings
// included), and CompressSorted with `scontrol show hostlistsorted` on
// lists without duplicates where each prefix keeps one padding style.
func TestCompressMatchesScontrol(t *testing.T) {
	sc := newScontrol(t)
	n := 300
	if testing.Short() {
		n = 30
	}
	r := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < n; i++ {
		in := make([]string, 1+r.IntN(16))
		for j := range in {
			in[j] = randomHost(r)
		}
		want, ok := sc.show("hostlist", strings.Join(in, ","))
		if !ok || len(want) != 1 {
			t.Fatalf("scontrol show hostlist %q: %q, valid=%v", in, want, ok)
		}
		if got := Compress(in); got != want[0] {
			t.Fatalf("Compress(%q)\n got %q\nwant %q (scontrol show hostlist)", in, got, want[0])
		}
	}
	for i := 0; i < n; i++ {
		in := uniformHosts(r)
		want, ok := sc.show("hostlistsorted", strings.Join(in, ","))
		if !ok || len(want) != 1 {
			t.Fatalf("scontrol show hostlistsorted %q: %q, valid=%v", in, want, ok)
		}
		if got := CompressSorted(in); got != want[0] {
			t.Fatalf("CompressSorted(%q)\n got %q\nwant %q (scontrol show hostlistsorted)", in, got, want[0])
		}
	}
}

// uniformHosts is a shuffled list of distinct hosts under a few prefixes,
// each prefix with one padding (natural, or a fixed width), plus a few
// names without a number.
func uniformHosts(r *rand.Rand) []string {
	prefixes := []string{"n", "node", "a", "x-", ""}
	var out []string
	seen := map[string]bool{}
	for _, p := range prefixes[:1+r.IntN(len(prefixes))] {
		width := []int{0, 0, 2, 3, 4}[r.IntN(5)]
		base := []int{0, 8, 95, 995}[r.IntN(4)]
		for range r.IntN(10) {
			v := base + r.IntN(20)
			h := fmt.Sprintf("%s%0*d", p, width, v)
			if width > 0 && len(fmt.Sprint(v)) > width { // would not be padded
				continue
			}
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
		if p != "" && r.IntN(4) == 0 && !seen[p+"z"] {
			seen[p+"z"] = true
			out = append(out, p+"z")
		}
	}
	if len(out) == 0 {
		out = append(out, "n1")
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
