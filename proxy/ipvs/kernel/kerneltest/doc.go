// Package kerneltest holds Fake, an in-memory kernel.Interface for unit
// tests of the IPVS mode. It refuses what the kernel refuses (a real
// server for a missing virtual server, a second service with the same
// address, an unknown scheduler, an entry for a missing ipset, an address
// on a missing device...) and records every call that changes state, in
// the words of the equivalent command, so tests can check that a sync did
// only what was needed. Upstream: pkg/proxy/ipvs/util/testing,
// pkg/proxy/ipvs/ipset/testing and pkg/proxy/ipvs/testing.
package kerneltest
