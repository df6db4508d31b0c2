package routing

import (
	"fmt"
	"runtime"

	"github.com/nuesm/nuesm/lft"
)

// DefaultMaxVLs is the VL limit when Options.MaxVLs is 0: the eight data
// VLs most InfiniBand switches offer.
const DefaultMaxVLs = 8

// Options configure an engine run. The zero value is valid and means the
// defaults.
type Options struct {
	// MaxVLs is the number of data VLs the routing may use, 1..15
	// (0 = DefaultMaxVLs).
	MaxVLs int
	// Seed drives every random choice (ties, partitions); equal seeds give
	// equal routings.
	Seed uint64
	// Root selects the root switch of engines that need one (Up*/Down*,
	// fat-tree): a node GUID ("0x0002c90000000001") or a node description.
	// Empty lets the engine choose.
	Root string
	// Workers bounds the goroutines an engine uses (0 = GOMAXPROCS; a
	// chain routes and verifies small fabrics on one, see SmallTables).
	// Results never depend on it.
	Workers int
	// Progress, when set, is called now and then with the units done and
	// the total (destinations, layers…); it must be cheap and safe for
	// concurrent calls.
	Progress func(done, total int)
	// Phase, when set, is called as a chain moves on, with "routing E"
	// and "verifying E" for each engine E it tries.
	Phase func(name string)
	// Jobs are the running multi-switch jobs for scheduling-aware routing
	// (SAR, seed 001 §3). A terminal belongs to at most one job (the first
	// that lists it).
	Jobs []Job
	// SAR asks engines that support it (nue, dfsssp) to route the
	// destinations inside Jobs first and to count only intra-job paths
	// when balancing. The sar-* engines set it; without it engines ignore
	// Jobs.
	SAR bool
	// KeepState makes RouteChain keep the verifier's State of the
	// accepted routing (Result.State), from which a repair of it is
	// verified incrementally (cdg.State.Verify); the verification counts
	// dependencies per destination, which costs more than Verify alone.
	KeepState bool
}

// Job is one running job: the terminals (indices into fabric.Graph.Terms)
// of its nodes.
type Job struct {
	ID    string
	Terms []int32
}

// JobOf returns, per terminal of a graph with n terminals, the index of
// the first job listing it, or -1.
func JobOf(jobs []Job, n int) []int32 {
	of := make([]int32, n)
	for i := range of {
		of[i] = -1
	}
	for j, job := range jobs {
		for _, t := range job.Terms {
			if t >= 0 && int(t) < n && of[t] < 0 {
				of[t] = int32(j)
			}
		}
	}
	return of
}

// Validate rejects out-of-range values.
func (o Options) Validate() error {
	if o.MaxVLs < 0 || o.MaxVLs > lft.MaxVLs {
		return fmt.Errorf("routing: max VLs %d, expected 1..%d", o.MaxVLs, lft.MaxVLs)
	}
	if o.Workers < 0 {
		return fmt.Errorf("routing: %d workers, expected >= 0", o.Workers)
	}
	return nil
}

// WithDefaults returns o with zero values replaced by defaults.
func (o Options) WithDefaults() Options {
	if o.MaxVLs == 0 {
		o.MaxVLs = DefaultMaxVLs
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}
