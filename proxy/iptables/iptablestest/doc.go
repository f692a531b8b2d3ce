// Package iptablestest holds test doubles for proxy/iptables:
//
//   - ParseRule and ParseSave read iptables rules and iptables-save output
//     into a Dump (parse.go);
//   - FakeRunner is an in-memory kernel.Runner that applies
//     iptables-restore payloads with the kernel's checks and keeps a Dump
//     (fake.go). Upstream: pkg/util/iptables/testing.FakeIPTables;
//   - Tracer walks a packet through a Dump's rules and tells where it ends
//     up (trace.go). Upstream: the iptablesTracer of
//     pkg/proxy/iptables/proxier_test.go (tracePacket, runPacketFlowTests).
package iptablestest
