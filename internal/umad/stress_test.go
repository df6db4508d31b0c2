package umad

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nuesm/nuesm/internal/ibtest"
)

// envStress makes the test binary run a stress loop on umad0 (with the
// simulator's LD_PRELOAD library) and print its stressSummary.
const envStress = "NUESM_UMAD_TEST_STRESS"

// chainNet is a host on a chain of four switches: the routes have one to
// four hops.
const chainNet = `Ca 1 "H-0000000000000010"
[1] "S-0000000000000001"[1]

Switch 8 "S-0000000000000001"
[1] "H-0000000000000010"[1]
[3] "S-0000000000000002"[2]

Switch 8 "S-0000000000000002"
[2] "S-0000000000000001"[3]
[3] "S-0000000000000003"[2]

Switch 8 "S-0000000000000003"
[2] "S-0000000000000002"[3]
[3] "S-0000000000000004"[2]

Switch 8 "S-0000000000000004"
[2] "S-0000000000000003"[3]
`

var chainPaths = []string{"0,1", "0,1,3", "0,1,3,3", "0,1,3,3,3"}

// stressSummary is what a stress child reports.
type stressSummary struct {
	SMPs     int            `json:"smps"`
	Failed   int            `json:"failed"`
	Errors   map[string]int `json:"errors"`
	Sends    int            `json:"sends"`
	Answers  int            `json:"answers"`
	Late     int            `json:"late"`
	Timeouts int            `json:"timeouts"`
	Seconds  float64        `json:"seconds"`
}

// stressBlock is the LFT block the stress loop writes to block b of
// switch s: a Get that is handed another SMP's answer reads other data.
func stressBlock(s int, b uint32) [DataSize]byte {
	var blk [DataSize]byte
	for k := range blk {
		blk[k] = uint8((s + int(b) + k) % 8)
	}
	return blk
}

// stressOps returns n ops: pairs of a Set and a Get of the same block, on
// the switches in turn.
func stressOps(n int) (ops []Op, want [][DataSize]byte) {
	for i := range n {
		q := i / 2
		s, block := q%len(chainPaths), uint32(q/len(chainPaths)%8)
		blk := stressBlock(s, block)
		if i%2 == 0 {
			ops = append(ops, SetOp(AttrLinearForwardTable, block, chainPaths[s], blk))
		} else {
			ops = append(ops, GetOp(AttrLinearForwardTable, block, chainPaths[s]))
		}
		want = append(want, blk)
	}
	return ops, want
}

// stressChild sends batches of SMPs through umad0 and prints the summary
// on standard output; every send, answer, late answer and timeout goes
// to the trace file with its time and TID.
func stressChild() {
	num := func(k string) int { n, _ := strconv.Atoi(os.Getenv(envStress + "_" + k)); return n }
	par, total := num("PAR"), num("N")
	opt := Options{Timeout: time.Duration(num("TIMEOUT_MS")) * time.Millisecond, Retries: num("RETRIES")}
	port, err := Open("/dev/infiniband/umad0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer port.Close()
	tr, err := os.Create(os.Getenv(envStress + "_TRACE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer tr.Close()
	var mu sync.Mutex
	sum := stressSummary{Errors: map[string]int{}}
	t0 := time.Now()
	port.trace = func(ev string, tid uint32) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(tr, "%.6f %s %08x\n", time.Since(t0).Seconds(), ev, tid)
		switch ev {
		case "send":
			sum.Sends++
		case "answer":
			sum.Answers++
		case "late":
			sum.Late++
		case "timeout":
			sum.Timeouts++
		}
	}
	do := func(ctx context.Context, r Request) (Response, error) { return port.Do(ctx, r, opt) }
	ops, want := stressOps(2 * len(chainPaths) * 8)
	// The Sets first, so that every Get has its block's data to read.
	sets := make([]Op, 0, len(ops)/2)
	for i := 0; i < len(ops); i += 2 {
		sets = append(sets, ops[i])
	}
	runBatch(context.Background(), sets, do, par)
	for sum.SMPs < total {
		for i, r := range runBatch(context.Background(), ops, do, par) {
			sum.SMPs++
			err := r.Err
			if d, derr := r.Bytes(); err == "" && (derr != nil || d != want[i]) {
				err = "an answer with other data than the block holds"
			}
			if err != "" {
				mu.Lock()
				sum.Failed++
				sum.Errors[err]++
				mu.Unlock()
			}
		}
	}
	sum.Seconds = time.Since(t0).Seconds()
	mu.Lock()
	_ = json.NewEncoder(os.Stdout).Encode(&sum)
	mu.Unlock()
	os.Exit(0)
}

// TestSMPStress sends batches of Sets and Gets of LFT blocks over routes
// of one to four hops at 4, 8 and 16 in flight through the simulator:
// every SMP is answered, each with its own block's data (a TID matched
// to the wrong SMP reads another block). The first try's timeout is a
// share of the test's deadline, so a busy machine slows it without
// failing it. NUESM_SMP_STRESS=<SMPs per run> (and
// NUESM_SMP_STRESS_TIMEOUT_MS, default 200) measures instead: it logs the
// failures per 1,000 SMPs, timeouts and late answers, with the TIDs in
// trace files, and fails only on wrong data.
func TestSMPStress(t *testing.T) {
	ibtest.Require(t, "ibsim")
	n, _ := strconv.Atoi(os.Getenv("NUESM_SMP_STRESS"))
	measure := n > 0
	timeoutMS := os.Getenv("NUESM_SMP_STRESS_TIMEOUT_MS")
	if !measure {
		n, timeoutMS = 2000, strconv.FormatInt(max(200, ibtest.Budget(t).Milliseconds()/40), 10)
	} else if timeoutMS == "" {
		timeoutMS = "200"
	}
	net := filepath.Join(t.TempDir(), "net")
	if err := os.WriteFile(net, []byte(chainNet), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := ibtest.StartSim(t, net, ibtest.SimConfig{})
	dir := t.TempDir()
	if measure {
		dir = os.TempDir()
	}
	for _, par := range []int{4, 8, 16} {
		trace := filepath.Join(dir, fmt.Sprintf("smpstress-%d-%d.trace", os.Getpid(), par))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(sim.Env(), envStress+"=1", envStress+"_PAR="+strconv.Itoa(par), envStress+"_N="+strconv.Itoa(n),
			envStress+"_TIMEOUT_MS="+timeoutMS, envStress+"_RETRIES=3", envStress+"_TRACE="+trace)
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%d in flight: %v %s", par, err, out)
		}
		var s stressSummary
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("%d in flight: %q: %v", par, out, err)
		}
		t.Logf("%2d in flight: %d SMPs in %.1fs, %d failed (%.2f per 1000), %d sends, %d timeouts, %d late answers; errors %v",
			par, s.SMPs, s.Seconds, s.Failed, 1000*float64(s.Failed)/float64(s.SMPs), s.Sends, s.Timeouts, s.Late, s.Errors)
		if measure {
			t.Logf("trace of the sends and answers (TIDs): %s", trace)
		}
		for e, k := range s.Errors {
			if !measure || strings.Contains(e, "other data") {
				t.Errorf("%d in flight: %d SMPs failed: %s", par, k, e)
			}
		}
	}
	if t.Failed() {
		t.Logf("ibsim log tail:\n%s", tailLines(sim.Log(), 10))
	}
}

func tailLines(s string, n int) string {
	b := []byte(s)
	for i, k := len(b)-1, 0; i >= 0; i-- {
		if b[i] == '\n' {
			if k++; k > n {
				return string(b[i+1:])
			}
		}
	}
	return s
}
