package conformance

import "github.com/svclab/svclab/scenarios/conformance/cmdline"

// SpecLabel is one label of the suite's specs (cmdline.SpecLabel).
type SpecLabel = cmdline.SpecLabel

// SpecLabels are every label the suite's specs carry, each once, sorted:
// cmdline.SpecLabels, kept in the command line's package so the CLI can
// name and complete them without linking ginkgo. TestLabelsAreTheSpecs
// keeps the list equal to the labels the specs' Label(…) calls give.
var SpecLabels = cmdline.SpecLabels

// LabelNames are SpecLabels' names, in order.
func LabelNames() []string { return cmdline.LabelNames() }
