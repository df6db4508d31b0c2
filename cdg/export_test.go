package cdg

import "slices"

// IncrementalUpdates counts the incremental verifications of State.Verify.
var IncrementalUpdates = &incrementalUpdates

// MemosTaken counts the verifications that took RepairBase's counts.
var MemosTaken = &memosTaken

// CheckSubtract reports whether subtractTrees and subtractWalk take the
// same counts out of st's for the first half of its destinations, and
// whether both leave none once every destination is out (ok is false
// when subtractTrees does not apply to st).
func CheckSubtract(st *State) (same, empty, ok bool) {
	if !st.treesOnly() {
		return false, false, false
	}
	var lids []int
	for d := 1; d < len(st.dmask); d++ {
		if sw, term := st.v.g.Owner(d); sw >= 0 || term >= 0 {
			lids = append(lids, d)
		}
	}
	half, rest := lids[:len(lids)/2], lids[len(lids)/2:]
	k1, k2 := st.k.clone(), st.k.clone()
	if !st.subtractTrees(k1, half) || !st.subtractWalk(k2, half) {
		return false, false, true
	}
	same = slices.Equal(k1.cnt, k2.cnt) && slices.Equal(k1.live, k2.live) && slices.Equal(k1.perVL, k2.perVL)
	if !st.subtractTrees(k1, rest) || !st.subtractWalk(k2, rest) {
		return same, false, true
	}
	empty = !slices.ContainsFunc(k1.cnt, func(n uint16) bool { return n != 0 }) && !slices.ContainsFunc(k1.live, func(w uint64) bool { return w != 0 }) &&
		slices.Equal(k1.cnt, k2.cnt) && slices.Equal(k1.live, k2.live)
	return same, empty, true
}
