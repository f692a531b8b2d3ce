// Package scenarios holds svclab's end-to-end specs (ginkgo v2 + gomega).
// Each scenario creates its own lab with a unique name, drives real TCP
// traffic through it, asserts what the kernel did — the rules as
// iptables-save prints them, their packet counters, the conntrack entries
// read over netlink, the traffic's spread by a chi-square test — and
// deletes its lab afterwards, also when it fails.
//
// Run them with `sudo make test` (or `sudo make test-scenarios`).
package scenarios
