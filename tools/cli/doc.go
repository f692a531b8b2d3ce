// Package cli is svclab's command line: a thin cobra layer, one file per
// verb, over the labs, proxy and tools packages.
package cli
