package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/atomicfile"
	"github.com/nuesm/nuesm/studies/placement"
	"github.com/nuesm/nuesm/topo"
)

func init() { registerStudy(newPlacementCmd) }

// placementFlags are the flags of nuesm study placement.
type placementFlags struct {
	dims, method, roles, topoOut string
	t, w, hosts, failAll         int
	fail                         []string
	brief, header                bool
}

func newPlacementCmd() *cobra.Command {
	var pf placementFlags
	c := &cobra.Command{
		Use:   "placement --dims 8x8 [--method rqp] [--t 1 | --w W] [--fail X,Y …] [--roles FILE]",
		Short: "Place I/O nodes in a torus with Lee-distance codes (seed 003): loads, histogram, failover, roles file",
		Long: `Place I/O nodes in a torus (seed 003): perfect distance-t (p divides every
radix), relaxed quasi-perfect (rqp), quasi-perfect (qp: the cited scheme of k I/O
nodes in a k×k torus, X·Hᵀ ≡ 0 mod k; qp-cut: rqp's cut code thinned to
disjoint spheres; qp-greedy: a greedy packing), or the base edge plane; with --w, exactly W I/O nodes (base: on the edge plane;
otherwise by the §3.2 deletion/addition procedure). Every compute node is
assigned to a nearest I/O node; the report lists loads, the distance
histogram and, in 2D, a map. --fail fails I/O nodes (coordinates) in order
and reports the failover; --fail-all K fails every combination of K I/O
nodes at once and prints the averages and worst cases. --roles writes the roles file (format: go doc
github.com/nuesm/nuesm/studies/placement); --topo writes the torus as an
ibnetdiscover dump whose CA descriptions carry the roles.`,
		Example: `  nuesm study placement --dims 8x8 --method rqp --t 1
  nuesm study placement --dims 10x10 --w 16
  nuesm study placement --dims 8x8 --fail 4,3 --fail 6,2 --roles roles.txt
  nuesm study placement --dims 4x4x4 --method base --w 9 --topo base.topo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlacement(cmd, pf) },
	}
	fl := c.Flags()
	fl.StringVar(&pf.dims, "dims", "", "torus sizes, e.g. 8x8 or 4x4x4 (required)")
	fl.StringVar(&pf.method, "method", "rqp", "perfect, rqp, qp, qp-cut, qp-greedy or base")
	fl.IntVar(&pf.t, "t", 1, "design distance t (perfect, rqp, qp)")
	fl.IntVar(&pf.w, "w", 0, "number of I/O nodes: base plane size, or the §3.2 deletion/addition for the other methods (0: the method's own)")
	fl.StringArrayVar(&pf.fail, "fail", nil, "fail the I/O node at these coordinates (x,y,…), repeatable, applied in order")
	fl.IntVar(&pf.failAll, "fail-all", 0, "fail every combination of this many I/O nodes at once and print one table row of averages and worst cases")
	fl.StringVar(&pf.roles, "roles", "", "write the roles file here (\"-\" for stdout)")
	fl.StringVar(&pf.topoOut, "topo", "", "write the torus (ibnetdiscover dump) with roles in the CA descriptions here")
	fl.IntVar(&pf.hosts, "hosts", 1, "hosts per switch in the --topo dump")
	fl.BoolVar(&pf.brief, "brief", false, "print one Markdown table row (after the failures) instead of the report")
	fl.BoolVar(&pf.header, "header", false, "with --brief, print the table header first")
	return c
}

func runPlacement(cmd *cobra.Command, pf placementFlags) error {
	if pf.dims == "" {
		return usageError(fmt.Errorf("placement: --dims is required, e.g. --dims 8x8"))
	}
	tr, err := placement.ParseDims(pf.dims)
	if err != nil {
		return usageError(err)
	}
	var p *placement.Placement
	switch {
	case pf.w > 0 && pf.method != "base":
		p, err = placement.WithCount(tr, pf.w)
	default:
		p, err = placement.Build(tr, pf.method, pf.t, pf.w)
	}
	if err != nil {
		return usageError(err) // no placement of this method, t and w
	}
	a, err := placement.Assign(p)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if pf.failAll > 0 {
		return placementFailAll(w, a, pf)
	}
	report := func(a *placement.Assignment) error {
		if pf.brief {
			return nil
		}
		return placement.WriteReport(w, a)
	}
	if err := report(a); err != nil {
		return err
	}
	for _, f := range pf.fail {
		node, err := parseNode(tr, f)
		if err != nil {
			return usageError(err)
		}
		b, reg, err := placement.Failover(a, []int{node})
		if err != nil {
			return err
		}
		a = b
		if pf.brief {
			continue
		}
		fmt.Fprintf(w, "\n== failover: I/O node %s fails\n", tr.Label(node))
		if err := placement.WriteRegion(w, tr, reg); err != nil {
			return err
		}
		if err := report(a); err != nil {
			return err
		}
	}
	if pf.brief {
		if pf.header {
			if _, err := io.WriteString(w, placement.BriefHeader); err != nil {
				return err
			}
		}
		if err := placement.WriteBrief(w, a); err != nil {
			return err
		}
	}
	return writePlacementFiles(w, tr, a, pf)
}

// writePlacementFiles writes the roles file (--roles, "-" for w) and the
// torus dump with the roles in its CA descriptions (--topo).
func writePlacementFiles(w io.Writer, tr *placement.Torus, a *placement.Assignment, pf placementFlags) error {
	if pf.roles != "" {
		var buf bytes.Buffer
		if err := placement.WriteRoles(&buf, a); err != nil {
			return err
		}
		var err error
		if pf.roles == "-" {
			_, err = w.Write(buf.Bytes())
		} else {
			err = atomicfile.WriteFile(pf.roles, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }, 0o644)
		}
		if err != nil {
			return err
		}
	}
	if pf.topoOut != "" {
		tp, err := topo.Torus(tr.K, pf.hosts, false)
		if err != nil {
			return err
		}
		if err := placement.DescribeCAs(tp.Fabric, a); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(pf.topoOut, func(w io.Writer) error { return ibnetdiscover.Write(w, tp.Fabric) }, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// placementFailAll prints the --fail-all row.
func placementFailAll(w io.Writer, a *placement.Assignment, pf placementFlags) error {
	if len(pf.fail) > 0 || pf.roles != "" || pf.topoOut != "" {
		return usageError(fmt.Errorf("placement: --fail-all prints a summary; it does not combine with --fail, --roles or --topo"))
	}
	s, err := placement.FailSweep(a, pf.failAll)
	if err != nil {
		return err
	}
	if pf.header {
		if _, err := io.WriteString(w, placement.FailSweepHeader); err != nil {
			return err
		}
	}
	return placement.WriteFailSweep(w, a, s)
}

// parseNode reads "4,3" or "(4,3)" as torus coordinates.
func parseNode(tr *placement.Torus, s string) (int, error) {
	f := strings.Split(strings.Trim(strings.TrimSpace(s), "()"), ",")
	if len(f) != tr.Dims() {
		return 0, fmt.Errorf("placement: --fail %q: want %d coordinates", s, tr.Dims())
	}
	c := make([]int, len(f))
	for i, x := range f {
		v, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || v < 0 || v >= tr.K[i] {
			return 0, fmt.Errorf("placement: --fail %q: coordinate %q, expected 0..%d", s, x, tr.K[i]-1)
		}
		c[i] = v
	}
	return tr.Index(c), nil
}
