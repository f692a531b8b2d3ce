// Package report holds what `svclab bench dataplane` measures, without
// touching the kernel: the result types, the connect-latency statistics
// (gonum's empirical quantiles), and the three renderings of a result — a
// text table, JSON, and an SVG plot of programming time and p99 connect
// latency against the number of Services, one line per proxy mode. The
// runner that fills a Result lives in package bench.
//
// `svclab bench traffic`'s result (TrafficResult: connections per second,
// connect times and the client's CPU, each as a Spread over repetitions),
// its table and its JSON are here too (traffic*.go).
package report
