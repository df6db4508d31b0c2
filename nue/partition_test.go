package nue

import (
	"fmt"
	"testing"
)

// TestSpreadOrder: the terminal LIDs of a layer go switch by switch in the
// bit-reversed order of the switches' ranks, a switch's LIDs together in
// LID order, the switch LIDs last as they came.
func TestSpreadOrder(t *testing.T) {
	var ds []dest
	lid := int32(1)
	for sw := int32(0); sw < 6; sw++ { // switches 0..5, rank = index
		for i := 0; i < 2; i++ {
			ds = append(ds, dest{lid: lid, sw: sw, term: true})
			lid++
		}
	}
	ds = append(ds, dest{lid: 90, sw: 3, phase: 2}, dest{lid: 91, sw: 0, phase: 2})
	spreadOrder(ds, 6)
	// 3 bits: ranks 0..5 reversed are 0, 4, 2, 6, 1, 5, so the switches
	// go 0, 4, 2, 1, 5, 3.
	var got []int32
	for _, d := range ds {
		got = append(got, d.lid)
	}
	want := []int32{1, 2, 9, 10, 5, 6, 3, 4, 11, 12, 7, 8, 90, 91}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestGroupBySwitch: which LIDs share a search.
func TestGroupBySwitch(t *testing.T) {
	ds := []dest{
		{lid: 10, sw: 3, port: 1, term: true, job: -1},
		{lid: 11, sw: 3, port: 1, term: true, job: -1, off: 1}, // LMC offset 1: a search of its own
		{lid: 12, sw: 3, port: 2, term: true, job: -1},         // shares 10's
		{lid: 13, sw: 3, port: 3, term: true, job: 0},          // another job
		{lid: 14, sw: 4, port: 1, term: true, job: -1},
		{lid: 15, sw: 3, port: 4, term: true, job: -1, phase: 1}, // another phase
		{lid: 1, sw: 3, job: -1, phase: 2},                       // switch 3's LID joins 10's
		{lid: 2, sw: 5, job: -1, phase: 2},                       // switch 5 has no terminal here
	}
	got := groupBySwitch(ds, true)
	var leads []int32
	for _, d := range got {
		leads = append(leads, d.lid)
	}
	if fmt.Sprint(leads) != "[10 11 13 14 15 2]" {
		t.Fatalf("leaders %v, want [10 11 13 14 15 2]", leads)
	}
	if want := []member{{12, 2, true}, {1, 0, false}}; fmt.Sprint(got[0].also) != fmt.Sprint(want) {
		t.Errorf("10 shares with %v, want %v", got[0].also, want)
	}
	for _, d := range got[1:] {
		if len(d.also) != 0 {
			t.Errorf("%d shares with %v", d.lid, d.also)
		}
	}
	// share=switchlid: terminal LIDs alone; only the switch's LID joins.
	got = groupBySwitch(ds, false)
	leads = leads[:0]
	for _, d := range got {
		leads = append(leads, d.lid)
	}
	if fmt.Sprint(leads) != "[10 11 12 13 14 15 2]" {
		t.Fatalf("switchlid: leaders %v, want [10 11 12 13 14 15 2]", leads)
	}
	if want := []member{{1, 0, false}}; fmt.Sprint(got[0].also) != fmt.Sprint(want) {
		t.Errorf("switchlid: 10 shares with %v, want %v", got[0].also, want)
	}
	for _, d := range got[1:] {
		if len(d.also) != 0 {
			t.Errorf("switchlid: %d shares with %v", d.lid, d.also)
		}
	}
}
