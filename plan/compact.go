package plan

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// compact merges adjacent write steps of a stage's plan (no barrier
// between them) while Verify still proves the stage safe: every state of
// the merged step, and every packet in flight across it, is checked as
// for any step. Fewer steps mean fewer round trips to a subnet manager
// that applies each step as a whole (a heavy sweep per step for OpenSM).
// Merges are tried front to back; the result is deterministic.
func compact(ctx context.Context, g *fabric.Graph, st Stage, opt Options) (Stage, error) {
	p := st.Plan
	for i := 0; i+1 < len(p.Steps); {
		a, b := &p.Steps[i], &p.Steps[i+1]
		if a.Kind != Write || b.Kind != Write || len(a.SL2VL)+len(b.SL2VL) > 0 {
			i++
			continue
		}
		m := *p
		m.Steps = append(append(append([]Step(nil), p.Steps[:i]...), merge(a, b)), p.Steps[i+2:]...)
		rep, err := Verify(ctx, g, st.From, st.To, &m, opt)
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if err != nil || !rep.OK() {
			i++
			continue
		}
		p = &m
	}
	st.Plan = p
	return st, nil
}

// merge is one write step doing a's and b's writes.
func merge(a, b *Step) Step {
	s := Step{Kind: Write, Note: fmt.Sprintf("%s + %s", a.Note, b.Note), NewDefault: a.NewDefault}
	s.LFT = append(append(s.LFT, a.LFT...), b.LFT...)
	s.SL = append(append(s.SL, a.SL...), b.SL...)
	return s
}
