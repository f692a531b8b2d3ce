// Package status announces the steps of long work (building the kind node
// image, creating a cluster, preparing the VM) as kind's CLI does
// (sigs.k8s.io/kind pkg/internal/cli/status.go): each step is announced
// when it starts and marked when it ends.
//
// Piped (a file, a CI log), a step is two plain lines:
//
//	$ svclab kind build-image | cat
//	 • kubernetes binaries v1.36.4 ...
//	 ✓ kubernetes binaries v1.36.4 (6m12s): built /var/cache/svclab/...
//
// On a terminal, the running steps share one line that a spinner redraws
// ten times a second with each step's elapsed time, and a step that ends
// leaves its ✓ or ✗ line. Steps may run at once (several goroutines) and
// inside one another: a Printer made on a Printer (New(p)) while one of
// its steps runs indents its own steps' lines, and shares the spinner. What the steps print themselves
// goes through the Printer's Write, which clears the spinner's line first.
package status
