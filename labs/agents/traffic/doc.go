// Package traffic drives real TCP connections, or UDP exchanges, at a
// Service (or any IP:PORT) and says how they were spread over the
// backends.
//
// Run makes N new connections, at most Parallelism at a time. Each sends
// one HTTP/1.1 "GET /hostname", reads exactly Content-Length bytes of
// answer (the backend's pod name, as netexec and agnhost answer it) and then
// the client closes first, so TIME_WAIT and the conntrack entry's final
// state are on the client's side, as in a cluster. Every connection has its
// own timeout and the run has an overall deadline, so a run always ends by
// itself. Failures are classified (refused, timeout, reset, unreachable,
// other) so a test can assert "connection refused" for a Service without
// endpoints; each connection's local ip:port is kept to match conntrack
// entries.
//
// With Options.Protocol "udp" each "connection" is a new UDP socket (a new
// source port, so a new conntrack entry) sending agnhost netexec's
// "hostname" command and reading the answer within the timeout, counted
// per backend the same way (udp.go); Options.SourcePort makes every
// datagram come from one port, as a long-lived UDP client's do.
//
// Report turns a Result into per-backend counts and shares, the expected
// shares (uniform over the backends seen, or over the set the caller
// expects, which also exposes a backend that got nothing) and Pearson's
// chi-square goodness-of-fit p-value (gonum). UniformitySampleSize says how
// many connections a test needs so that a fair split almost never fails it
// and a skewed one almost always does; see stats.go.
package traffic
