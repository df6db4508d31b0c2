package sm

import (
	"context"
	"io"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// Planner computes the consistent update plan from the published routing
// (old; nil when nothing is published or the fabric changed shape) to the
// new one.
type Planner interface {
	Plan(ctx context.Context, g *fabric.Graph, old, new *lft.Routing) (*PlanResult, error)
}

// PlanResult is an update plan: its summary and its full text (plan.json).
// Write writes Summary.Note as the plan's note, so that the daemon can
// add to it what only it knows (why there were no tables to plan from).
type PlanResult struct {
	Summary PlanSummary
	Write   func(io.Writer) error
}

// PlanSummary is what status and metrics show of a plan.
type PlanSummary struct {
	Steps        int    `json:"steps"`
	Writes       int    `json:"writes"`
	Blocks       int    `json:"blocks"`
	ChangedPairs int64  `json:"changed_pairs"`
	DrainPhases  int    `json:"drain_phases"`
	Verified     bool   `json:"verified"`
	Note         string `json:"note,omitempty"`
}

// JobSource gives the running jobs. Asking (Fetch: squeue, slurmrestd)
// may be slow or hang and runs off the reroute path, bounded by ctx;
// mapping an answer onto a fabric (JobSet.Map) is local and quick, so a
// reroute maps the last answer onto the fabric it routes.
type JobSource interface {
	Fetch(ctx context.Context) (JobSet, error)
}

// JobSet is one answer of a JobSource.
type JobSet interface {
	// Map returns the jobs routing considers (multi-switch ones) on g's
	// terminals, with their statuses in the same order.
	Map(g *fabric.Graph) ([]routing.Job, []JobStatus, error)
}

// QueryJobs asks src and maps the answer onto g.
func QueryJobs(ctx context.Context, src JobSource, g *fabric.Graph) ([]routing.Job, []JobStatus, error) {
	set, err := src.Fetch(ctx)
	if err != nil {
		return nil, nil, err
	}
	return set.Map(g)
}

// Deployer rolls published generations out to the switches (package
// sm/deploy does it through OpenSM).
type Deployer interface {
	// Run works until ctx ends; trigger asks the daemon for a reroute.
	Run(ctx context.Context, trigger func(reason string)) error
	// Publish hands over a published generation and its directory.
	Publish(gen int, dir string)
	// Status is the deployer's part of /status; safe for concurrent use.
	Status() any
	// Deployed is the last generation the switches were proven to hold
	// (0: none); safe for concurrent use.
	Deployed() int
}

// Handoff is a generation handed to the deployer in memory while the
// daemon still plans and publishes it, so the deployer prepares its
// rollout (checks, reading the switches, its own plan and proof) meanwhile
// instead of reading the generation back from disk afterwards. Graph,
// Routing and Fabric are the daemon's and must not be modified.
type Handoff struct {
	Gen     int    // the generation's number once published
	Dir     string // its directory once published
	Graph   *fabric.Graph
	Routing *lft.Routing
	Fabric  []byte // the dump's text, as fabric.topo holds it
	// AssignedLIDs counts the endpoints the dump gave no LID (discovered
	// before OpenSM assigned them), which Graph numbers itself
	// (ibnetdiscover.Loaded.AssignedLIDs): tables OpenSM cannot deliver.
	AssignedLIDs int
	// Published receives one value: nil once every file of the
	// generation is synced and it is current, or why it was not
	// published. Nothing of it may reach the switches before nil.
	Published <-chan error
}

// DeployerHandoff is implemented by deployers that take a generation in
// memory (Handoff) before it is published; Publish still hands over the
// generation at start (from disk).
type DeployerHandoff interface {
	Handoff(h Handoff)
}

// DeployerHealth is implemented by deployers that can say what is wrong
// with the rollout (a stuck or refused rollout, no OpenSM, an unsafe state
// on the switches); /healthz fails with it. "" means healthy.
type DeployerHealth interface {
	Problem() string
}
