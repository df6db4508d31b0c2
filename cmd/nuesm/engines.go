package main

import (
	"strings"

	"github.com/nuesm/nuesm/routing"
)

// engineHelp describes engine chains and their parameters for the help of
// route and serve.
var engineHelp = `Engines: ` + strings.Join(routing.Names(), ", ") + `.
An engine takes parameters after its name, ':' between them, and ','
separates the engines of a chain, tried in order:
--engine nue:partition=locality:share=none,dfsssp,updn. A list value takes
'x' between its items (dor:dims=8x8x4:torus=1x1x0). --param NAME=VALUE sets
a parameter for every engine of the chain that takes it (an engine's own
spec wins). A name no engine of the chain takes, an unknown value, or a
parameter for an engine without parameters is an error before anything is
routed. best's of takes an engine with parameters as its spec in
parentheses, so that parameter sets of one engine compete (quoted for the
shell): --engine 'best:of=(nue:share=switch)+(nue:share=switchlid)'.
Parameters:
` + routing.ParamsHelp()
