// Package report holds what `svclab bench dataplane` measures, without
// touching the kernel: the result types, the connect-latency statistics
// (gonum's empirical quantiles), and the three renderings of a result — a
// text table, JSON, and an SVG plot of programming time and p99 connect
// latency against the number of Services, one line per proxy mode. The
// runner that fills a Result lives in package bench.
package report
