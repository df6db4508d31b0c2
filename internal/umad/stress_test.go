package umad

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

func stressOps(n int) []Op {
	ops := make([]Op, n)
	for i := range ops {
		path, block := chainPaths[i%len(chainPaths)], uint32(i/len(chainPaths)%8)
		if i%2 == 0 {
			var blk [DataSize]byte
			for k := range blk {
				blk[k] = uint8((i + k) % 8)
			}
			ops[i] = SetOp(AttrLinearForwardTable, block, path, blk)
		} else {
			ops[i] = GetOp(AttrLinearForwardTable, block, path)
		}
	}
	return ops
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
	ops := stressOps(4 * par)
	for sum.SMPs < total {
		for _, r := range runBatch(context.Background(), ops, do, par) {
			sum.SMPs++
			if r.Err != "" {
				mu.Lock()
				sum.Failed++
				sum.Errors[r.Err]++
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

// TestSMPStress (NUESM_SMP_STRESS=<SMPs per run>) sends that many SMPs
// at 4, 8 and 16 in flight through the simulator and logs the failures
// per 1,000 SMPs, late answers and timeouts (the TIDs in the trace files
// it names).
func TestSMPStress(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("NUESM_SMP_STRESS"))
	if n <= 0 {
		t.Skip("NUESM_SMP_STRESS=<SMPs per run> runs the SMP stress loop")
	}
	ibtest.Require(t, "ibsim")
	net := filepath.Join(t.TempDir(), "net")
	if err := os.WriteFile(net, []byte(chainNet), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := ibtest.StartSim(t, net, ibtest.SimConfig{})
	timeoutMS := os.Getenv("NUESM_SMP_STRESS_TIMEOUT_MS")
	if timeoutMS == "" {
		timeoutMS = "200"
	}
	for _, par := range []int{4, 8, 16} {
		trace := filepath.Join(os.TempDir(), fmt.Sprintf("smpstress-%d-%d.trace", os.Getpid(), par))
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
		t.Logf("%2d in flight: %d SMPs in %.1fs, %d failed (%.2f per 1000), %d sends, %d timeouts, %d late answers; trace %s; errors %v",
			par, s.SMPs, s.Seconds, s.Failed, 1000*float64(s.Failed)/float64(s.SMPs), s.Sends, s.Timeouts, s.Late, trace, s.Errors)
	}
	t.Logf("ibsim log tail:\n%s", tailLines(sim.Log(), 10))
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
