package plan

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/lft"
)

// FuzzVerify feeds arbitrary plans for the ring reroute to Verify: any
// steps, writes, SL and SL2VL changes, pauses. It must never panic, and a
// plan it calls safe must end at the new tables.
func FuzzVerify(f *testing.F) {
	g, old, new := ringReroute(f)
	f.Add([]byte{0, 1, 1, 2, 3, 0})
	f.Add([]byte{2, 0, 1, 0, 0, 0, 3, 0, 1, 0, 0, 0})
	f.Add([]byte{4, 0, 2, 0, 5, 0, 5, 99, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Plan
		cur := func() *Step {
			if len(p.Steps) == 0 {
				p.Steps = append(p.Steps, Step{Kind: Write})
			}
			return &p.Steps[len(p.Steps)-1]
		}
		for i := 0; i+6 <= len(data) && len(p.Steps) < 12; i += 6 {
			b := data[i : i+6]
			sw, lid := int32(int8(b[1])), int32(b[2])
			switch b[0] % 8 {
			case 0, 1:
				s := cur()
				s.LFT = append(s.LFT, LFTWrite{Switch: sw, LID: lid, Old: old.Port(max(0, min(sw, 5)), int(lid)), New: b[3] % 6})
			case 2:
				p.Steps = append(p.Steps, Step{Kind: StepKind(b[3] % 5), Paused: []Paused{{DLID: lid, Sources: []int32{sw}}}})
			case 3:
				p.Steps = append(p.Steps, Step{Kind: Resume, Paused: []Paused{{DLID: lid, Sources: []int32{sw}}}})
			case 4:
				s := cur()
				s.SL = append(s.SL, lft.SLChange{DLID: int(lid), Src: sw, SLID: int(b[4]), New: b[3]})
			case 5:
				s := cur()
				t := lft.NewPortSL2VL(int(b[4]%5), lft.IdentitySL2VL())
				s.SL2VL = append(s.SL2VL, lft.SL2VLDelta{Switch: sw, Entries: 1, Table: t})
				s.NewDefault[b[3]%16] = b[5] % 16
			case 6:
				p.Steps = append(p.Steps, Step{Kind: Barrier})
			default:
				p.Steps = append(p.Steps, Step{Kind: Write})
			}
		}
		rep, err := Verify(context.Background(), g, old, new, &p, Options{MaxVLs: 1 + int(len(data)%3), Workers: 1})
		if rep == nil {
			t.Fatalf("no report: %v", err)
		}
		if err == nil && rep.OK() && equivalent(g, index(g, old, &p).final, new) != "" {
			t.Fatal("a plan that does not reach the new tables verified")
		}
	})
}
