// Package ibnetdiscover reads and writes the topology dumps of
// infiniband-diags' ibnetdiscover (FORMATS.md §1), the project's way in
// from real fabrics, and writes the variant that ibsim loads as its net
// file.
//
// Parse and ParseFile read a dump into a fabric.Fabric. They take tabs or
// spaces, the node kinds Switch, Ca, Hca and Rt, the id lines (vendid=,
// devid=, sysimgguid= with its chassis comment, switchguid=0x…(…) with its
// chassis slot comment, caguid=, rtguid=), switch lines with or without the
// "base|enhanced port 0 lid L lmc M" part, switch and CA port lines with
// [ext N] ports, peer port GUIDs, peer LIDs, width and speed and the text
// after them (s=… w=… v=…, e=…, slot N, (scp)), the grouping lines of
// "ibnetdiscover -g", comment lines and blank or whitespace-only lines.
// Every cable is described twice, once from each end; Parse connects it
// only when both descriptions agree and reports every disagreement as an
// error at file:line (see Parse for what is a warning and what an error).
// It keeps everything a round trip needs: ids, descriptions, LIDs and
// LMCs, port GUIDs, Port.Ext and Port.Info, Node.Annot, the chassis
// headings and the header comment lines.
//
// LIDs: Parse keeps the dump's LIDs (switch port 0 holds the switch LID and
// LMC, each CA/router port its own) and never assigns any; fabrics from
// generated dumps have LID 0 everywhere, and callers that need LIDs call
// Result.Fabric.AssignLIDs(lmc).
//
// Damaged input says what it is, in one located error: a dump cut short
// (ErrTruncated: "truncated at line N", whether the cut fell inside a line,
// inside a node block or before the node blocks its cables lead to), and
// input that is no dump at all (ErrNotDump: binary or compressed data,
// text without a node block). Every file read is bounded, so that a
// named pipe, /dev/zero or a huge file gives an error instead of a hang or
// an exhausted memory: ReadFileLimited and ParseFileLimited (the daemon's)
// take regular files only; ReadDumpFile, ParseFile and LoadFile (the
// command-line tools') also read a named pipe, up to the limit, and fail
// at once on one that nothing writes to; LimitReader bounds a stream.
//
// Write and WriteFile write a fabric back in the same format, nodes in
// fabric order, so that Parse(Write(f)) equals f for every parsed f.
// WriteIBSim writes the dialect ibsim needs (see its documentation for the
// quirks found by experiment with ibsim 0.10).
//
// Nothing here keeps global state; a Result and its fabric belong to the
// caller.
package ibnetdiscover
