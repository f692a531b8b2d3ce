// Package tour runs svclab's guided walk-throughs: it brings up a lab,
// applies a workload, sends traffic, and prints — hop by hop, in plain
// English — the real output of the commands a seed article uses, with one
// line per hop saying what the kernel did. A tour deletes its lab at the
// end (unless asked to keep it) and also when interrupted. Output is
// coloured on a terminal unless NO_COLOR is set (https://no-color.org).
package tour
